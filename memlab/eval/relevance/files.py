"""Relevance one level up, with the file as the unit (a file = a session: RealMem's
judgements are sessions): `file_ranking` (a file's rank is its best unit's rank) and
`file_hits` (a file is relevant when it holds evidence)."""

from __future__ import annotations

import numpy as np

from memlab.eval.relevance.spans import SpanHits, SpanTable

__all__ = ["file_hits", "file_ranking"]


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
