"""``GuardedEmbedder``: a deadline on the query embedding, fail-fast while the provider is
down, a background probe that finds it up again, the inner embedder's identity kept."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from memlab.embed import EmbeddingError, HashingEmbedder
from memlab.embed.guard import GuardedEmbedder


class Scripted:
    """The hashing embedder behind a switch: ``ok``, ``fail`` or ``hang``; counts calls."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(16)
        self.mode = "ok"
        self.calls = 0
        self.release = threading.Event()

    provider = property(lambda self: "scripted")
    model = property(lambda self: self.inner.model)
    dimensions = property(lambda self: self.inner.dimensions)
    identity_key = property(lambda self: self.inner.identity_key)

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        if self.mode == "fail":
            raise EmbeddingError("scripted: HTTP 500")
        if self.mode == "hang":
            self.release.wait(5)
        return self.inner.embed_query(text)

    def embed_documents(self, texts):
        if self.mode != "ok":
            raise EmbeddingError("scripted: HTTP 500")
        return self.inner.embed_documents(texts)

    def count_truncated(self, texts) -> int:
        return 0


def test_identity_is_the_inner_embedders() -> None:
    inner = Scripted()
    g = GuardedEmbedder(inner, deadline=1)
    assert (g.provider, g.model, g.identity_key) == ("scripted", inner.model, inner.identity_key)
    assert g.dimensions == 16 and g.known_dimensions == 16 and g.fallback_reason is None
    assert np.array_equal(g.embed_query("tea"), inner.inner.embed_query("tea"))


def test_a_hang_costs_the_deadline_once_then_fails_fast_until_the_probe_sees_it_up() -> None:
    inner = Scripted()
    g = GuardedEmbedder(inner, deadline=0.3, retry_s=0.1, retry_max_s=0.2)
    inner.mode = "hang"
    t0 = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"no answer to the query embedding within 0\.3 s"):
        g.embed_query("tea")
    assert 0.25 < time.monotonic() - t0 < 2
    calls = inner.calls
    t0 = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"scripted is down .*within 0\.3 s"):
        g.embed_query("tea")
    with pytest.raises(EmbeddingError, match="is down"):
        g.embed_documents(["tea"])
    assert time.monotonic() - t0 < 0.1 and g.status()["error"].endswith("within 0.3 s")
    assert inner.calls <= calls + 1  # only the probe asks the provider meanwhile
    inner.mode = "ok"
    inner.release.set()
    deadline = time.monotonic() + 5
    while g.status() is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert g.embed_query("tea").shape == (16,)
    g.close()


def test_calls_reuse_one_worker_thread_and_a_hung_one_is_left_behind() -> None:
    """A warm call hands the query to a waiting worker (no new thread per call);
    a worker stuck past the deadline is not reused, and rejoins when it returns."""

    def workers() -> set[int]:
        return {t.ident for t in threading.enumerate() if t.name == "memlab-query-embed"}

    inner = Scripted()
    g = GuardedEmbedder(inner, deadline=0.3, retry_s=0.05, retry_max_s=0.05)
    before = workers()
    for text in ("tea", "coffee", "milk"):
        assert np.array_equal(g.embed_query(text), inner.inner.embed_query(text))
    first = workers() - before
    assert len(first) == 1 and len(g.idle) == 1
    inner.mode = "hang"
    with pytest.raises(EmbeddingError, match="no answer"):
        g.embed_query("tea")
    assert g.idle == []  # the stuck worker is busy, not idle
    inner.mode = "ok"
    inner.release.set()
    deadline = time.monotonic() + 5
    while g.status() is not None or len(g.idle) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert g.embed_query("tea").shape == (16,)
    assert workers() - before == first  # the worker that hung came back and serves again
    g.close()


def test_a_failure_marks_it_down_with_the_reason() -> None:
    inner = Scripted()
    g = GuardedEmbedder(inner, deadline=1, retry_s=10)
    inner.mode = "fail"
    with pytest.raises(EmbeddingError, match="HTTP 500"):
        g.embed_query("tea")
    st = g.status()
    assert st is not None and st["error"] == "scripted: HTTP 500" and st["since"] > 0
    g.close()


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="deadline must be > 0"):
        GuardedEmbedder(Scripted(), deadline=0)
