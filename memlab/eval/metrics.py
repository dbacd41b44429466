"""Retrieval metrics over evidence-span coverage (``SpanHits``), per query.

Every metric reads the padded arrays of a ``SpanHits`` (``covers [Q, K, S]``,
``span_valid``, ``grades``, ``subtopic``, ``pos_valid``) and returns a float64
array ``[Q]``, one value per scored query, in ``h.qids`` order. Positions are
0-based; a cutoff ``k`` larger than the ranking simply sees empty positions.
A position is *relevant* when its result covers at least one evidence span.

Spans, not results, are the unit of gain, so a result that only repeats
evidence already seen earns nothing, and the numbers do not depend on how the
memory files were chunked. With exactly one result per span (and vice versa)
recall, precision, MRR, success and nDCG equal the standard document-level
metrics of ranx / trec_eval (tested).

A row without any evidence span (only present with ``include_no_evidence``)
scores 0 on every metric, as in ranx.

Two entry points give identical numbers: ``evaluate(run, evidence, metrics)``
on a run DataFrame and ``evaluate_hits(hits, metrics)`` on arrays (sweeps).

Size: one module because every metric reads the same ``SpanHits`` arrays and
is listed in the registry beside it (``_KINDS``, ``_FUNCS``, ``METRIC_NAMES``,
``parse_metric``) that both entry points use: a new metric is one function and
its registry entries, here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memlab.eval.relevance import NEVER, SpanHits, span_coverage

__all__ = [
    "METRIC_NAMES",
    "MetricSpec",
    "alpha_ndcg",
    "budget_recall",
    "evaluate",
    "evaluate_hits",
    "exact_mean",
    "mrr",
    "ndcg",
    "ndcg_jk",
    "parse_metric",
    "precision",
    "recall",
    "recall_all",
    "recall_any",
    "subtopic_recall",
]


def exact_mean(values: Iterable[float]) -> float:
    """The mean of per-query values as fsum(v) / n: the correctly rounded sum
    (``math.fsum``) over the count, so it depends only on the values, never on
    their order or grouping (numpy's pairwise sum and pandas' group means differ
    from it, and from each other, in the last bit). Every table of means in the
    lab (experiments, sweeps) uses it, so one system scored twice gives one number.
    No values → NaN; a NaN value gives NaN."""
    v = [float(x) for x in values]
    return math.fsum(v) / len(v) if v else math.nan


def _check_k(k: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    return int(k)


def _discount(n: int) -> np.ndarray:
    """``1 / log2(i + 2)`` for 0-based positions ``i < n``."""
    return 1.0 / np.log2(np.arange(n, dtype=np.float64) + 2.0)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _n_spans(h: SpanHits) -> np.ndarray:
    return h.n_spans


def recall(h: SpanHits, k: int) -> np.ndarray:
    """Span recall at k (LoCoMo's R@k).

    ``recall = |{spans covered by a result at position < k}| / |spans|``.
    A span covered several times counts once; 0 for a query without spans.
    """
    k = _check_k(k)
    return _safe_div((h.first_cover < k).sum(axis=1), _n_spans(h))


def recall_any(h: SpanHits, k: int) -> np.ndarray:
    """Success at k (hit rate): 1 if any result at position < k covers a span, else 0."""
    k = _check_k(k)
    return (h.first_cover.min(axis=1, initial=k) < k).astype(np.float64)


def recall_all(h: SpanHits, k: int) -> np.ndarray:
    """1 if every evidence span is covered by the top k, else 0 (0 for a query without spans)."""
    k = _check_k(k)
    n = _n_spans(h)
    return (((h.first_cover < k).sum(axis=1) == n) & (n > 0)).astype(np.float64)


def precision(h: SpanHits, k: int) -> np.ndarray:
    """Precision at k: ``|{positions i < k whose result covers >= 1 span}| / k``.

    The denominator is k even when fewer than k results were returned (ranx
    and trec_eval ``P_k`` convention). Two results covering the same span both
    count as relevant here: precision measures the reading effort, not gain.
    """
    k = _check_k(k)
    return h.relevant[:, :k].sum(axis=1) / float(k)


def mrr(h: SpanHits, k: int | None = None) -> np.ndarray:
    """Reciprocal rank: ``1 / (i + 1)`` for the first relevant 0-based position ``i``
    (``i < k`` when k is given), 0 when no result in range covers a span."""
    limit = h.depth if k is None else _check_k(k)
    # The first relevant position is the earliest first cover of any span.
    first = h.first_cover.min(axis=1, initial=NEVER)
    return np.where(first < limit, 1.0 / (first + 1.0), 0.0)


def ndcg(h: SpanHits, k: int) -> np.ndarray:
    """Span nDCG at k (linear gain, Järvelin & Kekäläinen).

    ``gain_i = Σ grade_s`` over spans s covered for the FIRST time at position
    i; ``DCG@k = Σ_{i<k} gain_i / log2(i + 2)``. The ideal DCG places the
    query's span grades, sorted descending, one per position, cut at k.
    ``nDCG = DCG / IDCG`` (0 when IDCG = 0). With one result per span this is
    ranx's ``ndcg@k``. A single result covering several spans can beat the
    one-span-per-position ideal; the score is then clipped to 1 so that nDCG
    stays in [0, 1] and means across chunkers stay comparable.
    """
    k = _check_k(k)
    first = h.first_cover
    disc = _discount(min(k, h.depth) + 1)
    disc[-1] = 0.0  # "not covered within k" lands here
    dcg = (h.grades * disc[np.minimum(first, len(disc) - 1)]).sum(axis=1)
    ideal = -np.sort(-h.grades, axis=1)[:, :k]
    idcg = ideal @ _discount(ideal.shape[1])
    return np.minimum(_safe_div(dcg, idcg), 1.0)


def _discount_jk(n: int) -> np.ndarray:
    """Järvelin & Kekäläinen's original discount with log base 2, for 0-based positions
    ``i < n``: 1 at ``i = 0``, ``1 / log2(i + 1)`` after (so position 1, rank 2, is 1 too)."""
    out = np.ones(n, dtype=np.float64)
    if n > 1:
        out[1:] = 1.0 / np.log2(np.arange(2, n + 1, dtype=np.float64))
    return out


def ndcg_jk(h: SpanHits, k: int) -> np.ndarray:
    """Span nDCG at k with the original DCG of Järvelin & Kekäläinen (2002, log base 2),
    as RealMem's scorer (``eval/compute_auto_metrics_for_realmem.py``) and LongMemEval's
    compute it:

    ``DCG@k = gain_1 + Σ_{r=2..k} gain_r / log2(r)`` (1-based ranks r: ranks 1 and 2 are
    both undiscounted), ``gain_r = Σ grade_s`` over the spans s first covered at rank r;
    ``IDCG@k`` the same sum over the query's span grades sorted descending, one per rank,
    cut at k — for binary grades ``min(|spans|, k)`` ones; ``nDCG = DCG / IDCG`` (0 when
    IDCG = 0), clipped to 1 as `ndcg`. With one result per relevant unit and grade 1 (the
    scorer's binary relevance over a ranking without repeats) it is the scorer's
    ``ndcg(rankings, correct_docs, corpus_ids, k)`` exactly (tested against a re-typed
    copy). It differs from `ndcg` only in the discount (`ndcg`: ``1 / log2(r + 1)``).
    """
    k = _check_k(k)
    first = h.first_cover
    disc = _discount_jk(min(k, h.depth) + 1)
    disc[-1] = 0.0  # "not covered within k" lands here
    dcg = (h.grades * disc[np.minimum(first, len(disc) - 1)]).sum(axis=1)
    ideal = -np.sort(-h.grades, axis=1)[:, :k]
    idcg = ideal @ _discount_jk(ideal.shape[1])
    return np.minimum(_safe_div(dcg, idcg), 1.0)


def alpha_ndcg(h: SpanHits, k: int, alpha: float = 0.5) -> np.ndarray:
    """α-nDCG at k over subtopics (Clarke et al. 2008), grades ignored.

    A position covers subtopic t when its result covers any span of t.
    ``gain_i = Σ_t covers(i, t) · (1 − α)^{r_{t,i}}`` where ``r_{t,i}`` is the
    number of earlier positions that covered t; ``DCG = Σ_{i<k} gain_i /
    log2(i + 2)``. Ideal: the greedy ranking of virtual results holding one
    evidence span each — first one new subtopic per position, then second
    spans of subtopics (gain 1 − α), and so on; i.e. the multiset
    ``{(1 − α)^j : j = 0..m_t − 1 for each subtopic t with m_t spans}``
    sorted descending, cut at k. With one subtopic per span and one result per
    span this is the standard α-nDCG with its greedy ideal. α ∈ [0, 1]; 0 when
    the query has no spans. Clipped to 1 (a result covering several subtopics
    can beat the ideal).
    """
    k = _check_k(k)
    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    n_s = h.span_valid.shape[1]
    # decay[m] = gain of the m-th cover (1-based) of a subtopic; decay[0] = 0 = not covered.
    decay = np.zeros(max(h.depth, n_s) + 1, dtype=np.float64)
    decay[1:] = (1.0 - alpha) ** np.arange(len(decay) - 1, dtype=np.float64)
    distinct = bool((h.n_subtopics == _n_spans(h)).all())
    if distinct:
        # Every subtopic has one span: span coverage is subtopic coverage.
        tcov = h.covers[:, :k]
    else:
        onehot = h.subtopic_onehot.astype(np.float32)
        tcov = (h.covers[:, :k].astype(np.float32) @ onehot) > 0
    nth_cover = np.cumsum(tcov, axis=1, dtype=np.intp) * tcov
    gain = decay[nth_cover].sum(axis=2)
    dcg = gain @ _discount(gain.shape[1])
    if distinct:
        cum_disc = np.concatenate([[0.0], np.cumsum(_discount(min(k, n_s)))])
        idcg = cum_disc[np.minimum(_n_spans(h), k)]
    else:
        # j + 1 = this span's 1-based index among the query's spans of its subtopic.
        sub = h.subtopic
        same = (sub[:, :, None] == sub[:, None, :]) & h.span_valid[:, None, :]
        nth = (same & np.tri(n_s, n_s, 0, dtype=bool)).sum(axis=2) * h.span_valid
        ideal = -np.sort(-decay[nth], axis=1)[:, :k]
        idcg = ideal @ _discount(ideal.shape[1])
    return np.minimum(_safe_div(dcg, idcg), 1.0)


def subtopic_recall(h: SpanHits, k: int) -> np.ndarray:
    """Subtopic recall at k: ``|{subtopics with a span covered in the top k}| / |subtopics|``.

    Equal to ``recall`` when every span is its own subtopic; 0 without spans.
    """
    k = _check_k(k)
    span_covered = h.first_cover < k
    topic_covered = (span_covered[:, :, None] & h.subtopic_onehot).any(axis=1)
    return _safe_div(topic_covered.sum(axis=1), h.n_subtopics)


def budget_recall(h: SpanHits, token_counts: np.ndarray | None, budget_tokens: float) -> np.ndarray:
    """Span recall of what an agent reads within a token budget.

    Walk the ranking from position 0, reading result i while the cumulative
    token count ``Σ_{j<=i} tokens_j <= budget_tokens``; the result that would
    cross the budget is NOT read, and reading stops there (later, shorter
    results are not read either). ``budget_recall = |spans covered by the
    read results| / |spans|``.

    ``token_counts`` is float ``[Q, K]`` (non-negative, ignored at padded
    positions); ``None`` uses ``h.tokens``.
    """
    if token_counts is None:
        token_counts = h.tokens
    if token_counts is None:
        raise ValueError(
            "budget_recall needs token counts: pass token_counts [Q, K] or a run "
            "with a 'tokens' column"
        )
    budget = float(budget_tokens)
    if not budget >= 0:
        raise ValueError(f"budget_tokens must be >= 0, got {budget_tokens}")
    tokens = np.asarray(token_counts, dtype=np.float64)
    if tokens.shape != h.pos_valid.shape:
        raise ValueError(f"token_counts must have shape {h.pos_valid.shape}, got {tokens.shape}")
    tokens = np.where(h.pos_valid, tokens, 0.0)
    if not np.isfinite(tokens).all() or (tokens < 0).any():
        raise ValueError("token_counts must be finite and >= 0 at every ranked position")
    # Cumulative tokens never decrease, so what is read is a prefix of the ranking.
    n_read = (np.cumsum(tokens, axis=1) <= budget).sum(axis=1)
    return _safe_div((h.first_cover < n_read[:, None]).sum(axis=1), _n_spans(h))


# --- names -------------------------------------------------------------------

# kind -> (needs a cutoff, what the number after "@" means)
_KINDS: dict[str, tuple[bool, str]] = {
    "recall": (True, "k"),
    "recall_any": (True, "k"),
    "recall_all": (True, "k"),
    "precision": (True, "k"),
    "mrr": (False, "k"),
    "ndcg": (True, "k"),
    "ndcg_jk": (True, "k"),
    "alpha_ndcg": (True, "k"),
    "subtopic_recall": (True, "k"),
    "budget_recall": (True, "tokens"),
}
_ALIASES = {"success": "recall_any", "hit": "recall_any", "hit_rate": "recall_any"}
METRIC_NAMES: tuple[str, ...] = (
    "recall@k",
    "recall_any@k",
    "success@k",
    "hit@k",
    "hit_rate@k",
    "recall_all@k",
    "precision@k",
    "mrr",
    "mrr@k",
    "ndcg@k",
    "ndcg_jk@k",
    "alpha_ndcg@k",
    "subtopic_recall@k",
    "budget_recall@T",
)
_NAME_RE = re.compile(r"^([a-z_]+)(?:@(.*))?$")


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name.

    Attributes:
        name: the name as written (used as the result column).
        kind: canonical metric (aliases resolved), e.g. ``"recall_any"``.
        k: the cutoff, or the token budget T for ``budget_recall``; ``None``
            for ``mrr`` without a cutoff.
    """

    name: str
    kind: str
    k: int | None

    def compute(self, h: SpanHits, token_counts: np.ndarray | None = None) -> np.ndarray:
        """Per-query values ``[Q]`` of this metric on ``h`` (``alpha_ndcg`` uses α = 0.5)."""
        if self.kind == "budget_recall":
            return budget_recall(h, token_counts, float(self.k or 0))
        return _FUNCS[self.kind](h, self.k)


_FUNCS: dict[str, Callable[[SpanHits, int | None], np.ndarray]] = {
    "recall": recall,
    "recall_any": recall_any,
    "recall_all": recall_all,
    "precision": precision,
    "mrr": mrr,
    "ndcg": ndcg,
    "ndcg_jk": ndcg_jk,
    "alpha_ndcg": alpha_ndcg,
    "subtopic_recall": subtopic_recall,
}


def parse_metric(name: str | MetricSpec) -> MetricSpec:
    """Parse ``"kind@k"`` into a ``MetricSpec`` (a ``MetricSpec`` is returned unchanged).

    Valid names: see ``METRIC_NAMES`` (case-insensitive). ``k`` must be an
    integer >= 1; ``budget_recall@T`` takes a token budget T >= 1. Raises
    ``ValueError`` naming the valid metrics for an unknown name, and for a
    missing or invalid cutoff.
    """
    if isinstance(name, MetricSpec):
        return name
    if not isinstance(name, str):
        raise ValueError(f"metric names are strings, got {name!r}")
    text = name.strip()
    m = _NAME_RE.match(text.lower())
    kind = _ALIASES.get(m.group(1), m.group(1)) if m else None
    if m is None or kind not in _KINDS:
        raise ValueError(f"unknown metric {name!r}; valid: {', '.join(METRIC_NAMES)}")
    needs_k, what = _KINDS[kind]
    arg = m.group(2)
    if arg is None:
        if needs_k:
            example = "budget_recall@2000" if what == "tokens" else f"{m.group(1)}@10"
            raise ValueError(f"metric {name!r} needs a cutoff, e.g. {example!r}")
        return MetricSpec(text, kind, None)
    try:
        k = int(arg)
    except ValueError:
        raise ValueError(f"cutoff of {name!r} must be an integer, got {arg!r}") from None
    if k < 1:
        label = "token budget" if what == "tokens" else "k"
        raise ValueError(f"{label} of {name!r} must be >= 1, got {k}")
    return MetricSpec(text, kind, k)


def evaluate_hits(
    h: SpanHits,
    metrics: Sequence[str | MetricSpec] | str,
    *,
    token_counts: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Compute several metrics on one ``SpanHits``: ``{name: float64 [Q]}`` (the sweep path).

    ``token_counts`` ``[Q, K]`` feeds ``budget_recall`` (default ``h.tokens``).
    All names are parsed before anything is computed.
    """
    if isinstance(metrics, str | MetricSpec):
        metrics = [metrics]
    specs = [parse_metric(m) for m in metrics]
    return {s.name: s.compute(h, token_counts) for s in specs}


def evaluate(
    run: pd.DataFrame,
    evidence: pd.DataFrame,
    metrics: Sequence[str | MetricSpec] | str,
    *,
    token_counts: str | None = None,
    qids: Sequence[str] | None = None,
    include_no_evidence: bool = False,
) -> pd.DataFrame:
    """Per-query metrics of a run DataFrame against evidence spans.

    ``run``: ``qid, rank (0-based), path, start_line, end_line`` (+ anything);
    ``evidence``: e.g. ``Dataset.evidence``. ``token_counts`` names the run
    column with each result's token count (default ``"tokens"``), needed only
    by ``budget_recall``. Returns one row per scored qid (index ``qid``), one
    column per metric (named as given). Queries without evidence spans are
    not rows (so ``.mean()`` excludes them); they are listed in
    ``result.attrs["no_evidence_qids"]``. See ``span_coverage`` for ``qids``
    and ``include_no_evidence``.
    """
    if isinstance(metrics, str | MetricSpec):
        metrics = [metrics]
    specs = [parse_metric(m) for m in metrics]
    h = span_coverage(
        run,
        evidence,
        qids=qids,
        tokens_column=token_counts or "tokens",
        include_no_evidence=include_no_evidence,
    )
    values = evaluate_hits(h, specs)
    out = pd.DataFrame(values, index=pd.Index(h.qids, name="qid"), columns=[s.name for s in specs])
    out.attrs["no_evidence_qids"] = list(h.no_evidence_qids)
    return out
