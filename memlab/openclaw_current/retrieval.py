"""The release's keyword candidates over memlab's index (spec §5.1–§5.5).

``keyword_candidates(index, query)`` runs, through a `MemoryIndex`, the searches
OpenClaw 2026.9.6 runs for one query — the body table with the strict AND query of
:func:`~memlab.openclaw_current.ranking.build_fts_query` and with each expansion term
(:func:`~memlab.openclaw_current.ranking.expansion_keywords`), 200 rows each, and the
same searches over a path table (one FTS5 row per distinct path, the index's
tokenizer) — and hands their raw ranks to
:func:`~memlab.openclaw_current.keyword.keyword_leg`, which merges them as the release
does (boost on every body hit, exact path tiers, the 200-wide window). It is the
candidate generation of ``keyword_mode="openclaw-current"`` (``memlab.retrieval.candidates``).
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.openclaw_current.keyword import WINDOW, keyword_leg
from memlab.openclaw_current.ranking import (
    build_fts_query,
    expansion_keywords,
    fts_substring_terms,
    js_trim,
)

if TYPE_CHECKING:
    from memlab.store import ChunkTable, MemoryIndex

__all__ = [
    "KeywordHit",
    "keyword_candidates",
    "path_ranks",
    "query_tokenizer",
    "substring_filter",
    "table_chunk_rows",
]

_TEXT_BATCH = 512  # chunk texts fetched per round while filtering by substring


def query_tokenizer(fts_tokenizer: str) -> str:
    """The release's query-building rule for an index of ``fts_tokenizer``: ``trigram``
    → ``trigram``; ``unicode61`` and ``porter`` (memlab's stemming variant of unicode61,
    which the release does not offer: its tokens are unicode61's) → ``unicode61``."""
    return "trigram" if fts_tokenizer == "trigram" else "unicode61"


def substring_filter(terms: Sequence[str]) -> Callable[[str], bool]:
    """Predicate "the text holds every term": each term, NFC-normalised, matched
    case-insensitively as a literal anywhere in the NFC-normalised text (the release's
    trigram substring filter); always True for no terms."""
    pats = [re.compile(re.escape(unicodedata.normalize("NFC", t)), re.IGNORECASE) for t in terms]

    def ok(text: str) -> bool:
        norm = unicodedata.normalize("NFC", text)
        return all(p.search(norm) for p in pats)

    return ok


@dataclass(frozen=True)
class KeywordHit:
    """One keyword result of the release: table position and the fields ranking reads.

    ``score``: the keyword score (boosted body score; path score or 1 for a path-only
    hit); ``text_score``: the best body textScore (0 = no body hit); ``path_score``:
    the path table's score; ``spec``: exact path tier 0–3; ``bm25``: the best body
    bm25 rank (None for a path-only hit)."""

    pos: int
    score: float
    text_score: float
    path_score: float
    has_body: bool
    spec: int
    bm25: float | None


def table_chunk_rows(table: ChunkTable) -> dict[str, Any]:
    """Per-table lookups, computed once (``ChunkTable.derived``): chunk id → position,
    and each path's first chunk (lowest (start line, end line, id), as the release)."""

    def compute(t: ChunkTable) -> dict[str, Any]:
        id_pos = {str(i): k for k, i in enumerate(t.ids)}
        first: dict[str, int] = {}
        order = sorted(
            range(len(t)), key=lambda k: (int(t.start_lines[k]), int(t.end_lines[k]), str(t.ids[k]))
        )
        for k in order:
            first.setdefault(str(t.paths[k]), k)
        return {"id_pos": id_pos, "first": first}

    return table.derived(("openclaw-current", "rows"), compute)


def _fill_paths(paths: Sequence[str], tokenizer: str) -> sqlite3.Connection:
    # an in-memory FTS5 table, one row per path, sorted (the release's insertion order)
    con = sqlite3.connect(":memory:", check_same_thread=False)
    tok = "trigram case_sensitive 0" if tokenizer == "trigram" else tokenizer
    con.execute(f"CREATE VIRTUAL TABLE paths USING fts5(path, tokenize='{tok}')")
    con.executemany("INSERT INTO paths(path) VALUES (?)", [(p,) for p in sorted(set(paths))])
    return con


class PathTable:
    """The release's path table: one FTS5 row per distinct path of ``table``, or of its
    ``visible`` rows only (a time cut-off: the paths a workspace of the past holds, so
    ``bm25()`` sees the past's own statistics). Without a mask the table is built once per
    chunk table (``ChunkTable.derived``); with one it lives as long as this object."""

    def __init__(
        self, table: ChunkTable, tokenizer: str, visible: np.ndarray | None = None
    ) -> None:
        if visible is None:
            self.paths = table.derived(
                ("openclaw-current", "paths"), lambda t: sorted(set(map(str, t.paths)))
            )
            self.con = table.derived(
                ("openclaw-current", "path-fts", tokenizer),
                lambda t: _fill_paths(self.paths, tokenizer),
            )
        else:
            self.paths = sorted(set(map(str, np.asarray(table.paths)[np.asarray(visible)])))
            self.con = _fill_paths(self.paths, tokenizer)


def path_ranks(
    table: ChunkTable,
    term: str,
    tokenizer: str = "unicode61",
    *,
    paths: PathTable | None = None,
) -> dict[str, float]:
    """path → FTS5 bm25 rank of ``build_fts_query(term)`` over a table of the distinct
    paths (best 200); {} when the term has no token or SQLite rejects the query.
    ``paths``: the path table to search (default: every path of ``table``).

    Under ``trigram`` the paths must also hold every ``fts_substring_terms(term)``
    (``substring_filter``, applied before the 200-row limit); when no token is long
    enough for a MATCH, every path holding them is a row of rank 0 (path score 1, as
    the release scores a substring-only path hit), ordered by path."""
    fts = build_fts_query(term, tokenizer)
    subs = fts_substring_terms(term, tokenizer)
    if fts is None and not subs:
        return {}
    pt = paths if paths is not None else PathTable(table, tokenizer)
    con = pt.con
    if not subs:
        try:
            rows = con.execute(
                "SELECT path, bm25(paths) AS r FROM paths WHERE paths MATCH ? ORDER BY r LIMIT ?",
                (fts, WINDOW),
            ).fetchall()
        except sqlite3.OperationalError:
            return {}
        return {p: float(r) for p, r in rows}
    if fts is None:
        rows = [(p, 0.0) for p in pt.paths]
    else:
        try:
            rows = con.execute(
                "SELECT path, bm25(paths) AS r FROM paths WHERE paths MATCH ? ORDER BY r, path",
                (fts,),
            ).fetchall()
        except sqlite3.OperationalError:
            return {}
    ok = substring_filter(subs)
    return {p: float(r) for p, r in [(p, r) for p, r in rows if ok(p)][:WINDOW]}


Search = Callable[[str | None, int], tuple[np.ndarray, np.ndarray]]


def _body_ranks(
    index: MemoryIndex, term: str, tokenizer: str, search: Search, visible: np.ndarray | None
) -> dict[int, float | None]:
    # position → bm25 rank, best 200; under trigram short tokens filter the texts before
    # the limit, and a term without a MATCH is a substring scan in table (rowid) order
    # whose hits have no rank (None: textScore 0, as the release scores them). ``search``
    # is the keyword leg (the index's, or the past's under a cut-off, whose rows are
    # ``visible``).
    fts = build_fts_query(term, tokenizer)
    subs = fts_substring_terms(term, tokenizer)
    if not subs:
        pos, ranks = search(fts, WINDOW)
        return dict(zip(pos.tolist(), ranks.tolist(), strict=True))
    if fts is None:
        rows = range(len(index.table)) if visible is None else np.flatnonzero(visible).tolist()
        order: list[tuple[int, float | None]] = [(k, None) for k in rows]
    else:
        pos, ranks = search(fts, len(index.table))
        order = list(zip(pos.tolist(), ranks.tolist(), strict=True))
    ok = substring_filter(subs)
    out: dict[int, float | None] = {}
    for start in range(0, len(order), _TEXT_BATCH):
        batch = order[start : start + _TEXT_BATCH]
        texts = index.texts([k for k, _ in batch])
        for (k, r), text in zip(batch, texts, strict=True):
            if ok(text):
                out[k] = r
                if len(out) == WINDOW:
                    return out
    return out


def keyword_candidates(
    index: MemoryIndex,
    query: str,
    tokenizer: str | None = None,
    *,
    visible: np.ndarray | None = None,
    search: Search | None = None,
) -> tuple[list[KeywordHit], dict[str, Mapping[str, float | None]], dict[str, Mapping[str, float]]]:
    """The release's keyword results for ``query`` over ``index`` (spec §5.2–§5.5).

    Returns (hits in the release's keyword order, body ranks and path ranks per search
    string — chunk id → bm25 and path → bm25, the raw legs ``rank_hits`` takes). Body
    searches: the query and each expansion term, 200 rows by bm25; path searches
    likewise over the distinct paths; merged by ``keyword_leg`` (max per chunk, boost
    with the full query, exact tiers first, 200 non-exact). Empty for a blank query.
    ``tokenizer``: the query-building rule (default ``query_tokenizer`` of the index's
    FTS tokenizer); under ``trigram`` a substring-only body hit has rank None.

    ``visible`` (bool [N], a time cut-off: ``memlab.store.asof``) with ``search`` (the
    keyword leg over those rows: ``PastKeywords.search``): the results an index of a
    workspace holding only the visible rows would give — body searches through
    ``search``, the path table of the visible paths, and only their first chunks.
    """
    tokenizer = tokenizer or query_tokenizer(index.fts_tokenizer)
    q = js_trim(query)
    if not q:
        return [], {}, {}
    table = index.table
    rows = table_chunk_rows(table)
    id_pos, first = rows["id_pos"], rows["first"]
    if (visible is None) != (search is None):
        raise ValueError("keyword_candidates: pass visible and search together (or neither)")
    search = search or index.keyword_search
    if visible is not None:
        visible = np.asarray(visible, dtype=bool)
        first = {p: k for p, k in first.items() if visible[k]}
    pt = PathTable(table, tokenizer, visible)
    terms = [q, *(t for t in expansion_keywords(q, tokenizer) if t != q)]
    body: dict[str, dict[int, float | None]] = {
        t: _body_ranks(index, t, tokenizer, search, visible) for t in terms
    }
    paths = {t: path_ranks(table, t, tokenizer, paths=pt) for t in terms}
    body_pos: set[int] = set()
    for ranks in body.values():
        body_pos.update(ranks)
    hit_pos = body_pos | set(first.values())
    # only body hits are boosted by their text; a path's first chunk needs none
    texts = dict(zip(sorted(body_pos), index.texts(sorted(body_pos)), strict=True))
    ids = table.ids
    chunks = [
        {
            "id": str(ids[k]),
            "path": str(table.paths[k]),
            "startLine": int(table.start_lines[k]),
            "endLine": int(table.end_lines[k]),
            "text": texts.get(k, ""),
            "source": str(table.sources[k]),
        }
        for k in sorted(hit_pos)
    ]
    bm25 = {t: {str(ids[k]): r for k, r in ranks.items()} for t, ranks in body.items()}
    hits = keyword_leg(q, chunks, bm25, paths, tokenizer)
    best: dict[str, float] = {}
    for ranks in bm25.values():
        for cid, r in ranks.items():
            if r is not None:
                best[cid] = min(r, best.get(cid, r))
    out = [
        KeywordHit(
            pos=id_pos[h["id"]],
            score=float(h["score"]),
            text_score=float(h["text_score"]),
            path_score=float(h["path_score"]),
            has_body=bool(h["has_body"]),
            spec=int(h["spec"]),
            bm25=best.get(h["id"]) if h["has_body"] else None,
        )
        for h in hits
    ]
    return out, bm25, paths
