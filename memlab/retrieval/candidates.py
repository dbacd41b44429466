"""Candidates: both legs retrieved once per (index, queries, depth), kept as arrays.

A `CandidateSet` holds, for Q queries, the union of each query's keyword and
vector hits in OpenClaw's insertion order (vector hits by vector rank, then
keyword-only hits by bm25 order), padded to C columns. Every fusion, decay,
MMR and threshold setting is a cheap re-scoring of these arrays — this is what
makes a sweep over hundreds of settings take milliseconds.

Size: one module because `retrieve` builds the layout `CandidateSet` holds:
`merge_row` fixes the insertion order, `pad_rows` the padding, and the keyword legs
(`KEYWORD_LEGS`, `current_arrays`) the ``extra`` arrays, so a new column touches all
of them. The legs could move out once a caller other than `retrieve` needs them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.config.vocab import DEFAULT_MEMORY_FILES, KEYWORD_MODES
from memlab.retrieval.textquery import build_fts_query, build_fts_query_or, extract_keywords
from memlab.store.asof import check_cutoffs, unit_times, visible_rows

if TYPE_CHECKING:
    import pandas as pd

    from memlab.store import ChunkTable, MemoryIndex

ABSENT_RANK = -1
# From this many chunks the keyword leg runs in a thread beside the vector scan (below
# it the hand-off costs more than the overlap saves; measured in benchmarks/search_latency.py).
PARALLEL_LEGS_MIN_ROWS = 5_000


@dataclass(frozen=True)
class RetrievalSpec:
    """What a system needs from an index and from candidate generation: one value that
    the CLI, the lab, the widgets and the benchmarks all honour (``Pipeline.retrieval_spec``).

    ``keyword``/``vector``: the legs it reads; ``keyword_mode``: ``and`` (OpenClaw) or
    ``or``; ``keyword_fallback``: per-keyword searches when the whole query finds nothing
    (OpenClaw does it only without vectors); ``fts_tokenizer``: the FTS5 tokenizer of the
    index it was defined on, or None for "whatever the index has"; ``memory_files``: the
    memory-file rule (``memlab.config.vocab.MEMORY_FILE_RULES``: discovery and chunking) of the
    index it runs on, never "whatever" (the two rules hold different chunks). Two systems with equal
    specs rank one shared candidate set (the deeper of their depths serves both).
    """

    keyword: bool
    vector: bool
    keyword_mode: str
    keyword_fallback: bool
    fts_tokenizer: str | None = None
    memory_files: str = DEFAULT_MEMORY_FILES

    @property
    def candidate_key(self) -> tuple[str, bool]:
        """What distinguishes two candidate sets of one index: (keyword_mode, fallback)."""
        return self.keyword_mode, self.keyword_fallback


def candidate_depth(max_results: int, candidate_multiplier: float, cap: int = 200) -> int:
    """Candidates per leg: min(cap, floor(max_results × candidate_multiplier)) (OpenClaw: 24)."""
    return min(cap, math.floor(max_results * candidate_multiplier))


@dataclass
class CandidateSet:
    """[query × candidate] arrays of both legs' evidence.

    Attributes (all [Q, C] unless noted; C = widest union; padding has
    ``pos == -1``):
        pos: chunk position in ``table`` (−1 = padding).
        vec_score: cosine similarity (NaN when the vector leg did not find it).
        text_raw: FTS5 ``bm25()`` value, negative = better (NaN when absent).
        vec_rank, text_rank: 0-based rank within each leg (−1 when absent).
        keyword_fallback: [Q] bool, the per-keyword fallback found these hits
            (keyword-only mode, when the AND query found nothing).
        times: [Q] the question's own "now" (Unix seconds; NaN = wall clock).
        cutoffs: [Q] the time cut-off each query was retrieved with (Unix seconds;
            NaN = none): only units older than it are candidates (``memlab.store.asof``).
    """

    qids: list[str]
    queries: list[str]
    pos: np.ndarray
    vec_score: np.ndarray
    text_raw: np.ndarray
    vec_rank: np.ndarray
    text_rank: np.ndarray
    table: ChunkTable
    depth: int
    keyword_mode: str = "and"
    keyword_fallback: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cutoffs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    index: MemoryIndex | None = None
    query_vectors: np.ndarray | None = None
    # Per-candidate arrays [Q, C] of a candidate generation beyond the two legs (e.g.
    # ``keyword_mode="openclaw-current"``: ``CURRENT_KEYWORD_ARRAYS``); {} otherwise.
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    _texts: dict[int, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        q = len(self.qids)
        if len(self.keyword_fallback) != q:
            self.keyword_fallback = np.zeros(q, dtype=bool)
        if len(self.times) != q:
            self.times = np.full(q, np.nan)
        if len(self.cutoffs) != q:
            self.cutoffs = np.full(q, np.nan)

    def __repr__(self) -> str:
        return (
            f"CandidateSet(queries={len(self.qids)}, width={self.width}, depth={self.depth},"
            f" keyword_mode={self.keyword_mode!r}, chunks={len(self.table)})"
        )

    def __len__(self) -> int:
        return len(self.qids)

    @property
    def width(self) -> int:
        return int(self.pos.shape[1]) if self.pos.ndim == 2 else 0

    @property
    def valid(self) -> np.ndarray:
        return self.pos >= 0

    @property
    def has_text(self) -> np.ndarray:
        return ~np.isnan(self.text_raw)

    @property
    def has_vec(self) -> np.ndarray:
        return ~np.isnan(self.vec_score)

    def texts(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        """Chunk texts for table positions, fetched from the index once and cached."""
        pos = [int(p) for p in positions]
        missing = [p for p in dict.fromkeys(pos) if p not in self._texts]
        if missing:
            if self.index is None:
                raise RuntimeError("this CandidateSet has no index to read texts from")
            self._texts.update(zip(missing, self.index.texts(missing), strict=True))
        return [self._texts[p] for p in pos]

    def vectors(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """Chunk vectors [n, d] for table positions (embedding MMR)."""
        if self.table.vectors is None:
            raise RuntimeError("keyword-only index: no chunk vectors")
        return self.table.vectors[np.asarray(positions, dtype=np.int64)]

    def subset(self, rows: Sequence[int] | np.ndarray) -> CandidateSet:
        """The candidates of some queries (by row index), e.g. a train/test split."""
        r = np.asarray(rows, dtype=np.int64)
        return CandidateSet(
            qids=[self.qids[i] for i in r],
            queries=[self.queries[i] for i in r],
            pos=self.pos[r],
            vec_score=self.vec_score[r],
            text_raw=self.text_raw[r],
            vec_rank=self.vec_rank[r],
            text_rank=self.text_rank[r],
            table=self.table,
            depth=self.depth,
            keyword_mode=self.keyword_mode,
            keyword_fallback=self.keyword_fallback[r],
            times=self.times[r],
            cutoffs=self.cutoffs[r],
            index=self.index,
            query_vectors=None if self.query_vectors is None else self.query_vectors[r],
            extra={k: v[r] for k, v in self.extra.items()},
            _texts=self._texts,
        )

    def frame(self) -> pd.DataFrame:
        """Long view: one row per (query, candidate) with both legs' scores and ranks."""
        import pandas as pd

        qi, ci = np.nonzero(self.valid)
        pos = self.pos[qi, ci]
        t = self.table
        return pd.DataFrame(
            {
                "qid": np.asarray(self.qids, dtype=object)[qi],
                "docno": t.ids[pos],
                "path": t.paths[pos],
                "start_line": t.start_lines[pos],
                "end_line": t.end_lines[pos],
                "vector_score": self.vec_score[qi, ci],
                "text_raw": self.text_raw[qi, ci],
                "vector_rank": self.vec_rank[qi, ci],
                "text_rank": self.text_rank[qi, ci],
                "column": ci,
            }
        )


def retrieve(
    index: MemoryIndex,
    queries: Sequence[str],
    *,
    qids: Sequence[str] | None = None,
    depth: int = 24,
    keyword: bool = True,
    vector: bool = True,
    keyword_mode: str = "and",
    keyword_fallback: bool = False,
    times: Sequence[float] | np.ndarray | None = None,
    query_vectors: np.ndarray | None = None,
    vector_depth: int | None = None,
    cutoffs: Sequence[float] | np.ndarray | None = None,
) -> CandidateSet:
    """Run both legs for a batch of queries and merge them by chunk.

    Keyword leg: FTS5 with OpenClaw's AND query (``keyword_mode="and"``) or an
    OR of the query's keywords (``"or"``), ``depth`` rows by bm25; ``"openclaw-current"``:
    OpenClaw 2026.9.6's keyword results (strict AND query, expansion terms when thin,
    filename leg with exact tiers, a 200-wide window whatever ``depth``; the chunks of
    path-only hits have NaN bm25; ``CandidateSet.extra`` holds ``CURRENT_KEYWORD_ARRAYS``,
    ``keyword_fallback`` is ignored). Vector leg:
    exact cosine top ``vector_depth`` (default ``depth``) over the query
    embeddings (computed here unless ``query_vectors`` are given). With
    ``keyword_fallback`` (OpenClaw's keyword-only mode) a query whose AND
    search finds nothing is re-run per extracted keyword, keeping each chunk's
    best bm25. A leg that is off, or unavailable (keyword-only index), leaves
    its arrays NaN / −1.

    ``cutoffs`` [Q] (Unix seconds, NaN = none; a scalar applies to every query): the
    memory as of each query (``memlab.store.asof``): only units whose file time is below
    the query's cut-off (and undated units) are candidates, in both legs before each is
    cut at its depth. The keyword leg searches an in-memory FTS5 table of the visible rows
    (``MemoryIndex.past_keywords``: bm25 with the past's own statistics), the vector leg
    scans the visible vectors exactly (an approximate vector engine is refused). The
    result equals a retrieval on an index of a workspace holding only those units
    (positions aside); under ``keyword_mode="openclaw-current"`` the filename leg searches
    the visible paths only (``keyword_candidates(visible=…)``).
    """
    if keyword_mode not in KEYWORD_MODES:
        raise ValueError(f"keyword_mode must be one of {KEYWORD_MODES}; got {keyword_mode!r}")
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    queries = [str(q) for q in queries]
    nq = len(queries)
    qids = [str(q) for q in qids] if qids is not None else [str(i) for i in range(nq)]
    if len(qids) != nq:
        raise ValueError(f"{len(qids)} qids for {nq} queries")
    cut = check_cutoffs(cutoffs, nq)
    timed = bool(np.isfinite(cut).any())
    index.ensure_synced()
    table = index.table
    vdepth = depth if vector_depth is None else vector_depth
    utimes = unit_times(table) if timed else None
    masks: dict[float, np.ndarray | None] = {}

    def visible(qi: int) -> np.ndarray | None:
        # The rows query qi sees; None = all of them (no cut-off, or nothing hidden).
        c = float(cut[qi])
        if math.isnan(c) or utimes is None:
            return None
        if c not in masks:
            m = visible_rows(utimes, c)
            masks[c] = None if m.all() else m
        return masks[c]

    fallback = np.zeros(nq, dtype=bool)
    leg = KEYWORD_LEGS[keyword_mode]  # the keyword leg by name
    leg_hits: list[list[Any]] = [[] for _ in queries]

    def keyword_leg() -> list[tuple[np.ndarray, np.ndarray]]:
        out: list[tuple[np.ndarray, np.ndarray]] = [
            (np.empty(0, dtype=np.int64), np.empty(0)) for _ in queries
        ]
        if not keyword:
            return out
        past = index.past_keywords() if timed else None
        # Ascending cut-offs (none first): the past's table only ever gains rows.
        order = sorted(range(nq), key=lambda i: (not math.isnan(cut[i]), np.nan_to_num(cut[i])))
        try:
            for qi in order:
                query = queries[qi]
                m = visible(qi)
                search = index.keyword_search
                if m is not None and past is not None:
                    past.show(m)
                    search = past.search
                ks = KeywordSearch(index, search, m, depth, keyword_fallback)
                kw_pos, kw_rank, fallback[qi], leg_hits[qi] = leg(ks, query)
                out[qi] = (kw_pos, kw_rank)
        finally:
            if past is not None:
                past.close()
        return out

    def vector_leg() -> tuple[np.ndarray, np.ndarray]:
        assert query_vectors is not None
        if not timed:
            return index.vector_search(query_vectors, vdepth)
        return index.vector_search(query_vectors, vdepth, visible=visible)

    vec_pos = np.full((nq, 0), -1, dtype=np.int64)
    vec_sc = np.full((nq, 0), np.nan)
    run_vector = vector and index.has_vectors and len(table)
    if run_vector and query_vectors is None:
        query_vectors = index.embed_queries(queries)
    if run_vector and keyword and len(table) >= PARALLEL_LEGS_MIN_ROWS:
        # A large index: SQLite (FTS5) and the vector scan both release the GIL, so the
        # keyword leg runs in a thread while this one scans (the table is loaded and
        # the connection is used by that thread alone meanwhile).
        with ThreadPoolExecutor(1) as pool:
            kw_future = pool.submit(keyword_leg)
            vec_pos, vec_sc = vector_leg()
            kw = kw_future.result()
    else:
        if run_vector:
            vec_pos, vec_sc = vector_leg()
        kw = keyword_leg()
    rows: list[Row] = [
        merge_row(vec_pos[qi], vec_sc[qi], kw_pos, kw_rank)
        for qi, (kw_pos, kw_rank) in enumerate(kw)
    ]

    pos, vs, tr, vr, kr = pad_rows(rows)
    leg_arrays = KEYWORD_LEG_ARRAYS.get(keyword_mode)
    extra = {} if leg_arrays is None else leg_arrays(pos, leg_hits)
    tarr = np.full(nq, np.nan) if times is None else np.asarray(times, dtype=np.float64)
    if tarr.shape != (nq,):
        raise ValueError(f"times must have one value per query ({nq}), got shape {tarr.shape}")
    return CandidateSet(
        qids=qids,
        queries=queries,
        pos=pos,
        vec_score=vs,
        text_raw=tr,
        vec_rank=vr,
        text_rank=kr,
        table=table,
        depth=depth,
        keyword_mode=keyword_mode,
        keyword_fallback=fallback,
        times=tarr,
        cutoffs=cut,
        index=index,
        query_vectors=query_vectors,
        extra=extra,
    )


@dataclass(frozen=True)
class KeywordSearch:
    """One query's keyword search as a keyword leg sees it: the index, its FTS5 search
    (``search(fts_query, depth) -> (positions, bm25)``: the past's own table under a time
    cut-off), the rows visible under that cut-off (None = all), the leg's depth and
    whether OpenClaw's per-keyword fallback is on."""

    index: MemoryIndex
    search: Callable[[str, int], tuple[np.ndarray, np.ndarray]]
    visible: np.ndarray | None
    depth: int
    fallback: bool


# A keyword leg's answer for one query: positions, bm25 (NaN: a hit with no body match),
# whether the per-keyword fallback found them, and the leg's own hits (for its arrays).
LegHits = tuple[np.ndarray, np.ndarray, bool, list[Any]]


def fts_leg(ks: KeywordSearch, query: str, fts_query: str) -> LegHits:
    """``depth`` rows by bm25 for ``fts_query``; when it finds nothing and the fallback is
    on, the query re-run per extracted keyword (``_per_keyword``: each chunk's best bm25)."""
    kw_pos, kw_rank = ks.search(fts_query, ks.depth)
    if ks.fallback and kw_pos.size == 0:
        kw_pos, kw_rank = _per_keyword(ks.search, query, ks.depth)
        return kw_pos, kw_rank, kw_pos.size > 0, []
    return kw_pos, kw_rank, False, []


def and_leg(ks: KeywordSearch, query: str) -> LegHits:
    """OpenClaw's keyword leg: every token of the query (``build_fts_query``)."""
    return fts_leg(ks, query, build_fts_query(query))


def or_leg(ks: KeywordSearch, query: str) -> LegHits:
    """Any of the query's keywords (``build_fts_query_or``)."""
    return fts_leg(ks, query, build_fts_query_or(query))


def release_leg(ks: KeywordSearch, query: str) -> LegHits:
    """OpenClaw 2026.9.6's keyword results (``_current_keyword``; no per-keyword fallback:
    its expansion terms play that part)."""
    past = None if ks.visible is None else (ks.visible, ks.search)
    pos, rank, hits = _current_keyword(ks.index, query, past)
    return pos, rank, False, hits


def qmd_leg(ks: KeywordSearch, query: str) -> LegHits:
    """QMD's keyword search over whole documents (``memlab.qmd``): the
    ``QMD_LIST_LIMIT`` (20) best files for QMD's query (``build_fts5_query``: every term
    must match, as a prefix) whatever the depth, each hit placed on its file's best chunk
    (``best_chunk``) with the document's bm25; under a time cut-off, the documents of the
    visible rows. No per-keyword fallback (QMD has none)."""
    from memlab.qmd import QMD_LIST_LIMIT, best_chunk, build_fts5_query

    search, docs = qmd_documents(ks.index, ks.visible)
    pos, bm25 = [], []
    for path, score in search.search(build_fts5_query(query), QMD_LIST_LIMIT):
        positions, texts = docs[path]
        pos.append(int(positions[best_chunk(query, texts)]))
        bm25.append(score)
    return np.asarray(pos, dtype=np.int64), np.asarray(bm25, dtype=np.float64), False, []


def qmd_documents(index: MemoryIndex, visible: np.ndarray | None) -> tuple[Any, dict[str, Any]]:
    """The `memlab.qmd.DocumentSearch` of an index's files (those of the ``visible`` rows
    under a time cut-off) and {path: (positions in line order, their texts)}, kept with
    the index's table (``ChunkTable.derived``, one per visible set)."""
    from memlab.qmd import DocumentSearch, documents_of

    table = index.table
    rows = np.arange(len(table)) if visible is None else np.flatnonzero(visible)
    key = ("qmd-documents", None if visible is None else hash(visible.tobytes()))

    def compute(t: ChunkTable) -> tuple[Any, dict[str, Any]]:
        docs = documents_of(t.paths, t.start_lines, rows, index.texts)
        search = DocumentSearch.build({p: text for p, (text, _, _) in docs.items()})
        return search, {p: (pos, texts) for p, (_, pos, texts) in docs.items()}

    return table.derived(key, compute)


# The keyword legs by name (``vocab.KEYWORD_MODES``: a pipeline's ``keyword_mode``).
KEYWORD_LEGS: Mapping[str, Callable[[KeywordSearch, str], LegHits]] = MappingProxyType(
    {"and": and_leg, "or": or_leg, "openclaw-current": release_leg, "qmd": qmd_leg}
)
if set(KEYWORD_LEGS) != set(KEYWORD_MODES):  # a new mode needs its leg
    raise RuntimeError(f"KEYWORD_LEGS {sorted(KEYWORD_LEGS)} must be vocab.KEYWORD_MODES")


# The arrays [Q, C] of ``keyword_mode="openclaw-current"`` (OpenClaw 2026.9.6's keyword
# results, ``memlab.openclaw_current.retrieval``): whether the candidate is one of them,
# its keyword score (boosted body score, or the path score / 1 of a path-only hit), best
# body textScore (0 = none), path score, body hit or not, exact path tier 0–3.
CURRENT_KEYWORD_ARRAYS = ("kw_hit", "kw_score", "kw_text", "kw_path", "kw_body", "kw_spec")


def _current_keyword(
    index: MemoryIndex, query: str, past: tuple[np.ndarray, Any] | None = None
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The release's keyword results as (positions, bm25 of the body hit or NaN, hits):
    every search of one query (strict, expansion terms, path table), 200 rows each,
    merged as the release merges them (``keyword_candidates``); ``past``: (visible rows,
    their keyword search) under a time cut-off."""
    from memlab.openclaw_current.retrieval import keyword_candidates

    if past is None:
        hits, _, _ = keyword_candidates(index, query)
    else:
        hits, _, _ = keyword_candidates(index, query, visible=past[0], search=past[1])
    pos = np.array([h.pos for h in hits], dtype=np.int64)
    rank = np.array([math.nan if h.bm25 is None else h.bm25 for h in hits], dtype=np.float64)
    return pos, rank, hits


def current_arrays(pos: np.ndarray, hits: Sequence[Sequence[Any]]) -> dict[str, np.ndarray]:
    """``CURRENT_KEYWORD_ARRAYS`` over the padded columns ``pos`` [Q, C] from each query's
    keyword hits (``KeywordHit``); candidates that are not keyword hits hold False / 0."""
    shape = pos.shape
    out = {
        "kw_hit": np.zeros(shape, dtype=bool),
        "kw_score": np.zeros(shape),
        "kw_text": np.zeros(shape),
        "kw_path": np.zeros(shape),
        "kw_body": np.zeros(shape, dtype=bool),
        "kw_spec": np.zeros(shape, dtype=np.int64),
    }
    for qi, row in enumerate(hits):
        col = {int(p): c for c, p in enumerate(pos[qi].tolist()) if p >= 0}
        for h in row:
            c = col[h.pos]
            out["kw_hit"][qi, c] = True
            out["kw_score"][qi, c] = h.score
            out["kw_text"][qi, c] = h.text_score
            out["kw_path"][qi, c] = h.path_score
            out["kw_body"][qi, c] = h.has_body
            out["kw_spec"][qi, c] = h.spec
    return out


Row = tuple[list[int], list[float], list[float], list[int], list[int]]


# The arrays a keyword leg adds to ``CandidateSet.extra`` from its hits, by leg name.
KEYWORD_LEG_ARRAYS: Mapping[str, Callable[[np.ndarray, Sequence[Sequence[Any]]], dict]] = (
    MappingProxyType({"openclaw-current": current_arrays})
)


def pad_rows(rows: Sequence[Row]) -> tuple[np.ndarray, ...]:
    """Pad per-query (positions, vector scores, bm25 values, vector ranks, keyword ranks)
    rows into [Q, C] arrays: padding is position −1, NaN scores and rank −1."""
    nq = len(rows)
    width = max((len(r[0]) for r in rows), default=0)
    pos = np.full((nq, width), -1, dtype=np.int64)
    vs = np.full((nq, width), np.nan)
    tr = np.full((nq, width), np.nan)
    vr = np.full((nq, width), ABSENT_RANK, dtype=np.int64)
    kr = np.full((nq, width), ABSENT_RANK, dtype=np.int64)
    for qi, (p, v, t, a, b) in enumerate(rows):
        n = len(p)
        pos[qi, :n], vs[qi, :n], tr[qi, :n], vr[qi, :n], kr[qi, :n] = p, v, t, a, b
    return pos, vs, tr, vr, kr


def merge_row(vpos: np.ndarray, vsc: np.ndarray, kpos: np.ndarray, krank: np.ndarray) -> Row:
    """Union by chunk in OpenClaw's insertion order: vector hits, then keyword-only hits."""
    order: dict[int, int] = {}
    p: list[int] = []
    v: list[float] = []
    t: list[float] = []
    a: list[int] = []
    b: list[int] = []
    rank = 0
    for pp, s in zip(vpos.tolist(), vsc.tolist(), strict=True):
        if pp < 0 or pp in order:
            continue
        order[pp] = len(p)
        p.append(pp)
        v.append(s)
        t.append(math.nan)
        a.append(rank)
        b.append(ABSENT_RANK)
        rank += 1
    for r, (pp, s) in enumerate(zip(kpos.tolist(), krank.tolist(), strict=True)):
        j = order.get(pp)
        if j is None:
            order[pp] = len(p)
            p.append(pp)
            v.append(math.nan)
            t.append(s)
            a.append(ABSENT_RANK)
            b.append(r)
        else:
            t[j] = s
            b[j] = r
    return p, v, t, a, b


def _per_keyword(
    search: Callable[[str | None, int], tuple[np.ndarray, np.ndarray]], query: str, depth: int
) -> tuple[np.ndarray, np.ndarray]:
    best: dict[int, float] = {}
    for kw in extract_keywords(query):
        kp, kr = search(build_fts_query(kw), depth)
        for p, r in zip(kp.tolist(), kr.tolist(), strict=True):
            if p not in best or r < best[p]:
                best[p] = r
    if not best:
        return np.empty(0, dtype=np.int64), np.empty(0)
    items = sorted(best.items(), key=lambda pr: pr[1])[:depth]
    return (
        np.array([p for p, _ in items], dtype=np.int64),
        np.array([r for _, r in items], dtype=np.float64),
    )


def now_seconds(times: np.ndarray) -> np.ndarray:
    """Per-query "now": the query's own time where known, else the wall clock."""
    return np.where(np.isnan(times), time.time(), times)


def as_time_array(values: Any, n: int) -> np.ndarray:
    """Broadcast a scalar/None/sequence of Unix seconds to a float array of length n."""
    if values is None:
        return np.full(n, np.nan)
    arr = np.asarray(values, dtype=np.float64)
    return np.broadcast_to(arr, (n,)).copy() if arr.ndim == 0 else arr
