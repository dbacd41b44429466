"""Merging per-group candidate sets into one over a concatenated chunk table.

A dataset with several workspace groups has one index per group; the lab
retrieves each group's questions on its own index and merges the results here,
so scoring sees one `CandidateSet` whose ``table`` is every group's chunk table
end to end (``ChunkTable.segments`` says which index each chunk came from).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from memlab.retrieval.candidates import CandidateSet
from memlab.store import ChunkTable

__all__ = ["TextList", "TextSource", "merge_candidate_sets", "merge_tables"]


class TextSource(Protocol):
    """Serves the chunk texts of one table by position: a `MemoryIndex`, or a `TextList`
    (the texts a Ray task sent back with its group's table)."""

    def texts(self, positions: Sequence[int] | np.ndarray) -> list[str]: ...


class TextList:
    """Chunk texts held in memory, served by table position (a `TextSource`)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.items = list(texts)

    def texts(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        """The texts at ``positions`` (an IndexError for a position outside the table)."""
        return [self.items[int(p)] for p in np.asarray(positions, dtype=np.int64)]


class _TextSource:
    """Serves chunk texts for positions of a merged table, from each group's source."""

    def __init__(self, indexes: Sequence[TextSource], offsets: list[int]) -> None:
        self.indexes = indexes
        self.offsets = np.asarray(offsets, dtype=np.int64)

    def texts(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        pos = np.asarray(positions, dtype=np.int64)
        which = np.searchsorted(self.offsets, pos, side="right") - 1
        out: list[str] = [""] * len(pos)
        for g in np.unique(which):
            sel = np.nonzero(which == g)[0]
            texts = self.indexes[g].texts(pos[sel] - self.offsets[g])
            for i, t in zip(sel, texts, strict=True):
                out[i] = t
        return out


def _concat_column(
    tables: Sequence[ChunkTable], name: str, missing: object, dtype: type | str
) -> np.ndarray | None:
    """Column ``name`` of every table end to end: None when no table has it, else tables
    without it contribute ``missing`` (NaN or None) per chunk."""
    cols = [getattr(t, name) for t in tables]
    if all(c is None for c in cols):
        return None
    parts = []
    for t, c in zip(tables, cols, strict=True):
        if c is None:
            c = np.full(len(t), missing, dtype=dtype)
        parts.append(np.asarray(c, dtype=dtype))
    return np.concatenate(parts)


def merge_tables(tables: Sequence[ChunkTable]) -> ChunkTable:
    """Concatenate chunk tables (positions of table i are offset by the sizes before it).

    Annotation columns (``importance``, ``project_keys``, ``triggers``) are None when
    every table has None; else a table without them contributes NaN / None per chunk."""
    if not tables:
        return ChunkTable(
            rowids=np.empty(0, np.int64),
            ids=np.empty(0, dtype=object),
            paths=np.empty(0, dtype=object),
            sources=np.empty(0, dtype=object),
            start_lines=np.empty(0, np.int64),
            end_lines=np.empty(0, np.int64),
            mtimes=np.empty(0),
            vectors=None,
        )
    vecs = [t.vectors for t in tables]
    vectors = None
    if all(v is not None for v in vecs):
        vectors = np.concatenate(vecs) if len(vecs) > 1 else vecs[0]
    return ChunkTable(
        rowids=np.arange(sum(len(t) for t in tables), dtype=np.int64),
        ids=np.concatenate([t.ids for t in tables]),
        paths=np.concatenate([t.paths for t in tables]),
        sources=np.concatenate([t.sources for t in tables]),
        start_lines=np.concatenate([t.start_lines for t in tables]),
        end_lines=np.concatenate([t.end_lines for t in tables]),
        mtimes=np.concatenate([t.mtimes for t in tables]),
        vectors=vectors,
        importance=_concat_column(tables, "importance", np.nan, "float64"),
        project_keys=_concat_column(tables, "project_keys", None, object),
        triggers=_concat_column(tables, "triggers", None, object),
        segments=np.repeat(np.arange(len(tables), dtype=np.int64), [len(t) for t in tables]),
    )


def merge_candidate_sets(
    parts: Sequence[tuple[str, CandidateSet, np.ndarray]],
    indexes: Sequence[TextSource],
    n_queries: int,
) -> CandidateSet:
    """Merge per-group CandidateSets into one over a concatenated table.

    ``parts``: (group, candidates, dataset row of each of its queries); ``indexes[i]``
    serves the chunk texts of part i (its `MemoryIndex`, or a `TextList`). The
    result's rows follow the dataset's query order (``n_queries`` rows).
    """
    tables = [cs.table for _, cs, _ in parts]
    offsets = np.cumsum([0, *[len(t) for t in tables]])[:-1]
    width = max((cs.width for _, cs, _ in parts), default=0)
    pos = np.full((n_queries, width), -1, dtype=np.int64)
    vs = np.full((n_queries, width), np.nan)
    tr = np.full((n_queries, width), np.nan)
    vr = np.full((n_queries, width), -1, dtype=np.int64)
    kr = np.full((n_queries, width), -1, dtype=np.int64)
    fb = np.zeros(n_queries, dtype=bool)
    times = np.full(n_queries, np.nan)
    cutoffs = np.full(n_queries, np.nan)
    qids = [""] * n_queries
    queries = [""] * n_queries
    for (_, cs, rows), off in zip(parts, offsets, strict=True):
        w = cs.width
        pos[rows, :w] = np.where(cs.pos >= 0, cs.pos + off, -1)
        vs[rows, :w] = cs.vec_score
        tr[rows, :w] = cs.text_raw
        vr[rows, :w] = cs.vec_rank
        kr[rows, :w] = cs.text_rank
        fb[rows] = cs.keyword_fallback
        times[rows] = cs.times
        cutoffs[rows] = cs.cutoffs
        for r, qid, query in zip(rows, cs.qids, cs.queries, strict=True):
            qids[r] = qid
            queries[r] = query
    # Arrays of a candidate generation beyond the legs (CandidateSet.extra): [Q, C] ones
    # zero-padded; [Q, C, K] ones (the lines each chunk holds) padded to the largest K
    # with −1. Every part must carry the same keys: a part without one would read the
    # padding as its values (a line score of 0 on every chunk).
    keys = [sorted(cs.extra) for _, cs, _ in parts]
    if any(k != keys[0] for k in keys):
        raise ValueError(f"the parts carry different CandidateSet.extra keys: {keys}")
    extra: dict[str, np.ndarray] = {}
    for _, cs, rows in parts:
        for key, arr in cs.extra.items():
            if key not in extra:
                if arr.ndim == 2:
                    extra[key] = np.zeros((n_queries, width), dtype=arr.dtype)
                else:
                    k = max(c.extra[key].shape[2] for _, c, _ in parts)
                    extra[key] = np.full((n_queries, width, k), -1, dtype=arr.dtype)
            if arr.ndim == 2:
                extra[key][np.asarray(rows), : cs.width] = arr
            else:
                extra[key][np.asarray(rows), : cs.width, : arr.shape[2]] = arr
    table = merge_tables(tables)
    merged = CandidateSet(
        qids=qids,
        queries=queries,
        pos=pos,
        vec_score=vs,
        text_raw=tr,
        vec_rank=vr,
        text_rank=kr,
        table=table,
        depth=max((cs.depth for _, cs, _ in parts), default=0),
        keyword_mode=parts[0][1].keyword_mode if parts else "and",
        keyword_fallback=fb,
        times=times,
        cutoffs=cutoffs,
        extra=extra,
    )
    merged.index = _TextSource(list(indexes), offsets.tolist())  # type: ignore[assignment]
    return merged
