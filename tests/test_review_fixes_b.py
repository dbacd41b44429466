"""Review fixes (batch b): ``memlab search --corpus`` in every output mode, the onnx
embedder's per-call sessions, the allowed precisions in memlab.config.vocab, and a race-free
ONNX export."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memlab.embed import EmbeddingError, onnxexport
from memlab.embed.onnx import OnnxEmbedder
from tests.conftest import cli

WHERE = re.compile(r"(\S+\.(?:md|jsonl))#L(\d+)-L(\d+)")


# ------------------------------------------------------- 1. --corpus in every mode
@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from memlab.pipeline.presets import PRESETS

    if "openclaw-current" not in PRESETS:
        pytest.skip("preset openclaw-current is not registered")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "sessions").mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\n- The gateway runs on the laptop.\n")
    (root / "memory" / "2026-11-20.md").write_text("# Log\n\nMoved the gateway to the laptop.\n")
    (root / "sessions" / "s1.jsonl").write_text(
        '{"role": "user", "content": "Is the gateway on the laptop now?"}\n'
        '{"role": "assistant", "content": "Yes, the gateway runs on the laptop."}\n'
    )
    return root


def _modes(ws: Path, corpus: str, *extra: str) -> dict[str, Any]:
    """The three output modes of one search: the paths each returns (plain and --explain
    from the results table, --json from the results) and what each printed."""
    base = ["search", str(ws), "gateway laptop", "--embedder", "hashing"]
    base += ["--preset", "openclaw-current", "--corpus", corpus, "--min-score", "0", *extra]
    base += ["--now", "2026-12-01"]
    seen: dict[str, Any] = {}
    for mode, flags in (("plain", []), ("explain", ["--explain"]), ("json", ["--json"])):
        code, out, err = cli(*base, *flags)
        assert code == 0, (mode, err)
        if mode == "json":
            res = json.loads(out)
            paths = [(r["path"], r["startLine"], r["endLine"]) for r in res["results"]]
        else:
            table = out.split("\nexplain (")[0]  # --explain: the results table comes first
            paths = [(p, int(a), int(b)) for p, a, b in WHERE.findall(table)]
            res = None
        seen[mode] = {"paths": paths, "out": out, "err": err, "json": res}
    return seen


def test_corpus_sessions_absent_answers_alike_in_every_mode(ws: Path) -> None:
    seen = _modes(ws, "sessions")  # the index has no sessions source
    assert seen["json"]["json"]["error"] == "Session transcript search is not enabled."
    for mode in ("plain", "explain"):
        assert seen[mode]["paths"] == [], seen[mode]["out"]  # no MEMORY.md hit
        assert "Session transcript search is not enabled." in seen[mode]["out"]
        assert "MEMORY.md" not in seen[mode]["out"]
    wiki = _modes(ws, "wiki")
    assert wiki["json"]["json"]["results"] == []
    assert all(wiki[m]["paths"] == [] and "Wiki corpus" in wiki[m]["out"] for m in wiki)


def test_corpus_filters_the_same_hits_in_every_mode(ws: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"memory": {"search": {"sources": ["memory", "sessions"]}}}))
    every = _modes(ws, "all", "--config", str(cfg))
    sources = {p.split("/")[0] == "sessions" for p, _, _ in every["json"]["paths"]}
    assert sources == {True, False}, every["json"]["paths"]  # both corpora hit the query
    for corpus in ("sessions", "memory"):
        seen = _modes(ws, corpus, "--config", str(cfg))
        want = [
            p
            for p in every["json"]["paths"]
            if (p[0].startswith("sessions/")) == (corpus == "sessions")
        ]
        assert seen["json"]["paths"] == want
        assert seen["plain"]["paths"] == want and seen["explain"]["paths"] == want
        assert all(r["corpus"] == corpus for r in seen["json"]["json"]["results"])
    code, out, _ = cli(
        "search", str(ws), "gateway laptop", "--embedder", "hashing", "--config", str(cfg),
        "--preset", "openclaw-current", "--corpus", "memory", "--min-score", "0",
        "--now", "2026-12-01", "--dropped",
    )  # fmt: skip
    assert code == 0 and "not in corpus memory" in out  # the session hit, dropped and why


# ------------------------------------------------ 2. sessions per call, PRECISIONS
class FakeSession:
    """An onnxruntime session stand-in: hidden state of token t a fixed function of its id;
    records its intra-op thread count and the batches it ran."""

    def __init__(self, intra: int) -> None:
        self.intra = intra
        self.batches = 0

    def get_inputs(self) -> list[Any]:
        from types import SimpleNamespace

        return [SimpleNamespace(name=n) for n in ("input_ids", "attention_mask", "token_type_ids")]

    def run(self, _outputs: object, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.batches += 1
        time.sleep(0.01)  # long enough for the other worker to take a batch
        k = np.arange(1, 385, dtype=np.float64)
        return [np.sin(feeds["input_ids"][:, :, None] * k / 97.0).astype(np.float32)]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[FakeSession]:
    made: list[FakeSession] = []

    def sessions(self: OnnxEmbedder, graph: Path, count: int) -> list[FakeSession]:
        new = [FakeSession(max(1, self.threads // self.sessions)) for _ in range(count)]
        made.extend(new)
        return new

    monkeypatch.setattr(OnnxEmbedder, "_sessions", sessions)
    monkeypatch.setattr(OnnxEmbedder, "graph_file", lambda self: Path("unused.onnx"))
    return made


TEXTS = [f"note {i}: the gateway moved to host {i * 7} " * (1 + i % 5) for i in range(20)]


def test_default_embeds_a_query_on_one_thread_and_a_batch_on_two_sessions(
    opened: list[FakeSession],
) -> None:
    emb = OnnxEmbedder(batch_size=4)
    assert (emb.threads, emb.sessions, emb.auto_sessions) == (2, 2, True)
    q = emb.embed_query("where is the gateway")
    assert len(opened) == 1 and opened[0].intra == 1  # one session of one thread, only
    small = emb.embed_documents(TEXTS[:4])  # one batch: still one session
    assert len(opened) == 1
    docs = emb.embed_documents(TEXTS)  # 5 batches: the second session opens, both work
    assert len(opened) == 2 and all(s.intra == 1 for s in opened)
    assert all(s.batches > 0 for s in opened)
    # the same vectors as one explicit 2-thread session (the fake ignores threads; the
    # real model's equality is tests/test_server_query_threads.py's)
    ref = OnnxEmbedder(batch_size=4, sessions=1)
    np.testing.assert_array_equal(ref.embed_documents(TEXTS), docs)
    np.testing.assert_array_equal(ref.embed_query("where is the gateway"), q)
    np.testing.assert_array_equal(ref.embed_documents(TEXTS[:4]), small)
    assert opened[-1].intra == 2  # the explicit one: one session of both threads


def test_explicit_sessions_open_all_at_once(opened: list[FakeSession]) -> None:
    emb = OnnxEmbedder(threads=2, sessions=2)
    emb.embed_query("x")
    assert len(opened) == 2 and not emb.auto_sessions
    assert OnnxEmbedder(threads=1).sessions == 1  # one thread: one session


def test_precisions_live_in_vocab() -> None:
    from memlab.config import vocab
    from memlab.embed import onnx

    assert onnx.PRECISIONS is vocab.ONNX_PRECISIONS == ("fp32", "int8")
    with pytest.raises(ValueError, match="precision must be one of fp32, int8"):
        OnnxEmbedder(precision="fp16")


# ---------------------------------------------------- 3. the export, concurrently
def test_two_threads_export_to_one_cold_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    graph = b"ONNX" + bytes(range(256)) * 64

    def slow_write(folder: Path, tmp: Path) -> None:
        calls.append(tmp)
        with tmp.open("wb") as fh:  # written in pieces: a shared temp file would interleave
            for i in range(0, len(graph), 1024):
                fh.write(graph[i : i + 1024])
                fh.flush()
                time.sleep(0.002)

    monkeypatch.setattr(onnxexport, "write_graph", slow_write)
    dest = tmp_path / "cache" / "onnx" / "abc" / "model.onnx"
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def run() -> None:
        start.wait()
        try:
            assert onnxexport.export_onnx(tmp_path / "model", dest) == dest
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    workers = [threading.Thread(target=run) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert dest.read_bytes() == graph
    assert len(calls) == 1  # the waiting thread found the fresh export
    assert sorted(p.name for p in dest.parent.iterdir()) == ["model.onnx"]  # no temp left
    assert calls[0].parent == dest.parent and calls[0].name != f"model.onnx.{os.getpid()}.tmp"
    assert dest.stat().st_mode & 0o777 == 0o644


def test_unique_temp_files_and_a_failed_export_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names: list[str] = []

    def write(folder: Path, tmp: Path) -> None:
        names.append(tmp.name)
        tmp.write_bytes(b"graph")

    monkeypatch.setattr(onnxexport, "write_graph", write)
    dest = tmp_path / "model.onnx"
    onnxexport.export_onnx(tmp_path, dest)
    onnxexport.export_onnx(tmp_path, dest)  # an explicit re-export runs again
    assert len(names) == 2 and len(set(names)) == 2

    def broken(folder: Path, tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise RuntimeError("exporter crashed")

    monkeypatch.setattr(onnxexport, "write_graph", broken)
    with pytest.raises(EmbeddingError, match="exporter crashed"):
        onnxexport.export_onnx(tmp_path, tmp_path / "other.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]
