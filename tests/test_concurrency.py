"""Concurrent writers and readers: a watcher indexing a log that is being appended to while
searches run, two indexers on one index, readers during long writes, stale readers, and a
reduced load run (the full one is benchmarks/load.py)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks import kill_loop
from memlab.embed import HashingEmbedder
from memlab.files.watch import watch
from memlab.retrieval.textquery import build_fts_query
from memlab.store import MemoryIndex
from memlab.tools import memory_search
from tests.conftest import write

TODAY = "memory/2026-06-01.md"


def make(ws: Path, db: Path, **kw) -> MemoryIndex:
    kw.setdefault("embedder", HashingEmbedder(32))
    return MemoryIndex(ws, db_path=db, progress=False, **kw)


def seed_workspace(root: Path, days: int = 12) -> Path:
    ws = root / "ws"
    write(ws, "MEMORY.md", "# Memory\n- the gateway runs on the office Mac Studio\n")
    for d in range(days):
        write(
            ws,
            f"memory/2026-05-{d + 1:02d}.md",
            "".join(f"- day {d} note {i} seedtok{d}x{i} about things\n" for i in range(25)),
        )
    write(ws, TODAY, "# 2026-06-01\n")
    return ws


@pytest.mark.slow
def test_writer_watch_and_searches_no_lost_line_no_duplicate_no_error(
    tmp_path: Path, capsys
) -> None:
    ws = seed_workspace(tmp_path)
    db = tmp_path / "index.sqlite"
    writer_idx = make(ws, db)
    stop = threading.Event()
    syncs: list = []
    watcher = threading.Thread(
        target=watch,
        kwargs={
            "index": writer_idx,
            "debounce_ms": 100,
            "settle_ms": 100,
            "stop": stop,
            "on_sync": syncs.append,
        },
        daemon=True,
    )
    watcher.start()
    while not syncs:  # the initial sync
        time.sleep(0.05)

    n_lines = 150
    done = threading.Event()

    def writer() -> None:
        rng = random.Random(1)
        for i in range(n_lines):
            with (ws / TODAY).open("a", encoding="utf-8") as fh:
                fh.write(f"- appended {i} line apptok{i:04d}x with some words\n")
            time.sleep(rng.uniform(0, 0.02))
        done.set()

    errors: list[str] = []
    searches = [0]

    def searcher(seed: int) -> None:
        idx = make(ws, db)
        rng = random.Random(seed)
        try:
            while not done.is_set() or searches[0] < 40:
                q = rng.choice(
                    [
                        f"apptok{rng.randrange(n_lines):04d}x",
                        f"seedtok{rng.randrange(12)}x3",
                        "gateway",
                    ]
                )
                out = memory_search(idx, q)
                searches[0] += 1
                if "error" in out:
                    errors.append(out["error"])
                for r in out["results"]:
                    if not r["snippet"].strip():
                        errors.append(f"empty snippet for {r['path']}#{r['startLine']}")
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            idx.close()

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=searcher, args=(s,)) for s in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    # Let the watcher settle: the indexed hash of today's log equals the file's.
    want = hashlib.sha256((ws / TODAY).read_bytes()).hexdigest()
    deadline = time.monotonic() + 60
    con = sqlite3.connect(db)
    while time.monotonic() < deadline:
        row = con.execute("SELECT hash FROM files WHERE path=?", (TODAY,)).fetchone()
        if row and row[0] == want:
            break
        time.sleep(0.1)
    con.close()
    stop.set()
    watcher.join(30)
    assert not errors, errors[:5]
    assert searches[0] >= 40 and len(syncs) >= 2
    assert "sync failed" not in capsys.readouterr().err
    reader = make(ws, db)
    lost = [
        i
        for i in range(n_lines)
        if reader.keyword_search(build_fts_query(f"apptok{i:04d}x"), 3)[0].size == 0
    ]
    assert not lost, f"lines not findable after the watcher settled: {lost[:10]}"
    assert kill_loop.consistency_problems(db, dims=32) == []
    fresh = tmp_path / "fresh.sqlite"
    make(ws, fresh).sync()
    assert _chunks(db) == _chunks(fresh)


def _chunks(db: Path) -> list:
    return kill_loop.index_digest(db)["chunks"]


@pytest.mark.slow
def test_two_memlab_index_processes_one_waits(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    rng = random.Random(0)
    for d in range(30):
        write(
            ws,
            f"memory/2026-01-{d + 1:02d}.md",
            "".join(f"- note {i} tok{d}x{i} {rng.random():.6f}\n" for i in range(60)),
        )
    db = tmp_path / "index.sqlite"
    cmd = [sys.executable, "-m", "memlab.cli", "index", str(ws), "--db", str(db)]
    cmd += ["--embedder", "hashing", "--json", "--quiet"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    reports = [json.loads(out) for out, _ in outs]
    # Serialised by the writer lock: one built the index, the other found nothing to do.
    assert sorted(r["files_changed"] for r in reports) == [0, 30]
    assert sum(r["full_reindex"] for r in reports) == 1
    assert kill_loop.consistency_problems(db, dims=384) == []  # CLI hashing is 384-d
    fresh = tmp_path / "fresh.sqlite"
    MemoryIndex(ws, db_path=fresh, embedder=HashingEmbedder(), progress=False).sync()
    assert _chunks(db) == _chunks(fresh)


def test_memlab_index_fails_clearly_when_the_lock_stays_taken(tmp_path: Path) -> None:
    from memlab.cli import main

    ws = seed_workspace(tmp_path, days=2)
    db = tmp_path / "index.sqlite"
    fd = os.open(str(db) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main(
                [
                    "index",
                    str(ws),
                    "--db",
                    str(db),
                    "--embedder",
                    "none",
                    "--quiet",
                    "--lock-timeout",
                    "0.3",
                ]
            )
    finally:
        os.close(fd)
    assert rc == 1
    assert "another process is writing" in err.getvalue() and "waited 0.3 s" in err.getvalue()
    assert not db.exists() or make(ws, db, embedder=None).stored_fingerprint() is None


def test_readers_do_not_wait_for_a_long_write(tmp_path: Path) -> None:
    ws = seed_workspace(tmp_path, days=3)
    db = tmp_path / "index.sqlite"
    make(ws, db).sync()
    # Another connection holds the write lock (a long sync's final transaction).
    w = sqlite3.connect(db, isolation_level=None)
    w.execute("BEGIN IMMEDIATE")
    w.execute("INSERT INTO meta(key, value) VALUES ('long', 'write')")
    try:
        t0 = time.monotonic()
        out = memory_search(make(ws, db), "gateway Mac Studio")
        took = time.monotonic() - t0
    finally:
        w.execute("ROLLBACK")
        w.close()
    assert "error" not in out and out["results"]
    assert took < 10, f"a reader waited {took:.1f} s for the writer"


def test_stale_reader_sees_changes_never_mislabels(tmp_path: Path) -> None:
    ws = seed_workspace(tmp_path, days=3)
    db = tmp_path / "index.sqlite"
    writer = make(ws, db)
    writer.sync()
    reader = make(ws, db)
    assert memory_search(reader, "seedtok2x24")["results"]  # table loaded and cached
    old_rowids = set(reader.table.rowids.tolist())
    # The writer rewrites the last file (highest rowids), deletes one, adds one.
    write(ws, "memory/2026-05-03.md", "- rewritten newtokzz about the gateway\n")
    (ws / "memory/2026-05-01.md").unlink()
    write(ws, "memory/2026-05-09.md", "- added addtokzz line\n")
    writer.sync()
    new_rowids = set(make(ws, db).table.rowids.tolist())
    assert all(r > max(old_rowids) for r in new_rowids - old_rowids), "rowid reused"
    for q, path in [
        ("newtokzz", "memory/2026-05-03.md"),
        ("addtokzz", "memory/2026-05-09.md"),
    ]:
        res = memory_search(reader, q)["results"]
        assert res and res[0]["path"] == path and q in res[0]["snippet"]
    assert not memory_search(reader, "seedtok0x3")["results"]
    # A full reindex swaps the file: the reader reopens it.
    writer.sync(force=True)
    res = memory_search(reader, "addtokzz")["results"]
    assert res and res[0]["path"] == "memory/2026-05-09.md"


def test_stale_table_mid_search_drops_unknown_rows(tmp_path: Path) -> None:
    ws = seed_workspace(tmp_path, days=2)
    db = tmp_path / "index.sqlite"
    writer = make(ws, db)
    writer.sync()
    reader = make(ws, db)
    table = reader.table  # loaded before the writer's next commit
    write(ws, "memory/2026-05-02.md", "- replaced midtokzz\n")
    writer.sync()
    # Without a refresh (as in the middle of one search): new rows are unknown to the
    # table and left out; deleted rows come back as "" rather than another chunk's text.
    pos, _ = reader.keyword_search(build_fts_query("midtokzz"), 5)
    assert pos.size == 0
    gone = [i for i, p in enumerate(table.paths) if p == "memory/2026-05-02.md"]
    assert reader.texts(gone) == [""] * len(gone)
    assert reader.refresh() and reader.keyword_search(build_fts_query("midtokzz"), 5)[0].size


@pytest.mark.slow
def test_load_reduced(tmp_path: Path) -> None:
    """benchmarks/load.py for 4 s at 20 searches/s: no error, nothing lost."""
    from benchmarks import load

    res = load.load_run(tmp_path, seconds=4, rate=20, threads=4, append_every=0.1, days=20)
    assert res["writer_exit"] == 0, res["writer_stderr"]
    assert res["errors"] == 0, res["error_samples"]
    assert res["searches"] == 80 and res["appended_lines"] >= 10
    assert res["appended_missing_after_settle"] == 0
