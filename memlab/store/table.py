"""The chunk table: an index's chunks as position-aligned arrays, loaded in batches.

``load_table`` reads every chunk row (vectors included) inside one read transaction,
so the row count, the rows and the ``data_version`` they are tagged with come from one
snapshot; ``fetch_texts`` reads texts by rowid on demand (texts are never held in
memory). Chunk rowids only grow, so a table loaded before another connection's sync
never maps a rowid to another chunk.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.store.schema import IndexCorruptError, db_error

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LOAD_BATCH", "ChunkTable", "fetch_texts", "load_table"]

# Rows fetched per batch when loading the chunk table (bounds the loader's extra memory).
LOAD_BATCH = 50_000
# Rowids per `IN (...)` query when fetching texts (below SQLite's variable limit).
TEXT_BATCH = 500


@dataclass
class ChunkTable:
    """The index's chunks as arrays, position-aligned (position = row in these arrays).

    ``vectors`` is float32 [N, d] (or None in keyword-only mode). Texts are not
    kept in memory; fetch them with ``MemoryIndex.texts(positions)``.
    """

    rowids: np.ndarray
    ids: np.ndarray
    paths: np.ndarray
    sources: np.ndarray
    start_lines: np.ndarray
    end_lines: np.ndarray
    mtimes: np.ndarray
    vectors: np.ndarray | None
    # Which source index each chunk comes from when tables of several indexes are
    # concatenated (a lab's groups): int64 [N], or None for one index. Chunks of two
    # segments are never neighbours, even when their paths are equal.
    segments: np.ndarray | None = None
    # Recall annotations of the 2026.9 release (``memlab.chunking.annotations``),
    # stored per chunk by an index built with that release's chunker: ``importance``
    # float64 [N] (NaN = none), ``project_keys`` object [N] (None = none, the release's
    # invalid marker = malformed), ``triggers`` object [N] ("a; b" or None). None = this
    # index stores no annotations (every chunk unannotated).
    importance: np.ndarray | None = None
    project_keys: np.ndarray | None = None
    triggers: np.ndarray | None = None
    # Columns derived from the ones above (decay times, neighbour maps, heading flags),
    # computed once per table by the stage that needs them: see ``derived``.
    derived_cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.rowids)

    def derived(self, key: Any, compute: Callable[[ChunkTable], Any]) -> Any:
        """A column derived from this table, computed by ``compute(table)`` on first use
        and kept with the table (keys name the quantity and its parameters, e.g.
        ``("times", "exact")``). A table is immutable once loaded, so the value never
        goes stale; a reloaded index has a new table and a fresh cache."""
        if key not in self.derived_cache:
            self.derived_cache[key] = compute(self)
        return self.derived_cache[key]

    def positions(self, rowids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Positions of the given chunk rowids (rowids are sorted ascending)."""
        return np.searchsorted(self.rowids, np.asarray(rowids, dtype=np.int64))

    def frame(self) -> pd.DataFrame:
        """A DataFrame view: docno (chunk id), path, source, start_line, end_line, mtime."""
        import pandas as pd

        return pd.DataFrame(
            {
                "docno": self.ids,
                "path": self.paths,
                "source": self.sources,
                "start_line": self.start_lines,
                "end_line": self.end_lines,
                "mtime": self.mtimes,
            }
        )


def load_table(
    conn: sqlite3.Connection, db_path: Path, *, with_vectors: bool, annotations: bool = False
) -> tuple[ChunkTable, int]:
    """Every chunk row of ``conn`` as a ``ChunkTable`` (ordered by rowid), and the
    ``PRAGMA data_version`` of the snapshot it was read from.

    ``with_vectors`` False (keyword-only) → ``vectors`` None and no blob is read. With
    vectors, d = the byte length of the first non-NULL embedding / 4; a NULL or
    wrong-length blob gives a zero row; no chunk, or no blob at all, gives d = 0 (and an
    empty table gives ``vectors`` None). ``annotations`` (an index of the 2026.9 file rule,
    ``memlab.store.filerules.stores_annotations``) fills ``importance`` (NULL → NaN),
    ``project_keys`` and ``triggers`` (NULL → None); otherwise, or on a file written before
    those columns existed, they stay None. Raises ``IndexCorruptError`` /
    ``IndexLockedError`` / ``IndexUnusableError`` (``db_error``).
    """
    # Rows are read in batches straight into preallocated arrays: holding every row
    # as Python tuples first would cost ~2× the vector bytes at peak (1M chunks: 3.6
    # GB instead of ~1.7 GB). Paths and sources repeat: one str object per value.
    # One read transaction: the version, the row count and the scan see one snapshot.
    own = not conn.in_transaction
    cur: sqlite3.Cursor | None = None
    try:
        if own:
            conn.execute("BEGIN")
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        n = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        dims = 0
        if with_vectors:
            row = conn.execute(
                "SELECT length(embedding) FROM chunks WHERE embedding IS NOT NULL LIMIT 1"
            ).fetchone()
            dims = (row[0] or 0) // 4 if row else 0
        blob = "c.embedding" if dims else "NULL"  # no vectors: do not read the blobs
        if annotations:
            have = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
            annotations = {"importance", "project_key", "triggers"} <= have
        ann = ", c.importance, c.project_key, c.triggers" if annotations else ""
        cur = conn.execute(
            "SELECT c.rowid, c.id, c.path, c.source, c.start_line, c.end_line,"
            f" coalesce(f.mtime, 0), {blob}{ann} FROM chunks c"
            " LEFT JOIN files f ON f.path = c.path ORDER BY c.rowid"
        )
        rowids = np.empty(n, dtype=np.int64)
        ids = np.empty(n, dtype=object)
        paths = np.empty(n, dtype=object)
        sources = np.empty(n, dtype=object)
        starts = np.empty(n, dtype=np.int64)
        ends = np.empty(n, dtype=np.int64)
        mtimes = np.empty(n, dtype=np.float64)
        vectors = np.zeros((n, dims), dtype=np.float32) if with_vectors else None
        importance = np.full(n, np.nan) if annotations else None
        project_keys = np.full(n, None, dtype=object) if annotations else None
        triggers = np.full(n, None, dtype=object) if annotations else None
        shared: dict[str, str] = {}
        i = 0
        while i < n and (rows := cur.fetchmany(LOAD_BATCH)):
            m = len(rows)
            cols = list(zip(*rows, strict=True))
            rowids[i : i + m] = cols[0]
            ids[i : i + m] = cols[1]
            paths[i : i + m] = [shared.setdefault(x, x) for x in cols[2]]
            sources[i : i + m] = [shared.setdefault(x, x) for x in cols[3]]
            starts[i : i + m] = cols[4]
            ends[i : i + m] = cols[5]
            mtimes[i : i + m] = cols[6]
            if vectors is not None and dims:
                for j, b in enumerate(cols[7]):
                    if b is not None and len(b) == dims * 4:
                        vectors[i + j] = np.frombuffer(b, dtype=np.float32)
            if importance is not None and project_keys is not None and triggers is not None:
                importance[i : i + m] = [np.nan if v is None else float(v) for v in cols[8]]
                project_keys[i : i + m] = [
                    None if v is None else shared.setdefault(v, v) for v in cols[9]
                ]
                triggers[i : i + m] = cols[10]
            i += m
        if i != n:  # impossible within one snapshot; never hand out a partial table
            raise IndexCorruptError(f"{db_path}: counted {n} chunks but read {i}")
    except sqlite3.DatabaseError as exc:
        raise db_error(db_path, exc) from exc
    finally:
        # Close the cursor first: a rollback under an open cursor leaves the
        # connection pinned to the old snapshot (it would never see later commits).
        with contextlib.suppress(sqlite3.Error):
            if cur is not None:
                cur.close()
            if own and conn.in_transaction:
                conn.rollback()  # read-only: ends the snapshot
    if vectors is not None and n == 0:
        vectors = None
    table = ChunkTable(
        rowids=rowids,
        ids=ids,
        paths=paths,
        sources=sources,
        start_lines=starts,
        end_lines=ends,
        mtimes=mtimes,
        vectors=vectors,
        importance=importance,
        project_keys=project_keys,
        triggers=triggers,
    )
    return table, version


def fetch_texts(conn: sqlite3.Connection, db_path: Path, rowids: np.ndarray) -> list[str]:
    """Chunk texts for ``rowids`` (order and repeats kept), read in batches of
    ``TEXT_BATCH`` rowids; a rowid no longer in ``chunks`` (deleted by a later sync)
    gives ``""``. SQLite errors are mapped by ``db_error``."""
    found: dict[int, str] = {}
    uniq = list(dict.fromkeys(int(r) for r in rowids))
    try:
        for i in range(0, len(uniq), TEXT_BATCH):
            part = uniq[i : i + TEXT_BATCH]
            q = ",".join("?" * len(part))
            found.update(conn.execute(f"SELECT rowid, text FROM chunks WHERE rowid IN ({q})", part))
    except sqlite3.DatabaseError as exc:
        raise db_error(db_path, exc) from exc
    return [found.get(int(r), "") for r in rowids]
