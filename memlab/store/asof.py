"""The memory as of a time: each unit's time, and the keyword leg over the past alone.

A search may carry a per-query cut-off (Unix seconds; NaN = none): the query then sees
only the units that existed before it, as an agent's memory at that moment held them.
The rule, one owner (``visible_rows``): a unit is visible iff its time is < the cut-off;
a unit without a time is always visible; a query without a cut-off sees everything.

A unit's time is its file's (``unit_time``): a memory file named for its date,
``memory/**/YYYY-MM-DD.md``, is that date's UTC midnight; ``YYYY-MM-DD-HHMM.md``
(OpenClaw's own name for a second log of one day) adds the time of day, so several
sessions of one day keep their order. Anything else — ``MEMORY.md``, undated notes,
session transcripts, an impossible date — has no time and is always visible.

Both legs apply the cut-off before they cut at their depth (``memlab.retrieval.candidates.retrieve``),
so depth counts past units only and no later stage ever sees a future one:

- vector leg: an exact scan of the visible vectors (``memlab.store.legs.vector_leg_visible``);
- keyword leg: `PastKeywords`, an in-memory FTS5 table with the index's tokenizer holding
  the visible rows' FTS text (copied from the index, never re-read from the files), so
  ``bm25()`` sees the past's own statistics — rows, average length, rows per term — and a
  cut-off search returns exactly what an index of a workspace holding only the past would
  (tested: ``tests/test_asof.py``). Queries in ascending cut-off order only add rows.
Engine layer.
"""

from __future__ import annotations

import calendar
import math
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memlab.config.vocab import FTS_TOKENIZE
from memlab.store.legs import keyword_leg
from memlab.store.schema import db_error
from memlab.store.table import TEXT_BATCH, ChunkTable

__all__ = ["PastKeywords", "check_cutoffs", "unit_time", "unit_times", "visible_rows"]

# A dated memory file at any depth under memory/: the date, an optional -HHMM, then an
# optional suffix not starting with a digit (OpenClaw's later dated-file rule).
_DATED = re.compile(
    r"(?:^|/)memory/(?:[^/]+/)*([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:-([0-9]{2})([0-9]{2}))?(?:[^/0-9][^/]*)?\.md\Z"
)


def unit_time(path: str, source: str = "memory") -> float:
    """The time (Unix seconds, UTC) of the units of the file at workspace-relative ``path``.

    ``memory/[…/]YYYY-MM-DD.md`` → that date's UTC midnight; ``…YYYY-MM-DD-HHMM.md`` → plus
    HH hours MM minutes (HH 00–23, MM 00–59; another four digits are read as no time of
    day: midnight); a suffix not starting with a digit may follow (``2026-01-02-notes.md``:
    midnight). NaN (no time: always visible) for every other file, for an impossible date
    (``2026-02-30``, a year below 100, as OpenClaw rejects them) and for a source other
    than ``memory`` (session transcripts). ``\\`` is read as ``/``.
    """
    if source != "memory":
        return math.nan
    m = _DATED.search(path.replace("\\", "/"))
    if m is None:
        return math.nan
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if y < 100 or not 1 <= mo <= 12 or not 1 <= d <= calendar.monthrange(y, mo)[1]:
        return math.nan
    t = float(calendar.timegm((y, mo, d, 0, 0, 0)))
    if m.group(4) is not None:
        hh, mm = int(m.group(4)), int(m.group(5))
        if hh < 24 and mm < 60:
            t += hh * 3600.0 + mm * 60.0
    return t


def unit_times(table: ChunkTable) -> np.ndarray:
    """float64 [N]: ``unit_time`` of every unit of ``table`` (once per path and source),
    kept with the table (``ChunkTable.derived``)."""

    def compute(t: ChunkTable) -> np.ndarray:
        memo: dict[tuple[str, str], float] = {}
        out = np.empty(len(t))
        for i, (p, s) in enumerate(zip(t.paths, t.sources, strict=True)):
            key = (str(p), str(s))
            if key not in memo:
                memo[key] = unit_time(*key)
            out[i] = memo[key]
        return out

    return table.derived(("asof", "unit_times"), compute)


def visible_rows(times: np.ndarray, cutoff: float) -> np.ndarray:
    """bool [N]: the units a query with ``cutoff`` sees: ``isnan(time) or time < cutoff``;
    every unit when ``cutoff`` is NaN. A unit stamped exactly at the cut-off is hidden (a
    session is not part of the memory its own queries are answered from)."""
    t = np.asarray(times, dtype=np.float64)
    if math.isnan(cutoff):
        return np.ones(t.shape, dtype=bool)
    return np.isnan(t) | (t < cutoff)


def check_cutoffs(cutoffs: object, n: int) -> np.ndarray:
    """``cutoffs`` as float64 [n] (None → all NaN; a scalar is broadcast); ValueError for
    another length or an infinite value (NaN means "no cut-off")."""
    if cutoffs is None:
        return np.full(n, np.nan)
    arr = np.asarray(cutoffs, dtype=np.float64)
    arr = np.broadcast_to(arr, (n,)).copy() if arr.ndim == 0 else arr
    if arr.shape != (n,):
        raise ValueError(f"cutoffs must have one value per query ({n}), got shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError("cutoffs must be finite Unix seconds or NaN (no cut-off)")
    return arr


class PastKeywords:
    """The keyword leg of one index over a subset of its rows: an in-memory FTS5 table
    ``chunks_fts`` with the index's tokenizer, holding the rows `show` was last given,
    under their own rowids (so hits map to the index's table positions and equal scores
    keep the index's row order).

    ``connect`` opens the index (its ``chunks_fts`` is read for the rows' FTS text: the
    text the index matched, path prefix included); ``table`` is the index's loaded table.
    Nothing is written to the index. Not thread-safe across `show` and `search`.
    """

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        table: ChunkTable,
        fts_tokenizer: str,
        db_path: Path,
    ) -> None:
        self.connect = connect
        self.table = table
        self.db_path = db_path
        # check_same_thread: retrieve may run the keyword leg on a worker thread.
        self.mem = sqlite3.connect(":memory:", check_same_thread=False)
        self.mem.execute(
            f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize='{FTS_TOKENIZE[fts_tokenizer]}')"
        )
        self.shown = np.zeros(len(table), dtype=bool)

    def close(self) -> None:
        """Drop the in-memory table."""
        self.mem.close()

    def show(self, visible: np.ndarray) -> None:
        """Make the table hold exactly the rows where ``visible`` [N] is True: rows no
        longer visible are deleted, newly visible ones copied from the index (in rowid
        order). In ascending cut-off order only rows are added. FTS5 keeps its statistics
        (row count, total length, rows per term) exact through both."""
        visible = np.asarray(visible, dtype=bool)
        gone = np.flatnonzero(self.shown & ~visible)
        new = np.flatnonzero(visible & ~self.shown)
        with self.mem:
            if gone.size:
                self.mem.executemany(
                    "DELETE FROM chunks_fts WHERE rowid = ?",
                    [(int(r),) for r in self.table.rowids[gone]],
                )
            for i in range(0, new.size, TEXT_BATCH):
                rowids = [int(r) for r in self.table.rowids[new[i : i + TEXT_BATCH]]]
                q = ",".join("?" * len(rowids))
                try:
                    rows = (
                        self.connect()
                        .execute(f"SELECT rowid, text FROM chunks_fts WHERE rowid IN ({q})", rowids)
                        .fetchall()
                    )
                except sqlite3.DatabaseError as exc:
                    raise db_error(self.db_path, exc) from exc
                self.mem.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", rows)
        self.shown = visible.copy()

    def search(self, fts_query: str | None, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """``memlab.store.legs.keyword_leg`` over the rows shown: (table positions, bm25),
        best first, at most ``limit``."""
        return keyword_leg(lambda: self.mem, lambda: self.table, self.db_path, fts_query, limit)
