"""The two search legs over a loaded chunk table: keyword (FTS5 bm25) and vector (cosine).

Both return table positions, so a caller can look every hit up in the same
``ChunkTable``; hits committed by another connection after the table was loaded are
left out (the next search reloads the table and finds them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.store.identity import embedder_identity
from memlab.store.schema import db_error
from memlab.store.table import ChunkTable

if TYPE_CHECKING:
    from memlab.embed import Embedder

__all__ = ["check_engine", "embed_queries", "keyword_leg", "vector_leg", "vector_leg_visible"]


def keyword_leg(
    connect: Callable[[], sqlite3.Connection],
    table: Callable[[], ChunkTable],
    db_path: Path,
    fts_query: str | None,
    limit: int,
) -> tuple[np.ndarray, np.ndarray]:
    """FTS5 ``MATCH fts_query`` → (table positions, bm25 ranks), best (most negative)
    first, at most ``limit``.

    ``fts_query`` None or empty, ``limit`` ≤ 0, a query FTS5 rejects, or an empty table
    → no hits (as OpenClaw). Busy/locked and other SQLite errors are raised through
    ``db_error``. ``connect()`` is called only for a query to run, ``table()`` only
    after it ran and found rows.
    """
    empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
    if not fts_query or limit <= 0:
        return empty
    try:
        rows = (
            connect()
            .execute(
                "SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ?"
                " ORDER BY r ASC LIMIT ?",
                (fts_query, int(limit)),
            )
            .fetchall()
        )
    except sqlite3.OperationalError as exc:
        if (getattr(exc, "sqlite_errorname", "") or "").startswith(
            ("SQLITE_BUSY", "SQLITE_LOCKED")
        ):
            raise db_error(db_path, exc) from exc
        return empty  # a query FTS5 rejects
    except sqlite3.DatabaseError as exc:
        raise db_error(db_path, exc) from exc
    if not rows:
        return empty
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    ranks = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
    t = table()
    if len(t) == 0:
        return empty
    # Rows committed by another connection after this table was loaded are not in
    # it: they are left out (the next search reloads the table and finds them).
    pos = t.positions(rowids)
    known = (pos < len(t)) & (t.rowids[np.minimum(pos, len(t) - 1)] == rowids)
    return pos[known], ranks[known]


def embed_queries(embedder: Embedder | None, queries: Sequence[str]) -> np.ndarray:
    """Query vectors [Q, d] float32, each query trimmed (as OpenClaw embeds it).

    No embedder → ``RuntimeError``; no query → a [0, d] array. An embedder that changed
    identity while embedding (a ``FallbackEmbedder`` switched) → ``EmbeddingError``: its
    vectors are not comparable with the stored ones.
    """
    if embedder is None:
        raise RuntimeError("keyword-only index: no embedder")
    if not queries:
        return np.zeros((0, embedder.dimensions or 0), dtype=np.float32)
    before = embedder_identity(embedder)
    vecs = np.vstack([embedder.embed_query(q.strip()) for q in queries]).astype(np.float32)
    if embedder_identity(embedder) != before:
        from memlab.embed import EmbeddingError

        # A FallbackEmbedder switched while embedding the query: its vectors are not
        # comparable with the stored ones. The next sync rebuilds with the fallback.
        raise EmbeddingError(
            f"embedding provider {before[0]}/{before[1]} failed during the search and was"
            f" replaced by {embedder.provider}/{embedder.model}; the index holds"
            f" {before[1]} vectors until the next sync rebuilds it"
            f" ({getattr(embedder, 'fallback_reason', '')})"
        )
    return vecs


def vector_leg(
    table: ChunkTable, engine: Callable[[], Any], query_vectors: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k by cosine (inner product of unit vectors) for a batch of query vectors.

    Returns (positions [Q, k'], scores [Q, k']) with k' = min(k, N), or k' = 0 when the
    table has no vectors (keyword-only, d = 0) or k ≤ 0. Rows of an all-zero or
    non-finite query vector (not scanned: no direction), and slots an approximate engine
    could not fill, hold position −1 and score NaN (OpenClaw skips the vector side for a
    zero query). ``engine()`` is called only when some query is scanned.
    """
    qv = np.atleast_2d(np.asarray(query_vectors, dtype=np.float32))
    t = table
    kk = min(int(k), len(t))
    nq = qv.shape[0]
    if t.vectors is None or t.vectors.shape[1] == 0 or kk <= 0:
        return np.full((nq, 0), -1, dtype=np.int64), np.full((nq, 0), np.nan)
    pos = np.full((nq, kk), -1, dtype=np.int64)
    scores = np.full((nq, kk), np.nan)
    # An all-zero (or non-finite) query has no direction: nothing to scan for.
    ok = np.flatnonzero(np.isfinite(qv).all(axis=1) & qv.any(axis=1))
    if ok.size:
        p, sc = engine().search(qv[ok], kk)
        p = np.asarray(p, dtype=np.int64)
        pos[ok, : p.shape[1]] = p
        scores[ok, : p.shape[1]] = np.asarray(sc, dtype=np.float64)
    scores[pos < 0] = np.nan
    return pos, scores


def vector_leg_visible(
    table: ChunkTable,
    engine: Callable[[], Any],
    query_vectors: np.ndarray,
    k: int,
    visible: Callable[[int], np.ndarray | None],
) -> tuple[np.ndarray, np.ndarray]:
    """`vector_leg` where query ``i`` sees only the rows ``visible(i)`` (bool [N]; None =
    every row): its top k among them, by an exact scan of their vectors
    (``memlab.retrieval.vectors.exact_topk``: ties by the lower position, as the exact engines), so
    the leg's depth counts visible rows only. Same shape as `vector_leg` ([Q, min(k, N)]);
    a query that sees fewer than k rows leaves the rest of its slots −1 / NaN. Queries
    with the same visible rows are scanned in one batch; those that see every row go to
    ``engine()`` as in `vector_leg`.

    ``engine()`` must be exact (``.exact``): an approximate engine's results over all rows
    are not its results over the visible ones, so a ValueError names it (use the
    ``numpy`` or ``faiss`` vector backend for time cut-offs).
    """
    from memlab.retrieval.vectors import exact_topk

    qv = np.atleast_2d(np.asarray(query_vectors, dtype=np.float32))
    nq = qv.shape[0]
    masks = [visible(i) for i in range(nq)]
    if all(m is None for m in masks):
        return vector_leg(table, engine, qv, k)
    kk = min(int(k), len(table))
    if table.vectors is None or table.vectors.shape[1] == 0 or kk <= 0:
        return np.full((nq, 0), -1, dtype=np.int64), np.full((nq, 0), np.nan)
    eng = engine()
    if not getattr(eng, "exact", False):
        raise ValueError(
            f"time cut-offs need an exact vector engine (numpy or faiss); this index uses "
            f"{getattr(eng, 'name', type(eng).__name__)!r}, whose top k over every row is "
            "not its top k over the visible ones"
        )
    pos = np.full((nq, kk), -1, dtype=np.int64)
    scores = np.full((nq, kk), np.nan)
    whole = [i for i, m in enumerate(masks) if m is None]
    if whole:
        p, s = vector_leg(table, engine, qv[whole], kk)
        pos[whole, : p.shape[1]], scores[whole, : p.shape[1]] = p, s
    scan = np.isfinite(qv).all(axis=1) & qv.any(axis=1)
    groups: dict[bytes, list[int]] = {}
    for i, m in enumerate(masks):
        if m is not None and scan[i]:
            groups.setdefault(np.packbits(m).tobytes(), []).append(i)
    for rows in groups.values():
        idx = np.flatnonzero(masks[rows[0]])
        if idx.size == 0:
            continue
        p, s = exact_topk(table.vectors[idx], qv[rows], kk)
        pos[rows, : p.shape[1]] = idx[p]
        scores[rows, : p.shape[1]] = s
    scores[pos < 0] = np.nan
    return pos, scores


def check_engine(engine: Any, vectors: np.ndarray | None) -> None:
    """Raise ``ValueError`` unless ``engine`` holds a matrix of ``vectors``' shape (its
    ``vectors`` attribute, else its ``n`` × ``d``)."""
    held = getattr(engine, "vectors", None)
    shape = held.shape if held is not None else (getattr(engine, "n", -1), getattr(engine, "d", -1))
    if vectors is None or tuple(shape) != vectors.shape:
        raise ValueError(
            f"the engine holds {tuple(shape)} vectors, this index's table"
            f" {None if vectors is None else vectors.shape}: build it over index.table.vectors"
        )
