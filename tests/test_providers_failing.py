"""A failing embedding provider never leaves the index half-written.

The HTTP embedder talks to a local server that hangs, resets connections, answers 429
forever, returns vectors of the wrong dimension, NaN or zeros, or fails in the middle of
a sync. Expected (docs/reliability.md): a clear ``EmbeddingError``; the chunk tables and
fingerprint exactly as before; the embedding cache keeps finished batches; the configured
fallback provider takes over without mixing vectors; a query whose embedding fails is
answered by the keyword leg alone.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import kill_loop
from memlab.embed import (
    EmbeddingError,
    FallbackEmbedder,
    HashingEmbedder,
    OpenAIEmbedder,
    resolve_embedder,
)
from memlab.store import EMBED_BATCH, MemoryIndex
from memlab.tools import memory_search
from tests.conftest import write

DIM = 16
REF = HashingEmbedder(DIM)


class Provider:
    """A scripted OpenAI-compatible server; ``mode`` can be changed at any time."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.ok_budget: int | None = None  # answer this many requests "ok", then `mode`
        self.requests = 0
        self.lock = threading.Lock()
        self.url = ""

    def behaviour(self) -> str:
        with self.lock:
            self.requests += 1
            if self.ok_budget is not None and self.ok_budget > 0:
                self.ok_budget -= 1
                return "ok"
            return self.mode


@pytest.fixture
def provider() -> Iterator[Provider]:
    prov = Provider()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            mode = prov.behaviour()
            texts = body["input"]
            if mode == "hang":
                time.sleep(5)
                return
            if mode == "reset":  # RST instead of an answer
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                return
            if mode in ("429", "500"):
                self._send(int(mode), {"error": {"message": f"status {mode}"}})
                return
            vecs = REF.embed_documents(texts).astype(float)
            if mode == "dim8":
                vecs = vecs[:, :8]
            elif mode == "nan":
                vecs[:] = np.nan
            elif mode == "partial-nan":
                vecs[:, ::2] = np.nan
            elif mode == "zeros":
                vecs[:] = 0.0
            data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
            self._send(200, {"data": data})

        def _send(self, code: int, doc: dict) -> None:
            raw = json.dumps(doc).encode()  # NaN is written as the literal NaN
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    prov.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield prov
    finally:
        httpd.shutdown()
        httpd.server_close()


def http_embedder(prov: Provider, **kw: Any) -> OpenAIEmbedder:
    kw.setdefault("dimensions", DIM)
    kw.setdefault("timeout", 0.5)
    kw.setdefault("max_retries", 2)
    kw.setdefault("sleep", lambda s: None)  # no real back-off waits in tests
    kw.setdefault("batch_size", 8)
    return OpenAIEmbedder(prov.url, "test-model", **kw)


def workspace(root: Path, days: int = 6) -> Path:
    ws = root / "ws"
    write(ws, "MEMORY.md", "# Memory\n- the gateway token GATEWAY42 lives in the vault\n")
    for d in range(days):
        write(
            ws,
            f"memory/2026-02-{d + 1:02d}.md",
            "".join(f"- day {d} item {i} word{d}x{i} detail text\n" for i in range(40)),
        )
    return ws


def tables(db: Path) -> dict:
    d = kill_loop.index_digest(db)
    return {"fingerprint": d["fingerprint"], "files": d["files"], "chunks": d["chunks"]}


def index(ws: Path, db: Path, emb: Any) -> MemoryIndex:
    from memlab.chunking import ChunkerConfig

    # Small chunks: a sync needs several embedding requests.
    return MemoryIndex(
        ws, db_path=db, embedder=emb, chunker=ChunkerConfig("openclaw", 64, 8), progress=False
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("hang", "timed out after 0.5 s"),
        ("reset", "connection error"),
        ("429", "HTTP 429"),
        ("500", "retries exhausted"),
        ("dim8", "expected dimension 16, got 8"),
    ],
)
def test_failing_provider_clear_error_index_untouched(
    provider: Provider, tmp_path: Path, mode: str, message: str
) -> None:
    ws = workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    idx = index(ws, db, http_embedder(provider))
    idx.sync()
    before = tables(db)
    write(ws, "memory/2026-02-07.md", "- new day freshtok line\n")
    with (ws / "memory/2026-02-01.md").open("a") as fh:
        fh.write("- appended apptok line\n")
    provider.mode = mode
    t0 = time.monotonic()
    with pytest.raises(EmbeddingError, match=message.replace("(", r"\(")):
        idx.sync()
    assert time.monotonic() - t0 < 15  # 3 attempts × 0.5 s timeout, no real back-off
    assert tables(db) == before, "chunk tables or fingerprint changed by a failed sync"
    assert kill_loop.consistency_problems(db, dims=DIM) == []
    # The old content is still searchable; the provider failure is not the index's.
    reader = index(ws, db, HashingEmbedder(DIM))
    assert reader.keyword_search('"GATEWAY42"', 3)[0].size == 1
    provider.mode = "ok"
    r = idx.sync()
    assert r.files_changed == 2 and not r.full_reindex
    fresh = tmp_path / "fresh.sqlite"
    index(ws, fresh, http_embedder(provider)).sync()
    assert tables(db)["chunks"] == tables(fresh)["chunks"]


def test_new_index_with_failing_provider_leaves_no_file(provider: Provider, tmp_path: Path):
    ws = workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    provider.mode = "500"
    with pytest.raises(EmbeddingError):
        index(ws, db, http_embedder(provider)).sync()
    assert not db.exists() and not list(tmp_path.glob("index.sqlite.tmp-*"))


@pytest.mark.parametrize("mode", ["500", "dim8"])
def test_failure_mid_sync_keeps_finished_batches_in_the_cache(
    provider: Provider, tmp_path: Path, mode: str
) -> None:
    ws = workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    idx = index(ws, db, http_embedder(provider))
    idx.sync()
    for d in range(6):  # every file changes: over 100 new chunks to embed
        with (ws / f"memory/2026-02-{d + 1:02d}.md").open("a") as fh:
            fh.write("".join(f"- extra {d} {i} midtok{d}x{i} more words\n" for i in range(150)))
    before = tables(db)
    cache_before = idx.status()["cache_entries"]
    # The index embeds 64 chunks per call (8 requests of 8 here): the first call
    # succeeds, the second fails part-way.
    provider.mode, provider.ok_budget = mode, 10
    with pytest.raises(EmbeddingError):
        idx.sync()
    assert tables(db) == before
    assert idx.status()["cache_entries"] == cache_before + EMBED_BATCH  # committed at once
    provider.mode, provider.ok_budget = "ok", None
    r = idx.sync()
    assert r.cache_hits >= EMBED_BATCH and r.files_changed == 6


def test_fallback_provider_takes_over_without_mixing_vectors(
    provider: Provider, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    emb = FallbackEmbedder(http_embedder(provider), HashingEmbedder(32))
    idx = index(ws, db, emb)
    assert idx.sync().full_reindex
    assert idx.stored_fingerprint()["provider"] == "openai"
    for d in range(6):
        with (ws / f"memory/2026-02-{d + 1:02d}.md").open("a") as fh:
            fh.write("".join(f"- extra {d} {i}\n" for i in range(20)))
    provider.mode, provider.ok_budget = "500", 1  # fails in the middle of the sync
    r = idx.sync()
    assert emb.switched and "retries exhausted" in emb.fallback_reason
    assert r.full_reindex and r.reason.startswith("embedding provider switched")
    fp = idx.stored_fingerprint()
    assert fp["provider"] == "hashing" and fp["dims"] == 32
    assert kill_loop.consistency_problems(db, dims=32) == []  # every vector from the fallback
    out = memory_search(idx, "gateway token GATEWAY42")
    assert out["fallback"] is True and out["mode"] == "hybrid"
    assert out["results"][0]["path"] == "MEMORY.md"


def test_fallback_configured_by_name(provider: Provider, tmp_path: Path) -> None:
    ws = workspace(tmp_path, days=2)
    provider.mode = "429"
    emb = resolve_embedder(
        "openai", remote={"baseUrl": provider.url, "apiKey": "k"}, fallback="hashing"
    )
    assert isinstance(emb, FallbackEmbedder)
    emb.primary._sleep = lambda s: None  # the spec's back-off is 0.5+1+2 s; skip it
    idx = index(ws, tmp_path / "index.sqlite", emb)
    r = idx.sync()
    assert emb.switched and "HTTP 429" in emb.fallback_reason
    assert idx.stored_fingerprint()["provider"] == "hashing" and r.chunks > 0


@pytest.mark.slow
def test_query_embedding_failure_answers_with_keywords(provider: Provider, tmp_path: Path):
    ws = workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    idx = index(ws, db, http_embedder(provider))
    idx.sync()
    provider.mode = "hang"
    out = memory_search(idx, "GATEWAY42")
    assert "error" not in out
    assert out["mode"] == "fts-only" and out["fallback"] is True
    assert "keyword-only" in out["warning"] and "timed out" in out["warning"]
    assert out["results"] and out["results"][0]["path"] == "MEMORY.md"


def test_query_time_switch_never_compares_vectors_of_two_providers(
    provider: Provider, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    emb = FallbackEmbedder(http_embedder(provider), HashingEmbedder(32))
    idx = index(ws, db, emb)
    idx.sync()
    provider.mode = "500"
    # The query switches the embedder: its 32-d vector must not meet the 16-d index.
    out = memory_search(idx, "GATEWAY42")
    assert out["mode"] == "fts-only" and "failed during the search" in out["warning"]
    assert out["results"][0]["path"] == "MEMORY.md"
    # The next search rebuilds the index with the fallback, then searches both legs.
    out2 = memory_search(idx, "gateway token GATEWAY42")
    assert out2["mode"] == "hybrid" and out2["fallback"] is True and "warning" not in out2
    assert idx.stored_fingerprint()["provider"] == "hashing"


@pytest.mark.parametrize("mode", ["nan", "zeros", "partial-nan"])
def test_nan_and_zero_vectors_are_sanitised_and_counted(
    provider: Provider, tmp_path: Path, mode: str
) -> None:
    ws = workspace(tmp_path, days=2)
    db = tmp_path / "index.sqlite"
    provider.mode = mode
    idx = index(ws, db, http_embedder(provider))
    r = idx.sync()
    vecs = idx.table.vectors
    assert vecs is not None and np.isfinite(vecs).all()
    norms = np.linalg.norm(vecs, axis=1)
    if mode == "partial-nan":
        assert r.zero_vectors == 0 and np.allclose(norms, 1, atol=1e-5)
    else:
        # Non-finite components become 0 (spec §3): such chunks are found by keywords only.
        assert r.zero_vectors == r.chunks and np.all(norms == 0)
    assert kill_loop.consistency_problems(db, dims=DIM) == []
    out = memory_search(idx, "GATEWAY42")
    assert "error" not in out
    assert idx.keyword_search('"GATEWAY42"', 3)[0].size == 1
