"""`PooledEmbedder`: embed a long text in windows of word pieces and pool the window vectors.

The packaged all-MiniLM-L6-v2 reads 256 word pieces ([CLS] and [SEP] included) and drops
the rest. This wrapper cuts a longer text into windows of at most ``window − specials``
word pieces (consecutive windows share ``overlap`` pieces), embeds every window with the
inner embedder, and pools: ``v = normalise(mean_w v_w)`` (``pooling="mean"``) or
``v = normalise(max_w v_w)`` component-wise (``pooling="max"``). A text that fits in one
window is passed to the inner embedder unchanged, so its vector is exactly the inner one.
A query is one window (the inner embedder's own query path). The identity key covers the
inner identity, the pooling, the window and the overlap, so an index of pooled vectors is
never mixed with one of truncated vectors. Engine layer: imports the inner embedder's
tokenizer (``tokenizers``) only when a text is embedded.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import (
    check_texts,
    identity_digest,
    is_blank,
    load_word_pieces,
    normalize_vectors,
)

__all__ = ["POOLINGS", "PooledEmbedder", "piece_windows"]

POOLINGS = ("mean", "max")


def piece_windows(word_ids: Sequence[int | None], size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows ``[start, end)`` over ``n = len(word_ids)`` word pieces, each ≤ ``size`` long.

    The first window starts at 0; each next one starts ``overlap`` pieces before the previous
    end (so consecutive windows share ``overlap`` pieces) and the last one ends at ``n``.
    An end that would cut a word (the piece at ``end`` has the same word id as the piece
    before it) is moved back to that word's first piece, unless that would leave the window
    no longer than its overlap (a word longer than a window is then cut). Edge cases:
    ``n = 0`` gives ``[]``; ``n ≤ size`` gives ``[(0, n)]``. Every piece lies in at least
    one window. ``ValueError`` unless ``size ≥ 1`` and ``0 ≤ overlap < size``.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"window size must be an integer >= 1, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise ValueError(f"overlap must be an integer in [0, {size}), got {overlap!r}")
    n = len(word_ids)
    if n == 0:
        return []
    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, n)
        if end < n:
            cut = end
            # Pull the end back to the first piece of the word it would split.
            while cut > start and word_ids[cut] is not None and word_ids[cut] == word_ids[cut - 1]:
                cut -= 1
            if cut - start > overlap:
                end = cut
        out.append((start, end))
        if end >= n:
            return out
        start = end - overlap


class PooledEmbedder:
    """An embedder that reads a whole long text: windows of word pieces, pooled.

    ``inner``: any memlab embedder (typically the local model, either backend, possibly
    behind a `CachedEmbedder`); ``window``: word pieces the inner model reads, specials
    included (256 for all-MiniLM-L6-v2); ``specials``: how many of them the model adds
    (2: [CLS], [SEP]); ``overlap``: pieces shared by consecutive windows; ``pooling``:
    ``mean`` or ``max`` (then L2-normalised). ``tokenizer``: an object with
    ``encode(text, add_special_tokens=False)`` returning ``offsets`` (character spans) and
    ``word_ids``; by default the ``tokenizer.json`` of ``inner.model_path``, untruncated.
    ``max_windows``: pool only a text's first that many windows (None = all; bounds the cost
    of a huge text: a 26,000-piece message is 117 windows).
    """

    def __init__(
        self,
        inner: Any,
        *,
        pooling: str = "mean",
        window: int = 256,
        overlap: int = 32,
        specials: int = 2,
        max_windows: int | None = None,
        tokenizer: Any = None,
    ) -> None:
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
        if isinstance(specials, bool) or not isinstance(specials, int) or specials < 0:
            raise ValueError(f"specials must be an integer >= 0, got {specials!r}")
        if isinstance(window, bool) or not isinstance(window, int) or window - specials < 1:
            raise ValueError(f"window must be an integer > specials ({specials}), got {window!r}")
        piece_windows([], window - specials, overlap)  # validates the overlap
        if max_windows is not None and (
            isinstance(max_windows, bool) or not isinstance(max_windows, int) or max_windows < 1
        ):
            raise ValueError(f"max_windows must be None or an integer >= 1, got {max_windows!r}")
        self.max_windows = max_windows
        self.inner = inner
        self.pooling = pooling
        self.window = window
        self.overlap = overlap
        self.specials = specials
        self._tokenizer = tokenizer
        self.provider = str(inner.provider)
        cap = "" if max_windows is None else f"-first{max_windows}"
        self.model = f"{inner.model}+{pooling}-pool-{window}-{overlap}{cap}"

    @property
    def dimensions(self) -> int:
        """The inner embedder's output width."""
        return int(self.inner.dimensions)

    @functools.cached_property
    def identity_key(self) -> str:
        """sha256 hex of the inner identity, the pooling, the window, the overlap, the
        specials and ``max_windows`` (when set): pooled and truncated vectors never share a
        cache entry or an index."""
        fields = {
            "inner": str(self.inner.identity_key),
            "pooling": self.pooling,
            "window": self.window,
            "overlap": self.overlap,
            "specials": self.specials,
        }
        if self.max_windows is not None:
            fields["max_windows"] = self.max_windows
        return identity_digest(fields)

    def _tok(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = load_word_pieces(self.inner.model_path, "pooled")
        return self._tokenizer

    def windows(self, text: str) -> list[str]:
        """The texts of ``text``'s windows: ``[text]`` when it fits in one window (blank
        included), else the character span of each window's word pieces (``piece_windows``
        over ``window − specials`` pieces; the first ``max_windows`` when set)."""
        if is_blank(text):
            return [text]
        enc = self._tok().encode(text, add_special_tokens=False)
        offsets = list(enc.offsets)
        size = self.window - self.specials
        if len(offsets) <= size:
            return [text]
        spans = piece_windows(list(enc.word_ids), size, self.overlap)[: self.max_windows]
        return [text[offsets[s][0] : offsets[e - 1][1]] for s, e in spans]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → float32 (len(texts), dimensions), unit-norm rows, blank → 0.

        All windows of all texts go to the inner embedder in one call; a text of one window
        gets the inner vector unchanged; a longer one ``normalise(pool_w v_w)``.
        """
        items = check_texts(texts, "pooled")
        parts = [self.windows(t) for t in items]
        flat = [w for p in parts for w in p]
        if not flat:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vecs = np.asarray(self.inner.embed_documents(flat), dtype=np.float32)
        out = np.zeros((len(items), vecs.shape[1]), dtype=np.float32)
        at = 0
        for i, p in enumerate(parts):
            block = vecs[at : at + len(p)]
            at += len(p)
            if len(p) == 1:
                out[i] = block[0]
            else:
                pooled = block.mean(axis=0) if self.pooling == "mean" else block.max(axis=0)
                out[i] = normalize_vectors(pooled)
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries are one window each: the inner embedder's query vectors."""
        if hasattr(self.inner, "embed_queries"):
            return np.asarray(self.inner.embed_queries(list(texts)), dtype=np.float32)
        return np.vstack([self.inner.embed_query(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """The inner embedder's query vector (a query is not windowed)."""
        return np.asarray(self.inner.embed_query(text), dtype=np.float32)

    def count_truncated(self, texts: Sequence[str]) -> int:
        """0: every word piece of a document is in some window."""
        check_texts(texts, "pooled")
        return 0

    def __repr__(self) -> str:
        return (
            f"PooledEmbedder({self.inner!r}, pooling={self.pooling!r}, window={self.window}, "
            f"overlap={self.overlap})"
        )
