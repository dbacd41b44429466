"""OpenAI-compatible embeddings over HTTP, with the retry policy of spec §3 (stdlib only).

``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``; the answer
``{"data": [{"embedding": [...], "index": i}, ...]}`` is validated before use. Works with
OpenAI and with any server speaking the same format (vLLM, Ollama, LiteLLM, ...).
"""

from __future__ import annotations

import http.client
import json
import random
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .base import EmbeddingError, check_texts, identity_digest, is_blank, normalize_vectors

__all__ = ["OpenAIEmbedder", "is_secret_header", "retry_delay"]

# Error bodies that signal throttling even when the status code does not.
_RATE_LIMIT_RE = re.compile(
    r"rate[\s_-]?limit|too many requests|resource[\s_-]*(has been\s+)?exhausted", re.I
)
_SECRET_HEADER_RE = re.compile(r"^(proxy-)?authorization$|api[-_]?key|token|secret", re.I)
# How much of an error body goes into an exception message.
_BODY_SNIPPET = 300


def is_secret_header(name: str) -> bool:
    """True for credential headers (Authorization, Proxy-Authorization, *api-key*, *token*,
    *secret*, case-insensitive); they are sent but never enter identity keys or messages."""
    return bool(_SECRET_HEADER_RE.search(name.strip()))


def retry_delay(
    retry: int, *, base_delay: float, max_delay: float, jitter: float, rng: random.Random
) -> float:
    """Delay before retry number ``retry`` (0-based):
    ``min(max_delay, base_delay · 2**retry) · (1 + jitter · u)``, u uniform in [-1, 1].

    Spec defaults 0.5 s, 8 s, 0.2 give 0.5, 1, 2 s (±20 %) for the three retries; the cap
    applies before the jitter, so a capped delay lies in [max·(1-j), max·(1+j)].
    """
    return min(max_delay, base_delay * 2.0**retry) * (1.0 + jitter * rng.uniform(-1.0, 1.0))


class _Retryable(Exception):
    """An attempt failed in a way the policy retries (429, 5xx, rate-limit text, timeout)."""


class _Fatal(Exception):
    """An attempt failed in a way the policy does not retry."""


def _check_positive(name: str, value: Any, *, integer: bool = False, zero: bool = False) -> None:
    kind = int if integer else (int, float)
    ok = isinstance(value, kind) and not isinstance(value, bool)
    ok = ok and (value >= 0 if zero else value > 0) and np.isfinite(value)
    if not ok:
        what = "integer" if integer else "number"
        bound = ">= 0" if zero else "> 0"
        raise ValueError(f"{name} must be a finite {what} {bound}, got {value!r}")


class OpenAIEmbedder:
    """Embedder for an OpenAI-compatible ``/embeddings`` endpoint.

    Retry policy (spec §3): after the first attempt up to ``max_retries`` (3) retries, the
    delay before retry k (0-based) being ``min(max_delay, base_delay · 2**k)`` scaled by a
    uniform factor in [1 - jitter, 1 + jitter] (see :func:`retry_delay`). Retried: HTTP 429,
    HTTP 5xx, any error body mentioning a rate limit, and transport failures — timeouts,
    connection resets/refusals, a server closing the connection without an answer. Not
    retried: other 4xx, malformed responses, unresolvable hosts. When attempts run out, or on
    a non-retried failure, :class:`EmbeddingError` names the status and the attempt count.

    Inputs are sent in batches of at most ``batch_size`` texts and ``max_batch_chars`` total
    characters (a single longer text travels alone). Blank texts are not sent (many servers
    reject empty input) and embed to the all-zero vector. ``dimensions`` is validated when
    given; otherwise the first successful response fixes it and later responses must match.
    """

    provider = "openai"

    def __init__(
        self,
        base_url: str,
        model: str = "text-embedding-3-small",
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        max_batch_chars: int = 200_000,
        timeout: float = 30.0,
        max_retries: int = 3,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        jitter: float = 0.2,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> None:
        if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url.strip()):
            raise ValueError(
                f"base_url must be an http(s) URL such as https://api.openai.com/v1"
                f" (memorySearch.remote.baseUrl in openclaw.json), got {base_url!r}"
            )
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if api_key is not None and not isinstance(api_key, str):
            raise ValueError("api_key must be a string or None")
        if dimensions is not None:
            _check_positive("dimensions", dimensions, integer=True)
        _check_positive("batch_size", batch_size, integer=True)
        _check_positive("max_batch_chars", max_batch_chars, integer=True)
        _check_positive("timeout", timeout)
        _check_positive("max_retries", max_retries, integer=True, zero=True)
        _check_positive("base_delay", base_delay, zero=True)
        _check_positive("max_delay", max_delay, zero=True)
        if not isinstance(jitter, (int, float)) or not 0.0 <= jitter <= 1.0:
            raise ValueError(f"jitter must be in [0, 1], got {jitter!r}")
        if not callable(sleep):
            raise ValueError("sleep must be callable")
        extra = dict(headers or {})
        for key, value in extra.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ValueError(f"headers must map str to str, got {key!r}: {value!r}")
        self.base_url = base_url.strip().rstrip("/")
        self.url = f"{self.base_url}/embeddings"
        self.model = model.strip()
        self._api_key = api_key
        self.headers = extra
        self._dimensions = dimensions
        self.batch_size = batch_size
        self.max_batch_chars = max_batch_chars
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self.jitter = float(jitter)
        self._sleep = sleep
        self._rng = random.Random()
        self.requests_sent = 0

    # -- identity --------------------------------------------------------------------------

    @property
    def identity_key(self) -> str:
        """sha256 hex of provider, base URL, model and the non-credential headers.

        Header names are lower-cased; credential headers (see :func:`is_secret_header`) and
        the API key are left out, so rotating a key keeps the embedding cache.
        """
        public = {k.strip().lower(): v for k, v in self.headers.items() if not is_secret_header(k)}
        return identity_digest(
            {
                "provider": self.provider,
                "base_url": self.base_url,
                "model": self.model,
                "headers": public,
            }
        )

    @property
    def known_dimensions(self) -> int | None:
        """The vector width if known (given, or fixed by a response), without a request."""
        return self._dimensions

    @property
    def dimensions(self) -> int:
        """Vector width: the constructor's value, else the one fixed by the first response.

        When neither is known yet, one request embedding the text ``"dimension probe"`` is
        made to learn it.
        """
        if self._dimensions is None:
            self._embed_batch(["dimension probe"])
        assert self._dimensions is not None
        return self._dimensions

    # -- HTTP ------------------------------------------------------------------------------

    def _request_headers(self) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": "application/json"}
        out.update(self.headers)
        if self._api_key:
            # An explicit key wins over an Authorization header given in `headers`.
            for key in [k for k in out if k.lower() == "authorization"]:
                del out[key]
            out["Authorization"] = f"Bearer {self._api_key}"
        return out

    def _attempt(self, payload: bytes) -> bytes:
        """One POST; returns the body of a 2xx answer or raises _Retryable / _Fatal."""
        req = urllib.request.Request(
            self.url, data=payload, headers=self._request_headers(), method="POST"
        )
        self.requests_sent += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as err:
            try:
                text = _snippet(err.read() if err.fp is not None else b"")
            except (OSError, http.client.HTTPException):
                text = ""  # the status alone decides; a half-read body is not worth a retry
            msg = f"HTTP {err.code} {err.reason}" + (f": {text}" if text else "")
            if err.code == 429 or 500 <= err.code <= 599 or _RATE_LIMIT_RE.search(text):
                raise _Retryable(msg) from err
            raise _Fatal(msg) from err
        except urllib.error.URLError as err:
            reason = err.reason
            if isinstance(reason, (TimeoutError, socket.timeout, ConnectionError)):
                raise _Retryable(_transport_message(reason, self.timeout)) from err
            raise _Fatal(f"connection failed: {reason}") from err
        except (TimeoutError, ConnectionError, http.client.IncompleteRead) as err:
            raise _Retryable(_transport_message(err, self.timeout)) from err
        except (http.client.HTTPException, OSError) as err:
            raise _Fatal(f"transport error: {type(err).__name__}: {err}") from err
        # Some gateways answer 200 with an error object (e.g. a throttled upstream).
        head = body[:2000].decode("utf-8", "replace")
        if '"error"' in head and _RATE_LIMIT_RE.search(head):
            raise _Retryable(f"HTTP 200 with rate-limit error: {_snippet(body)}")
        return body

    def _post(self, texts: list[str]) -> tuple[bytes, int]:
        """POST with retries → (successful body, attempts used), or raise EmbeddingError."""
        payload = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(payload), attempts
            except _Fatal as err:
                raise EmbeddingError(
                    f"openai: embeddings request to {self.url} failed after {attempts} "
                    f"attempt{'s' if attempts > 1 else ''} (not retried): {err}"
                ) from err.__cause__
            except _Retryable as err:
                if attempts > self.max_retries:
                    raise EmbeddingError(
                        f"openai: embeddings request to {self.url} failed after {attempts} "
                        f"attempt{'s' if attempts > 1 else ''} (retries exhausted): {err}"
                    ) from err.__cause__
                self._sleep(
                    retry_delay(
                        attempts - 1,
                        base_delay=self.base_delay,
                        max_delay=self.max_delay,
                        jitter=self.jitter,
                        rng=self._rng,
                    )
                )

    # -- response validation ---------------------------------------------------------------

    def _parse(self, body: bytes, n: int, attempts: int = 1) -> np.ndarray:
        """Validate a response body for ``n`` inputs → float64 array (n, d), index order."""

        def bad(why: str) -> EmbeddingError:
            return EmbeddingError(
                f"openai: malformed response from {self.url} after {attempts} "
                f"attempt{'s' if attempts > 1 else ''} (not retried): {why}"
            )

        try:
            doc = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise bad(f"body is not JSON: {_snippet(body)!r}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            if isinstance(doc, dict) and "error" in doc:
                raise bad(f"error object instead of data: {_snippet(json.dumps(doc['error']))}")
            raise bad("no 'data' list")
        data = doc["data"]
        if len(data) != n:
            raise bad(f"expected {n} embeddings, got {len(data)}")
        if not all(isinstance(item, dict) for item in data):
            raise bad("'data' items must be objects")
        if all("index" in item for item in data):
            indices = [item["index"] for item in data]
            if sorted(indices) != list(range(n)) or any(isinstance(i, bool) for i in indices):
                raise bad(f"indices must be a permutation of 0..{n - 1}, got {indices[:10]}")
            data = sorted(data, key=lambda item: item["index"])
        elif any("index" in item for item in data):
            raise bad("'index' present on some items only")
        rows = []
        for pos, item in enumerate(data):
            vec = np.asarray(item.get("embedding"))
            # dtype kind rejects strings ("NaN"), booleans, None and nested lists.
            if vec.ndim != 1 or vec.dtype.kind not in "iuf" or vec.size == 0:
                raise bad(f"embedding {pos} is not a non-empty list of numbers")
            rows.append(vec.astype(np.float64))
        widths = {r.size for r in rows}
        if len(widths) != 1:
            raise bad(f"embeddings have different dimensions {sorted(widths)}")
        width = widths.pop()
        if self._dimensions is not None and width != self._dimensions:
            raise bad(f"expected dimension {self._dimensions}, got {width}")
        return np.vstack(rows)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        body, attempts = self._post(texts)
        matrix = self._parse(body, len(texts), attempts)
        if self._dimensions is None:
            self._dimensions = int(matrix.shape[1])
        return matrix

    # -- public API ------------------------------------------------------------------------

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Greedy consecutive batches of indices: at most ``batch_size`` texts and at most
        ``max_batch_chars`` characters each, except that a longer text forms its own batch."""
        out: list[list[int]] = []
        cur: list[int] = []
        chars = 0
        for i, text in enumerate(texts):
            if cur and (len(cur) >= self.batch_size or chars + len(text) > self.max_batch_chars):
                out.append(cur)
                cur, chars = [], 0
            cur.append(i)
            chars += len(text)
        if cur:
            out.append(cur)
        return out

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → float32 (len(texts), dimensions), input order, rows normalised.

        Non-finite components from the server become 0 (spec §3); blank texts → zero rows.
        """
        items = check_texts(texts, self.provider)
        keep = [i for i, t in enumerate(items) if not is_blank(t)]
        sent = [items[i] for i in keep]
        parts = [self._embed_batch([sent[j] for j in b]) for b in self.batches(sent)]
        out = np.zeros((len(items), self.dimensions), dtype=np.float64)
        if parts:
            out[keep] = np.vstack(parts)
        return normalize_vectors(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed the trimmed query → float32 (dimensions,); all-zero for a blank query."""
        if not isinstance(text, str):
            raise TypeError(f"openai: query must be str, got {type(text).__name__}")
        return self.embed_documents([text.strip()])[0]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """Always 0: the input limit of a remote model is unknown here."""
        check_texts(texts, self.provider)
        return 0

    def __repr__(self) -> str:
        public = sorted(k for k in self.headers if not is_secret_header(k))
        return (
            f"OpenAIEmbedder(base_url={self.base_url!r}, model={self.model!r}, "
            f"dimensions={self._dimensions}, api_key={'set' if self._api_key else None}, "
            f"headers={public})"
        )


def _snippet(body: bytes | str) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text if len(text) <= _BODY_SNIPPET else text[:_BODY_SNIPPET] + "…"


def _transport_message(err: BaseException, timeout: float) -> str:
    if isinstance(err, (TimeoutError, socket.timeout)):
        return f"timed out after {timeout:g} s"
    return f"connection error: {type(err).__name__}: {err}"
