"""Corrupted index files, transient lock errors, leftovers of killed builds, chunk-level
incremental sync, the watcher's retry after a failed sync, transcript records."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from benchmarks import kill_loop
from memlab.chunking import ChunkerConfig
from memlab.embed import HashingEmbedder
from memlab.files.sessions import transcript_lines
from memlab.files.watch import watch
from memlab.retrieval.textquery import build_fts_query
from memlab.store import IndexCorruptError, IndexLockedError, MemoryIndex
from memlab.tools import memory_search
from tests.conftest import write


def make(ws: Path, db: Path, **kw) -> MemoryIndex:
    kw.setdefault("embedder", HashingEmbedder(64))
    kw.setdefault("chunker", ChunkerConfig("openclaw", 64, 8))
    return MemoryIndex(ws, db_path=db, progress=False, **kw)


def markdown_hashes(ws: Path) -> dict[str, str]:
    return {
        str(p.relative_to(ws)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(ws.rglob("*"))
        if p.is_file()
    }


def damage(db: Path, kind: str) -> None:
    data = bytearray(db.read_bytes())
    if kind == "truncated-half":
        data = data[: len(data) // 2]
    elif kind == "truncated-100":
        data = data[:100]
    elif kind == "zeroed-page":
        data[4096 * 3 : 4096 * 4] = bytes(4096)
    elif kind == "flipped-bytes":
        rng = random.Random(1)
        for _ in range(300):
            i = rng.randrange(4096, len(data))
            data[i] = rng.randrange(256)
    elif kind == "bad-header":
        data[:16] = b"not an sqlite db"
    db.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(db) + suffix)


KINDS = ["truncated-half", "truncated-100", "zeroed-page", "flipped-bytes", "bad-header"]


@pytest.fixture
def built(tmp_path: Path) -> dict:
    ws = kill_loop.make_workspace(tmp_path, 20, 0)
    db = tmp_path / "index.sqlite"
    make(ws, db).sync()
    return {"ws": ws, "db": db, "md": markdown_hashes(ws)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_index_detected_reported_rebuilt_markdown_untouched(built: dict, kind: str):
    ws, db = built["ws"], built["db"]
    fresh = db.with_name("fresh.sqlite")
    make(ws, fresh).sync()
    damage(db, kind)
    r = make(ws, db).sync()
    assert r.full_reindex
    if kind != "flipped-bytes":  # flips may also land where SQLite cannot see them
        assert r.reason.startswith("rebuilt from the Markdown") and "corrupt" in r.reason
        kept = list(db.parent.glob("index.sqlite.corrupt-*"))
        assert kept and kept[0].stat().st_size > 0  # kept for inspection
    assert kill_loop.index_digest(db) == kill_loop.index_digest(fresh)
    assert kill_loop.consistency_problems(db) == []
    assert markdown_hashes(ws) == built["md"]


@pytest.mark.parametrize("kind", ["truncated-half", "zeroed-page", "flipped-bytes"])
def test_search_on_a_corrupt_index_rebuilds_and_answers(built: dict, kind: str) -> None:
    ws, db = built["ws"], built["db"]
    reader = make(ws, db)
    assert memory_search(reader, "t3x2")["results"]
    damage(db, kind)
    reader.close()
    out = memory_search(make(ws, db), "t3x2")
    assert "error" not in out and out["results"][0]["path"] == "memory/2026-01-04.md"
    assert kind == "flipped-bytes" or list(db.parent.glob("index.sqlite.corrupt-*"))
    assert markdown_hashes(ws) == built["md"]


def test_memlab_index_reports_the_rebuild(built: dict) -> None:
    from memlab.cli import main

    damage(built["db"], "bad-header")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(["index", str(built["ws"]), "--db", str(built["db"]), "--embedder", "none"])
    assert rc == 0
    assert "full reindex (rebuilt from the Markdown:" in out.getvalue()
    assert "corrupt" in out.getvalue()


def test_a_lock_held_too_long_is_not_corruption(built: dict, monkeypatch) -> None:
    ws, db = built["ws"], built["db"]
    monkeypatch.setattr("memlab.store.schema.BUSY_TIMEOUT", 0.3)
    with (ws / "memory/2026-01-01.md").open("a") as fh:
        fh.write("- one more line\n")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # e.g. a foreign tool writing the file
    try:
        with pytest.raises(IndexLockedError, match="is busy"):
            make(ws, db).sync()
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert not list(db.parent.glob("index.sqlite.corrupt-*")), "a busy index was set aside"
    r = make(ws, db).sync()
    assert not r.full_reindex and r.files_changed == 1


def test_leftovers_of_killed_full_builds_are_removed(built: dict) -> None:
    ws, db = built["ws"], built["db"]
    for i in range(3):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}.tmp-killed{i}{suffix}").write_bytes(b"x" * 1000)
    make(ws, db).sync()  # an incremental sync cleans up too
    assert not list(db.parent.glob("index.sqlite.tmp-*"))


def test_corrupt_error_type_from_a_reader(built: dict) -> None:
    damage(built["db"], "bad-header")
    with pytest.raises(IndexCorruptError, match="corrupt or not a memlab index"):
        make(built["ws"], built["db"]).stored_fingerprint()


def test_append_rewrites_only_the_changed_chunks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory/log.md", "".join(f"- entry {i} tok{i}x words words\n" for i in range(400)))
    db = tmp_path / "index.sqlite"
    idx = make(ws, db)
    first = idx.sync()
    con = sqlite3.connect(db)
    before = dict(con.execute("SELECT id, rowid FROM chunks"))
    with (ws / "memory/log.md").open("a") as fh:
        fh.write("- appended tailtokx\n")
    r = idx.sync()
    after = dict(con.execute("SELECT id, rowid FROM chunks"))
    con.close()
    assert first.chunks > 50
    assert r.chunks_removed <= 2 and 1 <= r.chunks_added <= 3
    kept = set(before) & set(after)
    assert len(kept) == len(before) - r.chunks_removed
    assert all(before[c] == after[c] for c in kept), "unchanged chunks must keep their rows"
    assert idx.keyword_search(build_fts_query("tailtokx"), 3)[0].size == 1
    fresh = tmp_path / "fresh.sqlite"
    make(ws, fresh).sync()
    assert kill_loop.index_digest(db) == kill_loop.index_digest(fresh)


def test_watch_retries_a_failed_sync_without_a_new_event(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "- retryword\n")
    db = tmp_path / "index.sqlite"
    idx = make(ws, db, lock_timeout=0.1)
    fd = os.open(str(db) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer: the watcher's first sync fails
    syncs: list = []
    stop = threading.Event()
    err = io.StringIO()

    def run() -> None:
        with contextlib.redirect_stderr(err):
            watch(idx, debounce_ms=50, settle_ms=50, stop=stop, on_sync=syncs.append)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.5)
    os.close(fd)  # the other writer is done; no file event follows
    deadline = time.monotonic() + 20
    while not syncs and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    t.join(10)
    assert "sync failed (retrying in" in err.getvalue()
    assert syncs, "the watcher never retried"
    assert make(ws, db).keyword_search(build_fts_query("retryword"), 3)[0].size == 1


def test_transcript_records_split_on_newlines_only() -> None:
    raw = (
        '{"role": "user", "content": "first\u2028part\u0085more"}\n'
        '{"role": "assistant", "content": "answer"}\r\n'
    )
    assert transcript_lines(raw) == ["User: first part more", "Assistant: answer"]
