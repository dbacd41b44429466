"""Shared pieces of every embedder: the protocol, the error type, normalisation, identity keys.

Spec §3: vectors have their non-finite components set to 0 and are then L2-normalised; the
query is embedded as the trimmed raw query; an all-zero query vector means "no vector side".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Embedder",
    "EmbeddingError",
    "identity_digest",
    "is_blank",
    "load_word_pieces",
    "normalize_vectors",
]


class EmbeddingError(RuntimeError):
    """A provider failed to produce embeddings.

    Every provider failure (HTTP error, timeout, malformed response, model that cannot be
    loaded) surfaces as this type; the message names the provider, what failed and after how
    many attempts, so a caller can fall back or report without knowing the provider.
    """


@runtime_checkable
class Embedder(Protocol):
    """What the index and the search need from an embedding provider.

    ``provider`` and ``model`` name the provider ("local", "hashing", "openai", ...) and the
    model; ``identity_key`` is the sha256 hex digest of everything that changes the vectors
    (never credentials) and feeds the embedding-cache key and the index fingerprint.
    Rows returned by ``embed_documents`` and the vector from ``embed_query`` are float32 and
    L2-normalised; a blank text yields the all-zero vector.
    """

    provider: str
    model: str

    @property
    def dimensions(self) -> int: ...

    @property
    def identity_key(self) -> str: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def count_truncated(self, texts: Sequence[str]) -> int: ...


def normalize_vectors(x: np.ndarray | Sequence[Any]) -> np.ndarray:
    """Sanitise and L2-normalise vectors: ``v ← v' / ‖v'‖₂`` with ``v'`` = v, non-finite → 0.

    Accepts a 1-D vector or a 2-D array of row vectors and returns float32 of the same shape.
    Edge cases: NaN and ±inf components become 0 before the norm is taken; a row whose
    sanitised components are all 0 stays all-zero (never NaN); an empty array is returned
    empty. The norm is computed in float64 after dividing each row by its largest absolute
    component, so rows of huge (1e300) or tiny (1e-300) finite values still come out with unit
    norm instead of overflowing to inf or underflowing to 0.

    Raises ``ValueError`` for arrays that are not 1-D or 2-D.
    """
    arr = np.array(x, dtype=np.float64, copy=True)
    if arr.ndim not in (1, 2):
        raise ValueError(f"vectors must be 1-D or 2-D, got shape {arr.shape}")
    finite = np.isfinite(arr)
    if not finite.all():
        arr[~finite] = 0.0
    if arr.size == 0:
        return arr.astype(np.float32)
    rows = arr.reshape(1, -1) if arr.ndim == 1 else arr
    # Dividing by the largest |component| first keeps the sum of squares inside float64's
    # range; a zero divisor is replaced by 1 so an all-zero row stays zero instead of NaN.
    scale = np.abs(rows).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    rows /= scale
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    norms[norms == 0] = 1.0
    rows /= norms
    return arr.astype(np.float32)


def is_blank(text: str) -> bool:
    """True when ``text`` has no non-whitespace character (such texts embed to all-zero)."""
    return not text or text.isspace()


def identity_digest(fields: Mapping[str, Any]) -> str:
    """sha256 hex of a canonical JSON rendering of ``fields`` (sorted keys, no spaces).

    Used for provider identity keys: equal fields give the same key in every process, and any
    change of a field (including list order) gives a different key.
    """
    blob = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def check_texts(texts: Sequence[str], provider: str) -> list[str]:
    """Return ``texts`` as a list, raising ``TypeError`` when it is a bare string or holds
    a non-string (a bare string would silently be embedded character by character)."""
    if isinstance(texts, str):
        raise TypeError(f"{provider}: embed_documents expects a sequence of strings, got a str")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"{provider}: texts[{i}] must be str, got {type(t).__name__}")
    return out


def load_word_pieces(model_dir: Any, provider: str, *, max_length: int | None = None) -> Any:
    """The ``tokenizers.Tokenizer`` of ``model_dir/tokenizer.json`` without the file's own
    padding and truncation (it ships "truncate and pad at 128"), truncating at
    ``max_length`` word pieces (specials included) when given. Padding is the caller's (per
    batch). Any failure to read or parse the file raises `EmbeddingError` naming
    ``provider`` and the path."""
    from pathlib import Path

    path = Path(model_dir) / "tokenizer.json"
    try:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise EmbeddingError(
            f"{provider}: loading {path} failed after 1 attempt: {type(exc).__name__}: {exc}"
        ) from exc
    tok.no_padding()
    tok.no_truncation()
    if max_length is not None:
        tok.enable_truncation(max_length=max_length)
    return tok
