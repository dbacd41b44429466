"""Evidence spans as padded arrays: `SpanTable` (the evidence of a list of queries,
``[Q, S]``, built by `span_table`) and `SpanHits` (the ``[Q, K, S]`` coverage of a ranking,
what every metric reads), with the array helpers the coverage functions share
(`check_shape`, `cumcount`, `column_array`).

Spans with ``grade < 1`` are not relevant and are dropped (ranx's ``rel_lvl = 1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

__all__ = [
    "NEVER",
    "SpanHits",
    "SpanTable",
    "check_shape",
    "column_array",
    "cumcount",
    "span_table",
]

_EVIDENCE_REQUIRED = ("qid", "path", "start_line", "end_line")
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
        check_shape("span_valid", span_valid, (q, s))
        check_shape("pos_valid", pos_valid, (q, k))
        grades = np.asarray(self.grades, dtype=np.int64)
        subtopic = np.asarray(self.subtopic, dtype=np.int64)
        check_shape("grades", grades, (q, s))
        check_shape("subtopic", subtopic, (q, s))
        n_spans = np.asarray(self.n_spans, dtype=np.int64)
        check_shape("n_spans", n_spans, (q,))
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
            check_shape("tokens", tokens, (q, k))
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


def check_shape(name: str, arr: np.ndarray, shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``arr.shape == shape``."""
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")


def cumcount(groups: np.ndarray) -> np.ndarray:
    """0-based index of each element among the elements with the same group id, in order:
    ``[3, 1, 3, 3]`` → ``[0, 0, 1, 2]``; an empty array gives an empty int64 array."""
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


def column_array(df: pd.DataFrame, name: str, dtype: type | str) -> np.ndarray:
    """Column ``name`` of ``df`` as a numpy array of ``dtype``; for ``object`` every value
    as ``str`` (so qids and paths compare as strings, whatever the frame held)."""
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
    code_of_pair[by_appearance] = cumcount(rows[first_idx[by_appearance]])
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
    rows = np.array(
        [row_of.get(q, -1) for q in column_array(evidence, "qid", object)], dtype=np.int64
    )
    ev_path = column_array(evidence, "path", object)
    ev_start = column_array(evidence, "start_line", np.int64)
    ev_end = column_array(evidence, "end_line", np.int64)
    bad = np.flatnonzero(ev_end < ev_start)
    if bad.size:
        raise ValueError(
            f"evidence spans need start_line <= end_line: {evidence.iloc[bad[:3]].to_dict('records')}"
        )
    n_ev = len(evidence)
    grade = (
        column_array(evidence, "grade", np.int64)
        if "grade" in evidence.columns
        else np.ones(n_ev, dtype=np.int64)
    )
    span_id = (
        column_array(evidence, "span_id", object)
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
    slots = cumcount(rows)
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
