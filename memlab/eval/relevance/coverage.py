"""Which retrieved line ranges cover which evidence spans: the one relevance rule.

A result ``(path, start, end)`` covers a span of the same query when the paths are equal
(exact string match) and the inclusive line ranges overlap: ``r.start <= s.end and
s.start <= r.end``. `candidate_coverage` computes it for every candidate (``[Q, C, S]``,
once per candidate set); `take_topk` / `hits_from_topk` pick a ranking's slice;
`span_coverage` scores a run frame through the same arrays; `relevant_results` judges
each row of a results frame.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from memlab.eval.relevance.spans import (
    SpanHits,
    SpanTable,
    check_shape,
    column_array,
    cumcount,
    span_table,
)

__all__ = [
    "candidate_coverage",
    "hits_from_topk",
    "relevant_results",
    "span_coverage",
    "take_topk",
]

_RUN_REQUIRED = ("qid", "path", "start_line", "end_line")


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
    check_shape("cand_start", cs, cp.shape)
    check_shape("cand_end", ce, cp.shape)
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
    run_q = column_array(run, "qid", object)
    if qids is None:
        ev_q = column_array(evidence, "qid", object) if "qid" in evidence.columns else []
        qids = sorted(set(run_q.tolist()) | set(ev_q))
    qids = [str(q) for q in qids]
    row_of = {q: i for i, q in enumerate(qids)}
    rows = np.array([row_of.get(q, -1) for q in run_q.tolist()], dtype=np.int64)
    keep = rows >= 0
    rows = rows[keep]
    r_path = column_array(run, "path", object)[keep]
    r_start = column_array(run, "start_line", np.int64)[keep]
    r_end = column_array(run, "end_line", np.int64)[keep]
    if "rank" in run.columns:
        rank = column_array(run, "rank", np.int64)[keep]
        order = np.lexsort((rank, rows))
        same = (rows[order][1:] == rows[order][:-1]) & (rank[order][1:] == rank[order][:-1])
        if same.any():
            i = order[1:][same][:3]
            dups = [[qids[rows[j]], int(rank[j])] for j in i]
            raise ValueError(f"run repeats (qid, rank): {dups}")
    else:
        score = column_array(run, "score", np.float64)[keep]
        order = np.lexsort((-score, rows))
    has_tokens = tokens_column is not None and tokens_column in run.columns
    rows = rows[order]
    pos = cumcount(rows)

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
        tokens[rows, pos] = column_array(run, str(tokens_column), np.float64)[keep][order]
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
    run_q = column_array(run, "qid", object)
    qids = list(dict.fromkeys(run_q.tolist()))
    row_of = {q: i for i, q in enumerate(qids)}
    rows = np.array([row_of[q] for q in run_q.tolist()], dtype=np.int64)
    slots = cumcount(rows)  # each run row is one "candidate" of its query
    r_path = column_array(run, "path", object)
    table = span_table(evidence, qids, list(dict.fromkeys(r_path.tolist())))
    path_of = {p: i for i, p in enumerate(table.paths)}
    shape = (len(qids), int(slots.max()) + 1)
    cand_path = np.full(shape, -1, dtype=np.int64)
    cand_start = np.zeros(shape, dtype=np.int64)
    cand_end = np.zeros(shape, dtype=np.int64)
    cand_path[rows, slots] = [path_of[p] for p in r_path.tolist()]
    cand_start[rows, slots] = column_array(run, "start_line", np.int64)
    cand_end[rows, slots] = column_array(run, "end_line", np.int64)
    covers = candidate_coverage(cand_path, cand_start, cand_end, table)
    return covers.any(axis=2)[rows, slots]
