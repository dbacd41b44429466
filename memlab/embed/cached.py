"""A transparent embedder wrapper that keeps query and document vectors on disk.

`CachedEmbedder` stores every vector it computes in ``folder`` (one ``.npz`` per
model identity and kind, keyed by sha256 of the text), so a study re-embeds
nothing it has seen. Engine layer: used by the lab (``Lab(cache_vectors=True)``)
and the demo, importable without them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CachedEmbedder"]


def _text_key(text: str) -> str:
    """sha256 hex of the UTF-8 text (lone surrogates kept), first 32 digits: a store key."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class CachedEmbedder:
    """An embedder whose query and document vectors persist in ``folder`` (one .npz per
    model identity and kind), so a study re-embeds nothing it has seen.

    Transparent: provider, model, dimensions and identity_key are the inner
    embedder's (indexes built through it are the same indexes). ``prefetch``
    embeds a batch of queries at once; ``remember`` stores vectors computed
    elsewhere (e.g. read back from an index). Query text is stripped, as
    `MemoryIndex.embed_queries` does. New vectors stay in memory until
    ``save`` (``prefetch`` saves on its own; a ``Lab(cache_vectors=True)`` saves
    after each index sync and retrieval).
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

    def missing(self, texts: Sequence[str], *, kind: str = "doc") -> list[str]:
        """The texts with no stored vector of ``kind`` (``doc`` or ``query``; a query is
        looked up stripped, as ``embed_query`` does, and returned stripped), each once, in
        order: what ``embed_documents`` / ``prefetch`` would send to the inner embedder.
        Computes nothing."""
        store = self._store(kind)
        items = (t.strip() for t in texts) if kind == "query" else iter(texts)
        return [t for t in dict.fromkeys(items) if _text_key(t) not in store]

    def _embed_queries(self, texts: list[str]) -> np.ndarray:
        from memlab.embed.hashing import HashingEmbedder
        from memlab.embed.local import SentenceTransformerEmbedder

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
