"""`memlab mcp`'s reader embeds one query per call on one onnxruntime thread.

``memlab.server.single_query_threads`` sets the reader's (not yet loaded) ``OnnxEmbedder``
to one session of ``QUERY_THREADS`` threads; the writer (the watcher's batch syncs) keeps
its threads; a loaded embedder, another backend and a ``FallbackEmbedder``'s parts are
handled as documented; and the vectors do not change with the thread count.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from memlab.embed import HashingEmbedder
from memlab.embed.onnx import OnnxEmbedder
from memlab.embed.select import FallbackEmbedder
from memlab.server import QUERY_THREADS, MemoryService, single_query_threads


def test_the_reader_gets_one_thread_and_the_writer_keeps_both() -> None:
    reader, writer = OnnxEmbedder(threads=2, sessions=2), OnnxEmbedder(threads=2, sessions=2)
    MemoryService(SimpleNamespace(embedder=reader), SimpleNamespace(embedder=writer), None)  # type: ignore[arg-type]
    assert (reader.threads, reader.sessions) == (QUERY_THREADS, 1) == (1, 1)
    assert (writer.threads, writer.sessions) == (2, 2)
    assert not reader.loaded  # nothing was loaded to change it


def test_what_is_left_alone() -> None:
    assert single_query_threads(None) is False
    assert single_query_threads(HashingEmbedder()) is False
    already = OnnxEmbedder(threads=1)
    assert single_query_threads(already) is False
    primary = OnnxEmbedder(threads=2)
    fb = FallbackEmbedder(primary, HashingEmbedder())
    assert single_query_threads(fb) is True and primary.threads == 1


@pytest.mark.model
def test_a_loaded_embedder_is_not_changed_and_vectors_do_not_depend_on_threads() -> None:
    two, one = OnnxEmbedder(threads=2), OnnxEmbedder(threads=2)
    queries = ["where did I park the car", "Zebra-7731 design review, Tuesday", "日本語のメモ"]
    v2 = np.stack([two.embed_query(q) for q in queries])
    assert single_query_threads(two) is False and two.threads == 2  # its session exists
    assert single_query_threads(one) is True
    v1 = np.stack([one.embed_query(q) for q in queries])
    np.testing.assert_allclose(v1, v2, atol=1e-6)
    assert (v1 * v2).sum(axis=1).min() >= 0.99999
