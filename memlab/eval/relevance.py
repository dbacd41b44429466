"""Evidence-span relevance: which retrieved line ranges cover which evidence spans.

Judgements are line spans of memory files (``qid, path, start_line, end_line,
grade, span_id`` and optionally ``subtopic``), not chunk ids, so one set of
judgements scores every chunker. A retrieved result ``(path, start, end)``
covers a span of the same query when the paths are equal (exact string match)
and the inclusive line ranges overlap: ``r.start <= s.end and s.start <= r.end``.

Everything is turned into padded arrays so metrics are plain numpy:

- ``SpanTable``: the evidence of a list of queries, ``[Q, S]`` (S = most spans
  of any query), built once per data set.
- ``candidate_coverage``: ``[Q, C, S]`` coverage of every candidate, computed
  once per candidate set; ``take_topk`` then picks a ranking's ``[Q, K, S]``
  slice for each setting of a sweep.
- ``SpanHits``: the ``[Q, K, S]`` coverage of a ranking plus the span arrays;
  what every metric in ``memlab.eval.metrics`` reads.
- ``relevant_results``: the same judgement for each row of a results frame
  (``memlab.viz.mark_relevant``'s ``relevant`` column).
- ``file_ranking`` / ``file_hits``: the same ranking and evidence one level up, with the
  file as the unit (a file = a session: RealMem's judgements are sessions): a file's rank
  is its best unit's rank, and a file is relevant when it holds evidence.

Conventions (also stated on the functions):

- Spans with ``grade < 1`` are not relevant and are dropped (ranx's
  ``rel_lvl = 1``).
- A query with evidence but no retrieved results scores zero on every metric.
- A query without evidence spans cannot be scored; it is left out of
  ``SpanHits`` (and so out of every mean) and listed in
  ``SpanHits.no_evidence_qids``. Pass ``include_no_evidence=True`` to keep it
  as a row that scores 0 everywhere (ranx's convention for empty qrels).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

__all__ = [
    "SpanHits",
    "SpanTable",
    "candidate_coverage",
    "file_hits",
    "file_ranking",
    "hits_from_topk",
    "relevant_results",
    "span_coverage",
    "span_table",
    "take_topk",
]

_EVIDENCE_REQUIRED = ("qid", "path", "start_line", "end_line")
_RUN_REQUIRED = ("qid", "path", "start_line", "end_line")
NEVER = 2**62  # SpanHits.first_cover of a span no result covers


@dataclass(frozen=True, eq=False)
class SpanTable:
    """Evidence spans of a list of queries as padded ``[Q, S]`` arrays.

    Row ``q`` belongs to ``qids[q]``; column ``s`` is the query's ``s``-th span
    in evidence order. Padding: ``path_idx = -1``, ``start = end = 0``,
    ``grades = 0``, ``subtopic = -1``, ``span_valid = False``.

    Attributes:
        qids: the queries, in the row order of any candidate arrays used with it.
        paths: path vocabulary; ``path_idx`` indexes it. It starts with the
            caller's vocabulary (if given) followed by evidence paths not in it.
        path_idx, start, end, grades, subtopic: int64 ``[Q, S]``.
        span_valid: bool ``[Q, S]``.
        n_spans: int64 ``[Q]``, spans per query (0 = no evidence).
        span_ids: object ``[Q, S]``, the evidence ``span_id`` (``None`` padding).
    """

    qids: list[str]
    paths: list[str]
    path_idx: np.ndarray
    start: np.ndarray
    end: np.ndarray
    grades: np.ndarray
    subtopic: np.ndarray
    span_valid: np.ndarray
    n_spans: np.ndarray
    span_ids: np.ndarray

    @property
    def has_evidence(self) -> np.ndarray:
        """bool ``[Q]``: the query has at least one relevant span."""
        return self.n_spans > 0


@dataclass(frozen=True, eq=False)
class SpanHits:
    """Coverage of evidence spans by a ranking, as padded arrays.

    Attributes:
        covers: bool ``[Q, K, S]``; result at 0-based position ``k`` of query
            ``q`` overlaps span ``s``. Forced False where ``pos_valid`` or
            ``span_valid`` is False.
        span_valid: bool ``[Q, S]``.
        grades: int64 ``[Q, S]`` (0 padding).
        subtopic: int64 ``[Q, S]``: subtopic ids ``0..T_q-1`` per query, -1
            padding; by default each span is its own subtopic.
        pos_valid: bool ``[Q, K]``: a result exists at that position.
        qids: the scored queries (row order).
        n_spans: int64 ``[Q]``, evidence spans per query.
        no_evidence_qids: queries left out because they have no evidence span.
        tokens: optional float64 ``[Q, K]`` token count of each result (for
            ``budget_recall``); 0 at padded positions.
    """

    covers: np.ndarray
    span_valid: np.ndarray
    grades: np.ndarray
    subtopic: np.ndarray
    pos_valid: np.ndarray
    qids: list[str]
    n_spans: np.ndarray
    no_evidence_qids: list[str] = field(default_factory=list)
    tokens: np.ndarray | None = None

    def __post_init__(self) -> None:
        covers = np.asarray(self.covers, dtype=bool)
        if covers.ndim != 3:
            raise ValueError(f"covers must be [Q, K, S], got shape {covers.shape}")
        q, k, s = covers.shape
        span_valid = np.asarray(self.span_valid, dtype=bool)
        pos_valid = np.asarray(self.pos_valid, dtype=bool)
        _check_shape("span_valid", span_valid, (q, s))
        _check_shape("pos_valid", pos_valid, (q, k))
        grades = np.asarray(self.grades, dtype=np.int64)
        subtopic = np.asarray(self.subtopic, dtype=np.int64)
        _check_shape("grades", grades, (q, s))
        _check_shape("subtopic", subtopic, (q, s))
        n_spans = np.asarray(self.n_spans, dtype=np.int64)
        _check_shape("n_spans", n_spans, (q,))
        if len(self.qids) != q:
            raise ValueError(f"qids has {len(self.qids)} entries for {q} query rows")
        if not np.array_equal(n_spans, span_valid.sum(axis=1)):
            raise ValueError("n_spans must equal the number of valid spans per query")
        # Metrics rely on padding never counting as a hit; enforce it once here.
        covers = covers & pos_valid[:, :, None] & span_valid[:, None, :]
        object.__setattr__(self, "covers", covers)
        object.__setattr__(self, "span_valid", span_valid)
        object.__setattr__(self, "pos_valid", pos_valid)
        object.__setattr__(self, "grades", np.where(span_valid, grades, 0))
        object.__setattr__(self, "subtopic", np.where(span_valid, subtopic, -1))
        object.__setattr__(self, "n_spans", n_spans)
        object.__setattr__(self, "qids", list(self.qids))
        if self.tokens is not None:
            tokens = np.asarray(self.tokens, dtype=np.float64)
            _check_shape("tokens", tokens, (q, k))
            object.__setattr__(self, "tokens", np.where(pos_valid, tokens, 0.0))

    @cached_property
    def first_cover(self) -> np.ndarray:
        """int64 ``[Q, S]``: first 0-based position covering each span; ``NEVER`` if none.

        ``NEVER`` (2**62) exceeds any cutoff, so ``first_cover < k`` means "covered
        in the top k". Cached: most metrics are a comparison of this with a cutoff.
        """
        n_k = self.covers.shape[1]
        if n_k == 0:
            return np.full(self.span_valid.shape, NEVER, dtype=np.int64)
        by_span = np.ascontiguousarray(self.covers.transpose(0, 2, 1))
        first = by_span.argmax(axis=2)
        hit = np.take_along_axis(by_span, first[:, :, None], axis=2)[:, :, 0]
        return np.where(hit, first, NEVER).astype(np.int64)

    @cached_property
    def relevant(self) -> np.ndarray:
        """bool ``[Q, K]``: the result at each position covers at least one span (cached)."""
        return self.covers.any(axis=2)

    @cached_property
    def subtopic_onehot(self) -> np.ndarray:
        """bool ``[Q, S, T]``: span s belongs to subtopic t (T = most subtopics of a query, >= 1)."""
        n_t = max(int(self.subtopic.max(initial=-1)) + 1, 1)
        return self.subtopic[:, :, None] == np.arange(n_t)

    @cached_property
    def n_subtopics(self) -> np.ndarray:
        """int64 ``[Q]``: distinct subtopics among each query's spans."""
        return self.subtopic_onehot.any(axis=1).sum(axis=1).astype(np.int64)

    @property
    def n_queries(self) -> int:
        """Number of scored queries Q."""
        return int(self.covers.shape[0])

    @property
    def depth(self) -> int:
        """Number of ranked positions K held (the deepest cutoff that changes anything)."""
        return int(self.covers.shape[1])


def _check_shape(name: str, arr: np.ndarray, shape: tuple[int, ...]) -> None:
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")


def _cumcount(groups: np.ndarray) -> np.ndarray:
    """0-based index of each element among the elements with the same group id, in order."""
    n = groups.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    is_start = np.r_[True, g[1:] != g[:-1]]
    start_of = np.maximum.accumulate(np.where(is_start, np.arange(n), 0))
    out = np.empty(n, dtype=np.int64)
    out[order] = np.arange(n) - start_of
    return out


def _column(df: pd.DataFrame, name: str, dtype: type | str) -> np.ndarray:
    if dtype is object:
        return np.array([str(v) for v in df[name].tolist()], dtype=object)
    return df[name].to_numpy(dtype=dtype)


def _subtopic_codes(rows: np.ndarray, slots: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Number each query's subtopic labels 0..T-1 in order of first appearance.

    A missing label (None/NaN) makes the span its own subtopic.
    """
    keys = [
        ("own", int(s)) if pd.isna(t) else ("label", str(t))
        for t, s in zip(labels.tolist(), slots.tolist(), strict=True)
    ]
    label_id = pd.factorize(pd.Series(keys, dtype=object))[0].astype(np.int64)
    pair = rows * (int(label_id.max(initial=0)) + 1) + label_id
    # First occurrence of each (query, label) pair, numbered per query in span order.
    _, first_idx, inverse = np.unique(pair, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first_idx, kind="stable")
    code_of_pair = np.empty(first_idx.size, dtype=np.int64)
    code_of_pair[by_appearance] = _cumcount(rows[first_idx[by_appearance]])
    return code_of_pair[inverse.ravel()]


def span_table(
    evidence: pd.DataFrame,
    qids: Sequence[str],
    paths: Sequence[str] | None = None,
) -> SpanTable:
    """Pad the evidence of ``qids`` into ``[Q, S]`` arrays (see ``SpanTable``).

    Spans with ``grade < 1`` are dropped (a missing ``grade`` column means 1);
    evidence of queries not in ``qids`` is ignored; a query in ``qids``
    without spans gets ``n_spans = 0``. ``paths`` fixes the start of the path
    vocabulary so callers can encode candidate paths with the same indices;
    evidence paths outside it are appended (the caller's candidates can then
    never cover them). Subtopics: when evidence has a ``subtopic`` column its
    values are numbered ``0..T-1`` per query in order of first appearance (a
    missing value makes the span its own subtopic); otherwise span ``s`` is
    subtopic ``s``. S is at least 1 so empty data sets still give well-formed
    arrays. Raises ``ValueError`` on missing columns or ``end_line < start_line``.
    """
    qids = [str(q) for q in qids]
    if len(set(qids)) != len(qids):
        raise ValueError("qids must be unique")
    missing = [c for c in _EVIDENCE_REQUIRED if c not in evidence.columns]
    if missing:
        raise ValueError(f"evidence needs columns {list(_EVIDENCE_REQUIRED)}; missing {missing}")
    row_of = {q: i for i, q in enumerate(qids)}
    rows = np.array([row_of.get(q, -1) for q in _column(evidence, "qid", object)], dtype=np.int64)
    ev_path = _column(evidence, "path", object)
    ev_start = _column(evidence, "start_line", np.int64)
    ev_end = _column(evidence, "end_line", np.int64)
    bad = np.flatnonzero(ev_end < ev_start)
    if bad.size:
        raise ValueError(
            f"evidence spans need start_line <= end_line: {evidence.iloc[bad[:3]].to_dict('records')}"
        )
    n_ev = len(evidence)
    grade = (
        _column(evidence, "grade", np.int64)
        if "grade" in evidence.columns
        else np.ones(n_ev, dtype=np.int64)
    )
    span_id = (
        _column(evidence, "span_id", object)
        if "span_id" in evidence.columns
        else np.array([None] * n_ev, dtype=object)
    )
    keep = (grade >= 1) & (rows >= 0)
    rows, ev_path, ev_start, ev_end, grade, span_id = (
        a[keep] for a in (rows, ev_path, ev_start, ev_end, grade, span_id)
    )

    vocab = [str(p) for p in paths] if paths is not None else []
    path_of = {p: i for i, p in enumerate(vocab)}
    if len(path_of) != len(vocab):
        raise ValueError("paths must be unique")
    for p in ev_path.tolist():
        if p not in path_of:
            path_of[p] = len(vocab)
            vocab.append(p)

    n_q = len(qids)
    slots = _cumcount(rows)
    n_s = max(int(slots.max(initial=-1)) + 1, 1)
    path_idx = np.full((n_q, n_s), -1, dtype=np.int64)
    start = np.zeros((n_q, n_s), dtype=np.int64)
    end = np.zeros((n_q, n_s), dtype=np.int64)
    grades = np.zeros((n_q, n_s), dtype=np.int64)
    subtopic = np.full((n_q, n_s), -1, dtype=np.int64)
    span_valid = np.zeros((n_q, n_s), dtype=bool)
    span_ids = np.full((n_q, n_s), None, dtype=object)

    path_idx[rows, slots] = [path_of[p] for p in ev_path.tolist()]
    start[rows, slots] = ev_start
    end[rows, slots] = ev_end
    grades[rows, slots] = grade
    span_valid[rows, slots] = True
    span_ids[rows, slots] = span_id
    if "subtopic" in evidence.columns:
        labels = evidence["subtopic"].to_numpy(dtype=object)[keep]
        subtopic[rows, slots] = _subtopic_codes(rows, slots, labels)
    else:
        subtopic[rows, slots] = slots
    n_spans = span_valid.sum(axis=1).astype(np.int64)
    return SpanTable(
        qids, vocab, path_idx, start, end, grades, subtopic, span_valid, n_spans, span_ids
    )


def candidate_coverage(
    cand_path_idx: np.ndarray,
    cand_start: np.ndarray,
    cand_end: np.ndarray,
    evidence: SpanTable | pd.DataFrame,
    qids: Sequence[str] | None = None,
    paths: Sequence[str] | None = None,
) -> np.ndarray:
    """Which candidates cover which evidence spans: bool ``[Q, C, S]``.

    ``covers_c[q, c, s] = valid_c & valid_s & path_c == path_s
    & start_c <= end_s & start_s <= end_c`` (inclusive line ranges).

    Args:
        cand_path_idx: int ``[Q, C]`` index into ``paths`` (``-1`` = padding /
            no candidate; never covers anything).
        cand_start, cand_end: int ``[Q, C]`` 1-based inclusive line range.
        evidence: a ``SpanTable`` (built once with ``span_table``; fastest) or
            an evidence DataFrame, in which case ``qids`` (row order of the
            candidate arrays) and ``paths`` (the vocabulary of
            ``cand_path_idx``) are required.
    Rows of the candidate arrays must follow ``evidence.qids``. S comes from
    the table, so the result lines up with ``SpanTable``/``SpanHits`` arrays.
    """
    if isinstance(evidence, pd.DataFrame):
        if qids is None or paths is None:
            raise ValueError("candidate_coverage with an evidence DataFrame needs qids and paths")
        table = span_table(evidence, qids, paths)
    else:
        table = evidence
    cp = np.asarray(cand_path_idx, dtype=np.int64)
    cs = np.asarray(cand_start, dtype=np.int64)
    ce = np.asarray(cand_end, dtype=np.int64)
    if cp.ndim != 2:
        raise ValueError(f"cand_path_idx must be [Q, C], got shape {cp.shape}")
    _check_shape("cand_start", cs, cp.shape)
    _check_shape("cand_end", ce, cp.shape)
    if cp.shape[0] != len(table.qids):
        raise ValueError(f"candidate arrays have {cp.shape[0]} rows for {len(table.qids)} queries")
    # Padding is -1 on both sides, so also require a real candidate path.
    same_path = (cp[:, :, None] == table.path_idx[:, None, :]) & (cp >= 0)[:, :, None]
    overlap = (cs[:, :, None] <= table.end[:, None, :]) & (
        table.start[:, None, :] <= ce[:, :, None]
    )
    return same_path & overlap & table.span_valid[:, None, :]


def take_topk(covers_c: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Coverage of a ranking: ``covers[q, k, s] = covers_c[q, order[q, k], s]``.

    ``order`` is int ``[Q, K]``: candidate indices of the ranked results, best
    first, ``-1`` padding (padded positions cover nothing).
    """
    covers_c = np.asarray(covers_c, dtype=bool)
    order = np.asarray(order)
    if covers_c.ndim != 3 or order.ndim != 2 or order.shape[0] != covers_c.shape[0]:
        raise ValueError(
            f"take_topk needs covers_c [Q, C, S] and order [Q, K] with the same Q; "
            f"got {covers_c.shape} and {order.shape}"
        )
    if order.size and int(order.max()) >= covers_c.shape[1]:
        raise ValueError(
            f"order holds candidate index {int(order.max())} >= C = {covers_c.shape[1]}"
        )
    valid = order >= 0
    picked = np.take_along_axis(covers_c, np.where(valid, order, 0)[:, :, None], axis=1)
    return picked & valid[:, :, None]


def hits_from_topk(
    covers_c: np.ndarray,
    order: np.ndarray,
    table: SpanTable,
    *,
    tokens: np.ndarray | None = None,
    include_no_evidence: bool = False,
) -> SpanHits:
    """Build the ``SpanHits`` of one ranking from candidate coverage (the sweep path).

    ``covers_c`` ``[Q, C, S]`` from ``candidate_coverage``; ``order`` ``[Q, K]``
    candidate indices (-1 padding); ``tokens`` optional ``[Q, K]`` token counts
    of the ranked results. Rows follow ``table.qids``; queries without evidence
    are dropped (listed in ``no_evidence_qids``) unless ``include_no_evidence``.
    """
    order = np.asarray(order)
    covers = take_topk(covers_c, order)
    keep = np.ones(len(table.qids), dtype=bool) if include_no_evidence else table.has_evidence
    no_ev = [q for q, has in zip(table.qids, table.has_evidence, strict=True) if not has]
    all_kept = bool(keep.all())

    def rows(a: np.ndarray) -> np.ndarray:
        return a if all_kept else a[keep]

    return SpanHits(
        covers=rows(covers),
        span_valid=rows(table.span_valid),
        grades=rows(table.grades),
        subtopic=rows(table.subtopic),
        pos_valid=rows(order >= 0),
        qids=[q for q, k in zip(table.qids, keep, strict=True) if k],
        n_spans=rows(table.n_spans),
        no_evidence_qids=[] if include_no_evidence else no_ev,
        tokens=None if tokens is None else rows(np.asarray(tokens, dtype=np.float64)),
    )


def span_coverage(
    run: pd.DataFrame,
    evidence: pd.DataFrame,
    *,
    qids: Sequence[str] | None = None,
    tokens_column: str | None = "tokens",
    include_no_evidence: bool = False,
) -> SpanHits:
    """Coverage of evidence spans by a run DataFrame (the PyTerrier/ranx-style path).

    ``run`` has columns ``qid, rank, path, start_line, end_line`` (+ anything);
    ``rank`` is 0-based (if absent, results are ranked by ``score``
    descending, ties in row order). Results of a query are placed at positions
    ``0..n-1`` in rank order, so gaps in ``rank`` are closed; a repeated
    ``(qid, rank)`` is an error. ``tokens_column``, when present in the run,
    fills ``SpanHits.tokens``.

    The queries considered are ``qids`` if given (run rows of other queries
    are ignored), else the sorted union of the run's and the evidence's qids.
    A query with evidence but no results scores zero; a query without evidence
    is left out and listed in ``no_evidence_qids`` (kept as an all-zero row if
    ``include_no_evidence``). Built through ``candidate_coverage`` and
    ``hits_from_topk``, so it gives exactly what the array path gives.
    """
    missing = [c for c in _RUN_REQUIRED if c not in run.columns]
    if "rank" not in run.columns and "score" not in run.columns:
        missing.append("rank")
    if missing:
        raise ValueError(f"run needs columns {[*_RUN_REQUIRED, 'rank']}; missing {missing}")
    run_q = _column(run, "qid", object)
    if qids is None:
        ev_q = _column(evidence, "qid", object) if "qid" in evidence.columns else []
        qids = sorted(set(run_q.tolist()) | set(ev_q))
    qids = [str(q) for q in qids]
    row_of = {q: i for i, q in enumerate(qids)}
    rows = np.array([row_of.get(q, -1) for q in run_q.tolist()], dtype=np.int64)
    keep = rows >= 0
    rows = rows[keep]
    r_path = _column(run, "path", object)[keep]
    r_start = _column(run, "start_line", np.int64)[keep]
    r_end = _column(run, "end_line", np.int64)[keep]
    if "rank" in run.columns:
        rank = _column(run, "rank", np.int64)[keep]
        order = np.lexsort((rank, rows))
        same = (rows[order][1:] == rows[order][:-1]) & (rank[order][1:] == rank[order][:-1])
        if same.any():
            i = order[1:][same][:3]
            dups = [[qids[rows[j]], int(rank[j])] for j in i]
            raise ValueError(f"run repeats (qid, rank): {dups}")
    else:
        score = _column(run, "score", np.float64)[keep]
        order = np.lexsort((-score, rows))
    has_tokens = tokens_column is not None and tokens_column in run.columns
    rows = rows[order]
    pos = _cumcount(rows)

    table = span_table(evidence, qids, sorted(set(r_path.tolist())))
    path_of = {p: i for i, p in enumerate(table.paths)}
    n_k = max(int(pos.max(initial=-1)) + 1, 1)
    cand_path = np.full((len(qids), n_k), -1, dtype=np.int64)
    cand_start = np.zeros_like(cand_path)
    cand_end = np.zeros_like(cand_path)
    ranking = np.full_like(cand_path, -1)
    cand_path[rows, pos] = [path_of[p] for p in r_path[order].tolist()]
    cand_start[rows, pos] = r_start[order]
    cand_end[rows, pos] = r_end[order]
    ranking[rows, pos] = pos
    tokens = None
    if has_tokens:
        tokens = np.zeros(cand_path.shape, dtype=np.float64)
        tokens[rows, pos] = _column(run, str(tokens_column), np.float64)[keep][order]
    covers_c = candidate_coverage(cand_path, cand_start, cand_end, table)
    return hits_from_topk(
        covers_c, ranking, table, tokens=tokens, include_no_evidence=include_no_evidence
    )


def relevant_results(run: pd.DataFrame, evidence: pd.DataFrame) -> np.ndarray:
    """Whether each row of a results frame covers an evidence span: bool ``[len(run)]``.

    Row r is relevant when a span s of evidence with the same ``qid`` and ``path``
    (compared as strings) and ``grade >= 1`` (no ``grade`` column = 1) overlaps its
    inclusive line range: ``r.start_line <= s.end_line and s.start_line <= r.end_line``
    — the rule of ``candidate_coverage``, which computes it. Rows keep their order and
    may repeat (a frame of several systems); a row whose qid has no evidence is False;
    an empty run gives an empty array. Raises ``ValueError`` when ``run`` or
    ``evidence`` lacks one of ``qid, path, start_line, end_line``, or on an evidence
    span with ``end_line < start_line``.
    """
    for name, frame in (("run", run), ("evidence", evidence)):
        if not set(_RUN_REQUIRED) <= set(frame.columns):
            raise ValueError(f"{name} needs columns {sorted(_RUN_REQUIRED)}")
    if len(run) == 0:
        return np.zeros(0, dtype=bool)
    run_q = _column(run, "qid", object)
    qids = list(dict.fromkeys(run_q.tolist()))
    row_of = {q: i for i, q in enumerate(qids)}
    rows = np.array([row_of[q] for q in run_q.tolist()], dtype=np.int64)
    slots = _cumcount(rows)  # each run row is one "candidate" of its query
    r_path = _column(run, "path", object)
    table = span_table(evidence, qids, list(dict.fromkeys(r_path.tolist())))
    path_of = {p: i for i, p in enumerate(table.paths)}
    shape = (len(qids), int(slots.max()) + 1)
    cand_path = np.full(shape, -1, dtype=np.int64)
    cand_start = np.zeros(shape, dtype=np.int64)
    cand_end = np.zeros(shape, dtype=np.int64)
    cand_path[rows, slots] = [path_of[p] for p in r_path.tolist()]
    cand_start[rows, slots] = _column(run, "start_line", np.int64)
    cand_end[rows, slots] = _column(run, "end_line", np.int64)
    covers = candidate_coverage(cand_path, cand_start, cand_end, table)
    return covers.any(axis=2)[rows, slots]


def file_ranking(order: np.ndarray, cand_path: np.ndarray) -> np.ndarray:
    """Each query's files in the order of their best-ranked unit: int64 ``[Q, F]`` path
    indices (``cand_path``'s vocabulary), −1 padding.

    ``order`` ``[Q, K]``: a ranking's candidate columns, best first (−1 = empty slot);
    ``cand_path`` ``[Q, C]``: each candidate's path index (−1 = padding). A file appears
    once, at the rank of its first (best) unit, so a file's rank is its best unit's rank
    among files; the files keep that order. F = the most files of any query (at least 1).
    """
    order = np.asarray(order, dtype=np.int64)
    cand_path = np.asarray(cand_path, dtype=np.int64)
    n_q, n_k = order.shape
    paths = np.where(
        order >= 0,
        np.take_along_axis(cand_path, np.maximum(order, 0), axis=1) if n_k else order,
        -1,
    )
    flat = paths.ravel()
    at = np.flatnonzero(flat >= 0)
    n_paths = int(flat.max(initial=-1)) + 1
    key = (at // max(n_k, 1)) * max(n_paths, 1) + flat[at]
    _, first = np.unique(key, return_index=True)
    keep = np.sort(at[first])  # row-major: by query, then by rank
    rows = keep // max(n_k, 1)
    slot = np.arange(keep.size) - np.searchsorted(rows, rows, side="left")
    out = np.full((n_q, max(int(slot.max(initial=-1)) + 1, 1)), -1, dtype=np.int64)
    out[rows, slot] = flat[keep]
    return out


def file_hits(
    order: np.ndarray,
    cand_path: np.ndarray,
    table: SpanTable,
    *,
    include_no_evidence: bool = False,
) -> SpanHits:
    """The ``SpanHits`` of a ranking at file level: the results are the files of
    `file_ranking` (``cand_path`` indexes ``table.paths``), the evidence is each query's
    distinct evidence files (one per path, grade = the best grade of its spans; spans
    with grade < 1 are already out of ``table``), and file f covers the evidence of path
    f. So recall@k is the share of a query's evidence files in its top k files,
    recall_any/recall_all whether one/all of them are there, and nDCG places one gain per
    evidence file — RealMem's session-level metrics when a file is a session. Rows follow
    ``table.qids``; queries without evidence are dropped (``no_evidence_qids``) unless
    ``include_no_evidence``.
    """
    files = file_ranking(order, cand_path)
    n_q = len(table.qids)
    # Distinct evidence paths per query, in span order, with their best grade.
    ev: list[dict[int, int]] = [{} for _ in range(n_q)]
    for q, s in zip(*np.nonzero(table.span_valid), strict=True):
        p, g = int(table.path_idx[q, s]), int(table.grades[q, s])
        ev[q][p] = max(g, ev[q].get(p, 0))
    n_s = max((len(e) for e in ev), default=0) or 1
    f_path = np.full((n_q, n_s), -1, dtype=np.int64)
    f_grade = np.zeros((n_q, n_s), dtype=np.int64)
    for q, e in enumerate(ev):
        f_path[q, : len(e)] = list(e)
        f_grade[q, : len(e)] = list(e.values())
    f_valid = f_path >= 0
    covers = (files[:, :, None] == f_path[:, None, :]) & (files >= 0)[:, :, None]
    has = f_valid.any(axis=1)
    keep = np.ones(n_q, dtype=bool) if include_no_evidence else has
    return SpanHits(
        covers=covers[keep],
        span_valid=f_valid[keep],
        grades=f_grade[keep],
        subtopic=np.where(f_valid, np.arange(n_s)[None, :], -1)[keep],
        pos_valid=(files >= 0)[keep],
        qids=[q for q, k in zip(table.qids, keep, strict=True) if k],
        n_spans=f_valid.sum(axis=1)[keep],
        no_evidence_qids=[]
        if include_no_evidence
        else [q for q, h in zip(table.qids, has, strict=True) if not h],
    )
