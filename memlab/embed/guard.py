"""``GuardedEmbedder``: a query embedder that answers within a deadline, and fails at once
while its provider is known to be down.

For a long-lived reader (the MCP server's): a provider that hangs would otherwise hold a
tool call for ``timeout × (retries + 1)`` seconds (2 minutes at OpenAI's defaults), and one
that fails would be asked again, with all its retries, by every search. With the guard, the
first failure (an ``EmbeddingError``, or no answer within ``deadline`` seconds) marks the
provider down: from then on ``embed_query`` raises ``EmbeddingError`` at once — which the
search turns into OpenClaw's keyword-only answer with its notice
(``memlab.tools.search_with_fallback``) — while a background thread probes the provider
with one query, after ``retry_s``, then twice as long each time up to ``retry_max_s``,
until it answers again. Every other attribute (provider, model, identity key, dimensions)
is the inner embedder's, so the index sees the same embedder.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import Embedder, EmbeddingError

__all__ = ["DEFAULT_DEADLINE_S", "PROBE_TEXT", "GuardedEmbedder"]

# The deadline when the inner embedder has no ``timeout`` of its own (OpenClaw 2026.9.6's
# memory_search deadline is 30 s too).
DEFAULT_DEADLINE_S = 30.0
PROBE_TEXT = "memlab provider check"


class GuardedEmbedder:
    """``inner`` behind a deadline and a down/up state with a background probe (see the
    module docstring).

    ``deadline``: seconds an ``embed_query`` call may take (default: ``inner.timeout``, one
    attempt's timeout of a remote embedder, else ``DEFAULT_DEADLINE_S``); a call past it is
    abandoned (its thread finishes on its own) and counts as a failure. ``embed_documents``
    has no deadline (a sync may legitimately take long) but fails at once while down.
    ``status()`` says whether the provider is down, since when and why. Thread-safe.
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        deadline: float | None = None,
        retry_s: float = 1.0,
        retry_max_s: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if deadline is None:
            deadline = float(getattr(inner, "timeout", DEFAULT_DEADLINE_S))
        for name, value in (("deadline", deadline), ("retry_s", retry_s)):
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")
        self.inner = inner
        self.deadline = float(deadline)
        self.retry_s = float(retry_s)
        self.retry_max_s = max(float(retry_max_s), self.retry_s)
        self.clock = clock
        self.lock = threading.Lock()
        self.down: dict[str, Any] | None = None
        self.stop_event = threading.Event()
        self.prober: threading.Thread | None = None
        self.idle: list[_Worker] = []  # query threads waiting for a call (``worker``)

    # -- the inner embedder's identity --------------------------------------------------
    provider = property(lambda self: self.inner.provider)
    model = property(lambda self: self.inner.model)
    identity_key = property(lambda self: self.inner.identity_key)
    dimensions = property(lambda self: self.inner.dimensions)

    @property
    def known_dimensions(self) -> int | None:
        """The inner embedder's width if known without a request."""
        e = self.inner
        return e.known_dimensions if hasattr(e, "known_dimensions") else e.dimensions

    @property
    def fallback_reason(self) -> str | None:
        """The inner ``FallbackEmbedder``'s reason for switching, if it has one."""
        return getattr(self.inner, "fallback_reason", None)

    def count_truncated(self, texts: Sequence[str]) -> int:
        """The inner embedder's count of over-long texts."""
        return self.inner.count_truncated(texts)

    # -- guarded calls ------------------------------------------------------------------
    def embed_query(self, text: str) -> np.ndarray:
        """The inner ``embed_query`` within ``deadline`` seconds; ``EmbeddingError`` at once
        while the provider is down, or when it fails or does not answer in time (which
        marks it down)."""
        self.raise_if_down()
        done = threading.Event()
        box: dict[str, Any] = {}
        self.worker().jobs.put((text, box, done))
        if not done.wait(self.deadline):
            err = EmbeddingError(
                f"{self.inner.provider}: no answer to the query embedding within"
                f" {self.deadline:g} s"
            )
            self.mark_down(err)
            raise err
        if "error" in box:
            if isinstance(box["error"], EmbeddingError):
                self.mark_down(box["error"])
            raise box["error"]
        return box["value"]

    def worker(self) -> _Worker:
        """An idle worker thread, or a new one when every worker is busy (a concurrent call,
        or one past its deadline: it rejoins the idle ones if it ever finishes)."""
        with self.lock:
            if self.idle:
                return self.idle.pop()
        return _Worker(self)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """The inner ``embed_documents`` (no deadline); ``EmbeddingError`` at once while the
        provider is down; a failure marks it down."""
        self.raise_if_down()
        try:
            return self.inner.embed_documents(texts)
        except EmbeddingError as err:
            self.mark_down(err)
            raise

    def raise_if_down(self) -> None:
        """``EmbeddingError`` naming the outage (since when, why) while the provider is down."""
        state = self.down
        if state is not None:
            ago = max(0.0, self.clock() - state["since"])
            raise EmbeddingError(
                f"{self.inner.provider} is down (for {ago:.0f} s, checked again in the"
                f" background): {state['error']}"
            )

    # -- state --------------------------------------------------------------------------
    def mark_down(self, err: BaseException) -> None:
        """Record the provider as down with ``err`` and start the background probe (once)."""
        with self.lock:
            if self.down is None:
                self.down = {"error": str(err), "since": self.clock(), "checks": 0}
            else:
                self.down["error"] = str(err)
            if self.prober is None or not self.prober.is_alive():
                self.prober = threading.Thread(
                    target=self.probe, name="memlab-provider-probe", daemon=True
                )
                self.prober.start()

    def probe(self) -> None:
        """The probe thread's body: embed ``PROBE_TEXT`` after ``retry_s``, doubling the wait
        up to ``retry_max_s``, until the provider answers (→ up) or ``close()``."""
        wait = self.retry_s
        while not self.stop_event.wait(wait):
            try:
                self.inner.embed_query(PROBE_TEXT)
            except Exception as exc:  # still down: keep the newest reason
                with self.lock:
                    if self.down is not None:
                        self.down["error"] = str(exc)
                        self.down["checks"] += 1
                wait = min(self.retry_max_s, wait * 2)
                continue
            with self.lock:
                self.down = None
            return

    def status(self) -> dict[str, Any] | None:
        """None while the provider answers; else ``{error, since, checks}`` (``since``:
        Unix seconds of the first failure; ``checks``: failed probes since)."""
        with self.lock:
            return None if self.down is None else dict(self.down)

    def close(self) -> None:
        """Stop the probe thread (it ends after its current attempt)."""
        self.stop_event.set()

    def __repr__(self) -> str:
        return f"GuardedEmbedder({self.inner!r}, deadline={self.deadline:g})"


class _Worker:
    """A daemon thread that runs ``GuardedEmbedder.embed_query``'s calls, one at a time,
    and waits among the guard's idle workers in between: a warm call costs a hand-over,
    not a new thread (~0.4 ms a query on two cores). Daemon, so a call that
    never returns does not hold the process at exit."""

    def __init__(self, guard: GuardedEmbedder) -> None:
        self.guard = guard
        self.jobs: queue.SimpleQueue[tuple[str, dict[str, Any], threading.Event]] = (
            queue.SimpleQueue()
        )
        threading.Thread(target=self.run, name="memlab-query-embed", daemon=True).start()

    def run(self) -> None:
        while True:
            text, box, done = self.jobs.get()
            try:
                box["value"] = self.guard.inner.embed_query(text)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            with self.guard.lock:  # idle again before the caller wakes: its next call reuses it
                self.guard.idle.append(self)
            done.set()
