"""Vectorised sweeps: many settings of one pipeline ranked and scored at once.

The general sweep path scores one setting at a time (``Pipeline.rank`` →
``hits_from_topk`` → ``evaluate_hits``). When the settings of a sweep differ
only in fusion weights, RRF k or the score threshold (``SWEEPABLE``),
everything before fusion — leg scores, normalisations, decay multipliers,
which candidates are valid — is the same for all of them. This module
computes that once and then, for all S settings together:

1. prunes each query's candidates to those that can reach the top K
   (K = max_results) under some setting (``skyline_keep``; only when the
   fused score is monotone in both legs and no decay reorders them);
2. fuses every setting on the pruned [Q, C'] arrays: weighted sum and RRF
   with their operands prepared once (``memlab.stages.legs.fusion_operands``,
   the very function `Pipeline.scores` fuses with, so bit-identical), other
   fusions with the fusion stage's ``fuse_legs``;
3. sorts and selects each setting's Q rows with the selection stage's
   ``select_rows`` (the one `Pipeline.rank` uses: stable order, ties in
   insertion order, ``min_score``, OpenClaw's relaxed keyword fallback, the
   "keyword-only hits fill spare slots" rule);
4. evaluates metrics only for (setting, query) rows whose ranking differs
   from the previous setting's, and copies the rest.

The results are identical, value for value, to the general path (tested in
``tests/test_fastsweep.py``). The fast path asks each system which stages
it runs (``Pipeline.active_stages``) and covers those in ``FAST_STAGES``.
Settings it cannot reproduce — MMR (a greedy per-query loop), the context
stages (a neighbour's score feeds a chunk's), a registered stage, a subclass,
keyword-only or vector-only mode, a grid over any other parameter — go
through the general path; ``fast_path_reason`` says why. That path is not a plain
loop either: the leading score stages on which every setting's declared parameters
agree (``memlab.stages.shared_stages``: every stage before the first whose declared
parameters the grid varies, memlab-best's included) run once and their arrays are
shared (``rank_shared``, path ``"stages"``); the rest run per setting, so each
ranking is the setting's own ``Pipeline.rank`` (the loop is the oracle).

Size: one module because ``sweep_values`` chooses among the paths it holds:
``rank_settings`` (vectorised) and ``loop_settings`` (``rank_shared``) both
give ``score_settings`` one ``SettingsRanking``; ``fast_path_reason`` and
``skyline_keep`` guard ``rank_settings`` and must change with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.eval.metrics import evaluate_hits, parse_metric
from memlab.eval.relevance import SpanHits
from memlab.retrieval.candidates import CandidateSet
from memlab.retrieval.fusion import clamp_weights
from memlab.stages import STAGES, run_stages, shared_stages
from memlab.stages.legs import fuse_legs, fusion_operands, leg_values
from memlab.stages.selection import select_rows

if TYPE_CHECKING:
    from memlab.eval.lab import LabCandidates
    from memlab.pipeline import Pipeline, Ranking

__all__ = [
    "SWEEPABLE",
    "SettingsRanking",
    "fast_path_reason",
    "loop_settings",
    "rank_settings",
    "rank_shared",
    "score_settings",
    "skyline_keep",
    "sweep_values",
]

# The stages the fast path reproduces (``Pipeline.active_stages``); decay is a
# multiplier computed once for all settings.
FAST_STAGES = frozenset({"legs", "normalize", "fusion", "decay", "selection"})
# Parameters that may differ between the settings of one fast sweep.
SWEEPABLE = frozenset({"vector_weight", "text_weight", "rrf_k", "min_score"})
# Fusions whose score is monotone (non-decreasing) in each leg, so that a
# candidate beaten on both legs by K earlier candidates never reaches the top K.
MONOTONE_FUSIONS = frozenset({"wsum", "rrf"})


@dataclass
class SettingsRanking:
    """The selected results of S settings over the Q queries of one CandidateSet.

    ``columns`` [S, Q, K]: candidate columns in result order (−1 = empty slot),
    as ``Pipeline.rank(cs).columns`` of each setting; ``scores`` [S, Q, K]
    final scores (NaN in empty slots); ``selected_by`` [S, Q, K] codes as in
    ``Ranking`` (0 strict, 1 relaxed, 2 keyword fill, −1 empty). ``path`` is
    ``"fast"`` or ``"loop"``; ``reason`` says why the loop was used (the loop pads
    every setting to the largest max_results with −1 / NaN), ``"stages"`` the loop
    with ``shared`` (the leading score stages all settings agree on) run once
    (``rank_shared``); ``width`` / ``kept`` are the candidate columns before / after
    pruning.
    """

    columns: np.ndarray
    scores: np.ndarray
    selected_by: np.ndarray
    path: str
    reason: str | None = None
    width: int = 0
    kept: int = 0
    shared: tuple[str, ...] = ()


def rank_shared(
    cs: CandidateSet, systems: Sequence[Pipeline], progress: bool = False
) -> tuple[list[Ranking], tuple[str, ...]]:
    """``[s.rank(cs) for s in systems]``, with the leading score stages on which every
    system agrees (``memlab.stages.shared_stages``: their declared parameters are equal)
    run once and their arrays shared; returns the rankings and those stages' names.
    The stages after them run per system, as ``Pipeline.rank`` runs them, so each
    ranking equals the system's own (the loop is the oracle: tests/test_fastsweep.py).
    ``progress``: a bar over the systems (on a terminal only)."""
    systems = list(systems)
    if not systems:
        return [], ()
    mode = systems[0].mode(cs)
    shared = shared_stages(systems, mode) if all(s.mode(cs) == mode for s in systems) else ()
    if not shared:
        return [s.rank(cs) for s in systems], ()
    rest = {st.name for st in STAGES if st.name not in shared}
    prefix = run_stages(systems[0], cs, "score", skip=rest)
    iterator: Any = systems
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(systems, desc="sweep", unit="setting", disable=None)
    ranks = [s.rank(cs, run_stages(s, cs, "score", dict(prefix), skip=shared)) for s in iterator]
    return ranks, shared


def fast_path_reason(cs: CandidateSet, systems: Sequence[Pipeline]) -> str | None:
    """Why ``systems`` cannot share one vectorised pass over ``cs`` (None = they can).

    Requirements: at least one system; no subclass with methods of its own;
    hybrid mode (both legs, vectors present); only the stages of
    ``FAST_STAGES`` on (``Pipeline.active_stages``: MMR's greedy per-query
    loop is inherently sequential, the context stages read other candidates'
    scores); every parameter except those in ``SWEEPABLE`` (and ``name``)
    equal across systems.
    """
    if not systems:
        return "no settings"
    if any("subclass" in s.active_stages() for s in systems):
        return "a Pipeline subclass with stages of its own (scored one setting at a time)"
    base = systems[0]
    mode = base.mode(cs)
    if mode != "hybrid":
        return f"{mode}-only mode (the fast path covers hybrid fusion)"
    on = base.active_stages(mode)
    if "mmr" in on:
        return "MMR re-orders each list greedily, one query at a time"
    if base.selection_rule != "openclaw":
        return f"selection_rule {base.selection_rule!r} (the fast path selects as 'openclaw')"
    other = [n for n in on if n not in FAST_STAGES]
    if other:
        return (
            f"stage(s) {', '.join(other)} outside the fast path "
            f"(it covers {', '.join(sorted(FAST_STAGES))}; scored one setting at a time)"
        )
    names = [f.name for f in fields(base) if f.name not in SWEEPABLE and f.name != "name"]
    ref = [getattr(base, k) for k in names]
    for s in systems[1:]:
        diff = [k for k, v in zip(names, ref, strict=True) if getattr(s, k) != v]
        if diff:
            return (
                f"settings differ in {', '.join(diff)} (the fast path sweeps {sorted(SWEEPABLE)})"
            )
    return None


def skyline_keep(
    a: np.ndarray, b: np.ndarray, valid: np.ndarray, has_text: np.ndarray, k: int
) -> np.ndarray:
    """Candidates that can be among the first ``k`` under some monotone fusion: bool [Q, C].

    ``a``, ``b`` [Q, C]: each leg's contribution as a number where larger is
    better (absent = the value the fusion substitutes). Candidate c is
    *beaten* by an earlier column c' < c when ``a[c'] >= a[c]`` and
    ``b[c'] >= b[c]``: for any fusion that is non-decreasing in both legs
    (float rounding is monotone, too) c' scores at least as high, and a tie
    goes to the earlier column, so c' precedes c in the stable order. A
    candidate beaten by k valid candidates never reaches the top k; one
    beaten by k valid keyword-leg candidates never reaches the top k of the
    keyword-leg sub-ranking (OpenClaw's relaxed fallback and keyword fill
    read that sub-ranking). Keep = valid and (beaten by < k, or a keyword-leg
    candidate beaten by < k keyword-leg candidates).
    """
    c = a.shape[1]
    keep = valid.copy()
    if c <= k:
        return keep
    # Column c has only c earlier columns: the first k are always kept.
    tail = slice(k, None)
    earlier = np.arange(c)[:, None] < np.arange(k, c)[None, :]  # earlier[c', j]: c' < j
    beats = (a[:, :, None] >= a[:, None, tail]) & (b[:, :, None] >= b[:, None, tail])
    beats &= earlier & valid[:, :, None]
    n_all = np.count_nonzero(beats, axis=1)
    n_text = np.count_nonzero(beats & has_text[:, :, None], axis=1)
    keep[:, tail] &= (n_all < k) | (has_text[:, tail] & (n_text < k))
    return keep


def _gather(arr: np.ndarray, cols: np.ndarray, fill: Any) -> np.ndarray:
    """arr[q, cols[q, j]] with ``fill`` where cols is −1."""
    safe = np.where(cols >= 0, cols, 0)
    return np.where(cols >= 0, np.take_along_axis(arr, safe, axis=1), fill)


def _pruned_candidates(cs: CandidateSet, cols: np.ndarray) -> CandidateSet:
    """A CandidateSet holding only the given columns of each query (−1 = padding)."""
    return replace(
        cs,
        pos=_gather(cs.pos, cols, -1),
        vec_score=_gather(cs.vec_score, cols, np.nan),
        text_raw=_gather(cs.text_raw, cols, np.nan),
        vec_rank=_gather(cs.vec_rank, cols, -1),
        text_rank=_gather(cs.text_rank, cols, -1),
    )


def _leg_order_values(
    base: Pipeline, st: dict[str, np.ndarray], cs: CandidateSet
) -> tuple[np.ndarray, np.ndarray]:
    """Each leg's contribution to a monotone fusion, larger = better (for ``skyline_keep``)."""
    has_v, has_t = st["has_vec"], st["has_text"]
    if base.fusion == "wsum":
        return leg_values(base, st)
    # rrf: w / (k + rank + 1) falls as the rank grows; an absent leg adds 0.
    return (
        np.where(has_v, -cs.vec_rank.astype(np.float64), -np.inf),
        np.where(has_t, -cs.text_rank.astype(np.float64), -np.inf),
    )


def rank_settings(
    cs: CandidateSet, systems: Sequence[Pipeline], progress: bool = False
) -> SettingsRanking:
    """The rankings of every system over ``cs``: ``Pipeline.rank(cs)`` for each, batched.

    Uses the vectorised path when ``fast_path_reason`` allows it, else ranks
    each system in turn. Either way ``columns[i]`` equals
    ``systems[i].rank(cs).columns`` (and likewise scores and selected_by).
    """
    systems = list(systems)
    reason = fast_path_reason(cs, systems)
    if reason is not None:
        return loop_settings(cs, systems, reason, progress)
    base = systems[0]
    nq, width = len(cs), cs.width
    kmax = base.max_results
    st = base.scores(cs)
    has_v, has_t = st["has_vec"], st["has_text"]
    decayed = "decay" in base.active_stages("hybrid")
    if base.fusion in MONOTONE_FUSIONS and not decayed and width > kmax:
        a, b = _leg_order_values(base, st, cs)
        keep = skyline_keep(a, b, has_v | has_t, has_t, kmax)
    else:
        keep = np.ones((nq, width), dtype=bool)
    # Kept columns, left-aligned in their original order (order is what ties follow).
    n_keep = keep.sum(axis=1)
    kept = int(n_keep.max(initial=0))
    kcols = np.full((nq, kept), -1, dtype=np.int64)
    qi, ci = np.nonzero(keep)
    kcols[qi, np.cumsum(keep, axis=1)[qi, ci] - 1] = ci
    sub = _pruned_candidates(cs, kcols)
    p_has_v = _gather(has_v, kcols, False)
    p_has_t = _gather(has_t, kcols, False)
    p_vec = _gather(st["vec_norm"], kcols, np.nan)
    p_text = _gather(st["text_norm"], kcols, np.nan)
    p_floor = _gather(st["text_floor"], kcols, 0.0)
    p_mult = _gather(np.nan_to_num(st["decay"], nan=1.0), kcols, 1.0)
    valid0 = p_has_v | p_has_t

    n = len(systems)
    columns = np.full((n, nq, kmax), -1, dtype=np.int64)
    scores = np.full((n, nq, kmax), np.nan)
    selected = np.full((n, nq, kmax), -1, dtype=np.int64)
    rows = np.arange(nq)[:, None]
    # wsum / RRF: the operands the weights and k do not change, prepared once; per
    # setting only the weighted combination remains (the fusion stage's own arithmetic).
    ops = None
    if base.fusion in ("wsum", "rrf"):
        ops = fusion_operands(
            base, p_vec, p_text, p_has_v, p_has_t, sub.vec_rank, sub.text_rank, valid0, p_floor
        )
    for i, s in enumerate(systems):
        if ops is not None:
            fused, valid = ops.fuse(s.vector_weight, s.text_weight, s.rrf_k)
        else:
            fused = fuse_legs(
                s, p_vec, p_text, p_has_v, p_has_t, sub.vec_rank, sub.text_rank, valid0, p_floor
            )
            valid = valid0 & ~np.isnan(fused)
            fused = np.where(valid, fused, np.nan)
        final = fused * p_mult if decayed else fused
        thr = None
        if base.relaxed_fallback:
            thr = min(s.min_score, clamp_weights(s.vector_weight, s.text_weight)[1])
        c, sc, sel = select_rows(
            final,
            valid,
            p_has_t,
            min_score=s.min_score,
            max_results=kmax,
            relaxed_threshold=thr,
            fill_keyword_only=base.fill_keyword_only,
        )
        if kept:
            columns[i] = np.where(c >= 0, kcols[rows, np.maximum(c, 0)], -1)
        scores[i], selected[i] = sc, sel
    return SettingsRanking(columns, scores, selected, "fast", None, width, kept)


def loop_settings(
    cs: CandidateSet, systems: Sequence[Pipeline], reason: str, progress: bool = False
) -> SettingsRanking:
    """The rankings of ``systems`` over ``cs`` one system at a time (``rank_shared``: the
    leading stages they agree on run once), padded to the largest max_results;
    ``reason``: why the vectorised path was not taken (``fast_path_reason``)."""
    ranks, shared = rank_shared(cs, systems, progress)
    if not ranks:
        empty = np.zeros((0, len(cs), 0))
        return SettingsRanking(
            empty.astype(np.int64), empty, empty.astype(np.int64), "loop", reason
        )
    k = max(r.columns.shape[1] for r in ranks)

    def pad(a: np.ndarray, fill: Any) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, k - a.shape[1])), constant_values=fill)

    return SettingsRanking(
        columns=np.stack([pad(r.columns, -1) for r in ranks]),
        scores=np.stack([pad(r.scores, np.nan) for r in ranks]),
        selected_by=np.stack([pad(r.selected_by, -1) for r in ranks]),
        path="stages" if shared else "loop",
        reason=reason,
        width=cs.width,
        kept=cs.width,
        shared=shared,
    )


def score_settings(
    lc: LabCandidates,
    systems: Sequence[Pipeline],
    metrics: Sequence[str],
    *,
    ranking: SettingsRanking | None = None,
) -> tuple[dict[str, np.ndarray], SettingsRanking]:
    """Per-query metric values of every system: ``{metric: [S, Q]}`` plus the rankings.

    ``values[m][i]`` equals ``lc.score(systems[i], metrics)[m]`` (NaN for
    queries without evidence). A query's metrics depend only on which
    evidence spans each ranked position covers (and, for ``budget_recall``,
    on each result's length), so a (setting, query) row whose positions
    cover the same spans as the previous setting's is not evaluated again:
    its values are copied.
    """
    r = ranking if ranking is not None else rank_settings(lc.cs, systems)
    specs = [parse_metric(m) for m in metrics]
    n, nq, _kmax = r.columns.shape
    cols = r.columns
    n_spans = lc.covers.shape[2]
    if any(s.kind == "budget_recall" for s in specs) or n_spans > 62:
        sig = cols
    else:
        # Each candidate's covered spans as a bit mask; an empty slot is −1.
        bits = (lc.covers.astype(np.int64) << np.arange(n_spans)).sum(axis=2)
        safe = np.maximum(cols, 0) + (np.arange(nq) * bits.shape[1])[None, :, None]
        sig = np.where(cols >= 0, bits.ravel()[safe], -1)
    changed = np.ones((n, nq), dtype=bool)
    if n > 1:
        changed[1:] = (sig[1:] != sig[:-1]).any(axis=2)
    si, qi = np.nonzero(changed)
    out = {s.name: np.full((n, nq), np.nan) for s in specs}
    if si.size:
        rc = cols[si, qi]
        safe = np.maximum(rc, 0)
        present = rc >= 0
        sp = lc.spans
        covers = lc.covers[qi[:, None], safe] & present[:, :, None]
        tokens = None
        if any(s.kind == "budget_recall" for s in specs):
            tok = lc.chunk_tokens()
            tokens = np.where(present, tok[lc.cs.pos[qi[:, None], safe]], 0.0)
        h = SpanHits(
            covers=covers,
            span_valid=sp.span_valid[qi],
            grades=sp.grades[qi],
            subtopic=sp.subtopic[qi],
            pos_valid=present,
            qids=[""] * len(qi),  # not read by the metrics; real ids would cost a list per row
            n_spans=sp.n_spans[qi],
            tokens=tokens,
        )
        values = evaluate_hits(h, specs)
        # Forward fill: each row takes the values of the last setting that changed it.
        src = np.maximum.accumulate(np.where(changed, np.arange(n)[:, None], 0), axis=0)
        flat = np.full((n, nq), -1, dtype=np.int64)
        flat[si, qi] = np.arange(si.size)
        idx = flat[src, np.arange(nq)[None, :]]
        has = lc.spans.has_evidence[None, :]
        for s in specs:
            out[s.name] = np.where(has, values[s.name][idx], np.nan)
    return out, r


def sweep_values(
    lc: LabCandidates,
    systems: Sequence[Pipeline],
    metrics: Sequence[str],
    attach: Callable[[LabCandidates, Pipeline], LabCandidates] | None = None,
    progress: bool = False,
) -> tuple[dict[str, np.ndarray], str, str | None, tuple[str, ...]]:
    """Per-query metric values ``{metric: [S, Q]}`` of every system over ``lc`` by the
    quickest exact path: ``"fast"`` (``score_settings``, vectorised), else ``"stages"`` /
    ``"loop"`` at unit level (``loop_settings``: one setting at a time, the score stages
    they agree on once), else one ``lc.score`` per setting (file level). ``attach(lc,
    s)``: ``lc`` with system ``s``'s line arrays (``Lab.with_best_line``; None: ``lc``
    carries them). Returns (values, path, why not fast or None, the shared stages)."""
    reason = fast_path_reason(lc.cs, systems)
    if reason is None and lc.level != "unit":
        reason = f"level={lc.level!r}: the fast path scores units"  # files: LabCandidates.score
    if reason is None:
        return score_settings(lc, systems, metrics)[0], "fast", None, ()
    if lc.level == "unit":
        own = lc
        for s in systems if attach is not None else ():
            own = attach(own, s)  # every setting's line arrays side by side (keyed apart)
        ranking = loop_settings(own.cs, systems, reason, progress=progress)
        values = score_settings(own, systems, metrics, ranking=ranking)[0]
        return values, ranking.path, reason, ranking.shared
    values = {m: np.empty((len(systems), len(lc.qids))) for m in metrics}
    iterator: Any = systems
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(systems, desc="sweep", unit="setting", disable=None)
    for i, s in enumerate(iterator):
        # A best-line system's line scores depend on its own line settings (depth, line
        # system): attach them per setting (Lab.with_best_line caches each).
        out = (lc if attach is None else attach(lc, s)).score(s, metrics)
        for m in metrics:
            values[m][i] = out[m]
    return values, "loop", reason, ()
