"""The lab: a dataset bound to its indexes, with candidates computed once and cached.

`Lab` indexes every workspace of a `Dataset` (one index per group) and
retrieves candidates for all its questions; a `LabCandidates` then holds one
merged `CandidateSet` over all groups plus the evidence coverage of every
candidate, so that scoring any system — any fusion, decay, MMR or threshold
setting — is array work: ``Pipeline.rank`` → ``hits_from_topk`` →
``evaluate_hits``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.candidates import CandidateSet, retrieve
from memlab.chunking import ChunkerConfig, estimate_chars
from memlab.eval.metrics import evaluate_hits, parse_metric
from memlab.eval.relevance import SpanTable, candidate_coverage, hits_from_topk, span_table
from memlab.index import ChunkTable, MemoryIndex

if TYPE_CHECKING:
    from memlab.datasets.base import Dataset
    from memlab.embed import Embedder
    from memlab.pipeline import Pipeline, Ranking

UNITS = {"chunk": ChunkerConfig("openclaw"), "turn": ChunkerConfig("line")}
_SEP = "\x1f"  # joins group and path into one key: groups may share relative paths


def unit_chunker(unit: str | ChunkerConfig) -> ChunkerConfig:
    """``"chunk"`` → OpenClaw's bounded chunker; ``"turn"`` → one line per chunk."""
    if isinstance(unit, ChunkerConfig):
        return unit
    if unit not in UNITS:
        raise ValueError(
            f"unit must be one of {', '.join(UNITS)} (or a ChunkerConfig), got {unit!r}"
        )
    return UNITS[unit]


class _TextSource:
    """Serves chunk texts for positions of a merged table, from each group's index."""

    def __init__(self, indexes: list[MemoryIndex], offsets: list[int]) -> None:
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


def merge_tables(tables: Sequence[ChunkTable]) -> ChunkTable:
    """Concatenate chunk tables (positions of table i are offset by the sizes before it)."""
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
        segments=np.repeat(np.arange(len(tables), dtype=np.int64), [len(t) for t in tables]),
    )


@dataclass
class LabCandidates:
    """Candidates of every question of a dataset, with their evidence coverage.

    ``cs`` rows follow ``qids`` (the dataset's question order). ``covers``
    [Q, C, S] says which candidate covers which evidence span; ``spans`` is the
    padded evidence. ``tokens`` [N] is each chunk's snippet token estimate
    (filled on demand for budget metrics).
    """

    cs: CandidateSet
    qids: list[str]
    spans: SpanTable
    covers: np.ndarray
    categories: np.ndarray
    _tokens: np.ndarray | None = field(default=None, repr=False)

    def chunk_tokens(self) -> np.ndarray:
        """Token estimate (weighted chars / 4, as OpenClaw's 4 chars per token) of each
        candidate chunk's 700-char snippet, by table position (NaN where never a candidate)."""
        if self._tokens is None:
            from memlab.rerank import snippet

            tok = np.full(len(self.cs.table), np.nan)
            pos = np.unique(self.cs.pos[self.cs.pos >= 0])
            for p, t in zip(pos, self.cs.texts(pos), strict=True):
                tok[p] = estimate_chars(snippet(t)) / 4.0
            self._tokens = tok
        return self._tokens

    def subset(self, rows: Sequence[int] | np.ndarray) -> LabCandidates:
        r = np.asarray(rows, dtype=np.int64)
        sp = self.spans
        arrays = {
            f.name: getattr(sp, f.name)[r]
            for f in dataclasses.fields(sp)
            if isinstance(getattr(sp, f.name), np.ndarray)
        }
        spans = dataclasses.replace(sp, qids=[sp.qids[i] for i in r], **arrays)
        return LabCandidates(
            cs=self.cs.subset(r),
            qids=[self.qids[i] for i in r],
            spans=spans,
            covers=self.covers[r],
            categories=self.categories[r],
            _tokens=self._tokens,
        )

    def score(
        self, pipeline: Pipeline, metrics: Sequence[str], *, ranking: Ranking | None = None
    ) -> dict[str, np.ndarray]:
        """Per-query metric values [Q] of one system (queries without evidence are NaN)."""
        r = ranking if ranking is not None else pipeline.rank(self.cs)
        specs = [parse_metric(m) for m in metrics]
        tokens = None
        if any(s.kind == "budget_recall" for s in specs):
            tok = self.chunk_tokens()
            safe = np.where(r.columns >= 0, r.columns, 0)
            pos = np.take_along_axis(self.cs.pos, safe, axis=1)
            tokens = np.where(r.columns >= 0, tok[pos], 0.0)
        h = hits_from_topk(
            self.covers, r.columns, self.spans, tokens=tokens, include_no_evidence=True
        )
        values = evaluate_hits(h, specs)
        has = self.spans.has_evidence
        return {k: np.where(has, v, np.nan) for k, v in values.items()}

    @property
    def has_evidence(self) -> np.ndarray:
        return self.spans.has_evidence


def default_lab_index_dir(dataset: Dataset) -> Path:
    """``cache_dir("lab", f"{name}-{h}")`` with ``h`` = sha256(real path of the dataset
    root)[:16]: one folder per dataset folder (two copies of a corpus do not share
    indexes; the workspace's own name keeps the folder recognisable)."""
    from memlab.paths import cache_dir

    real = str(Path(dataset.root).expanduser().resolve())
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(dataset.name))
    return cache_dir("lab", f"{safe}-{hashlib.sha256(real.encode()).hexdigest()[:16]}")


class Lab:
    """A dataset with one index per workspace group and cached candidates.

    ``embedder``: an ``Embedder`` or a provider name (``"local"`` default,
    ``"hashing"``, ``"none"``); ``unit``: ``"chunk"`` (OpenClaw chunks) or
    ``"turn"`` (one line per chunk), or a ``ChunkerConfig``. Index files go
    to ``index_dir`` (default ``default_lab_index_dir(dataset)``, in the user
    cache: never inside the dataset's folder, which may be a user's own
    workspace), named by group and configuration, so a second run re-embeds nothing.
    """

    def __init__(
        self,
        dataset: Dataset,
        *,
        embedder: Embedder | str | None = "local",
        unit: str | ChunkerConfig = "chunk",
        index_dir: str | Path | None = None,
        fts_tokenizer: str = "unicode61",
        fts_path_prefix: bool = False,
        progress: bool | None = None,
    ) -> None:
        if isinstance(embedder, str):
            from memlab.embed import resolve_embedder

            embedder = resolve_embedder(embedder)
        self.dataset = dataset
        self.embedder = embedder
        self.chunker = unit_chunker(unit)
        self.fts_tokenizer = fts_tokenizer
        self.fts_path_prefix = fts_path_prefix
        self.progress = progress
        self.index_dir = Path(index_dir) if index_dir else default_lab_index_dir(dataset)
        self._indexes: dict[str, MemoryIndex] = {}
        self._cache: dict[tuple[Any, ...], LabCandidates] = {}

    def __repr__(self) -> str:
        model = self.embedder.model if self.embedder is not None else "fts-only"
        return (
            f"Lab({self.dataset.name!r}, queries={len(self.dataset.queries)}, groups="
            f"{len(self.dataset.workspaces)}, model={model!r}, chunker={self.chunker.fingerprint()!r})"
        )

    def index(self, group: str) -> MemoryIndex:
        """The (synced) index of one workspace group."""
        if group not in self._indexes:
            ws = self.dataset.workspaces[group]
            model = self.embedder.model if self.embedder is not None else "fts-only"
            tag = hashlib.sha256(
                f"{model}|{self.chunker.fingerprint()}|{self.fts_tokenizer}|{self.fts_path_prefix}".encode()
            ).hexdigest()[:10]
            safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in group)
            idx = MemoryIndex(
                ws,
                db_path=self.index_dir / f"{safe}-{tag}.sqlite",
                embedder=self.embedder,
                chunker=self.chunker,
                fts_tokenizer=self.fts_tokenizer,
                fts_path_prefix=self.fts_path_prefix,
                progress=self.progress,
            )
            idx.ensure_synced()
            self._indexes[group] = idx
        return self._indexes[group]

    def candidates(
        self,
        depth: int = 24,
        *,
        keyword_mode: str = "and",
        keyword_fallback: bool = False,
        vector: bool = True,
    ) -> LabCandidates:
        """Candidates of all questions at ``depth`` per leg (cached; deeper sets serve
        shallower systems, since a pipeline cuts candidates at its own depth)."""
        key = (keyword_mode, keyword_fallback, vector)
        for (km, kf, v, d), lc in self._cache.items():
            if (km, kf, v) == key and d >= depth:
                return lc
        lc = self._retrieve(depth, keyword_mode, keyword_fallback, vector)
        self._cache[(*key, depth)] = lc
        return lc

    def candidates_for(self, systems: Sequence[Pipeline]) -> dict[str, LabCandidates]:
        """One shared candidate set per retrieval configuration of the given systems."""
        groups: dict[tuple[str, bool], int] = {}
        for p in systems:
            k = self._cand_key(p)
            groups[k] = max(groups.get(k, 0), p.depth)
        out: dict[str, LabCandidates] = {}
        for p in systems:
            km, kf = self._cand_key(p)
            out[p.name] = self.candidates(groups[(km, kf)], keyword_mode=km, keyword_fallback=kf)
        return out

    def _cand_key(self, p: Pipeline) -> tuple[str, bool]:
        return p.retrieval_spec(self.embedder is not None).candidate_key

    def _retrieve(
        self, depth: int, keyword_mode: str, keyword_fallback: bool, vector: bool
    ) -> LabCandidates:
        q = self.dataset.queries
        parts: list[tuple[str, CandidateSet, np.ndarray]] = []
        for group in self.dataset.workspaces:
            rows = np.nonzero((q["group"] == group).to_numpy())[0]
            if rows.size == 0:
                continue
            idx = self.index(group)
            cs = retrieve(
                idx,
                q["query"].iloc[rows].tolist(),
                qids=q["qid"].iloc[rows].tolist(),
                depth=depth,
                vector=vector,
                keyword_mode=keyword_mode,
                keyword_fallback=keyword_fallback,
                times=q["time"].iloc[rows].to_numpy(),
            )
            parts.append((group, cs, rows))
        merged = merge_candidate_sets(parts, [self.index(g) for g, _, _ in parts], len(q))
        sizes = [len(cs.table) for _, cs, _ in parts]
        chunk_group = np.repeat(np.array([g for g, _, _ in parts], dtype=object), sizes)
        keys = chunk_group + _SEP + merged.table.paths if len(chunk_group) else chunk_group
        qids = q["qid"].tolist()
        ev = self.dataset.evidence
        ev_keys = ev.assign(
            path=ev["qid"].map(dict(zip(q["qid"], q["group"], strict=True))).astype(str)
            + _SEP
            + ev["path"]
        )
        vocab = list(dict.fromkeys(keys.tolist()))
        spans = span_table(ev_keys, qids, vocab)
        path_idx = {p: i for i, p in enumerate(vocab)}
        cand_path = np.where(
            merged.pos >= 0,
            np.vectorize(path_idx.get, otypes=[np.int64])(keys[np.maximum(merged.pos, 0)])
            if merged.pos.size
            else merged.pos,
            -1,
        )
        safe = np.maximum(merged.pos, 0)
        covers = candidate_coverage(
            cand_path, merged.table.start_lines[safe], merged.table.end_lines[safe], spans
        )
        return LabCandidates(
            cs=merged,
            qids=qids,
            spans=spans,
            covers=covers,
            categories=q["category"].to_numpy(dtype=object),
        )


def merge_candidate_sets(
    parts: Sequence[tuple[str, CandidateSet, np.ndarray]],
    indexes: Sequence[MemoryIndex],
    n_queries: int,
) -> CandidateSet:
    """Merge per-group CandidateSets into one over a concatenated table.

    ``parts``: (group, candidates, dataset row of each of its queries). The
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
        for r, qid, query in zip(rows, cs.qids, cs.queries, strict=True):
            qids[r] = qid
            queries[r] = query
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
    )
    merged.index = _TextSource(list(indexes), offsets.tolist())  # type: ignore[assignment]
    return merged
