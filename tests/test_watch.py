from __future__ import annotations

import threading
import time
from pathlib import Path

from memlab.files.watch import DirtyFlag, is_memory_event_path, watch
from memlab.retrieval.textquery import build_fts_query
from memlab.store import MemoryIndex
from tests.conftest import write


def test_memory_event_paths(tmp_path: Path) -> None:
    ws = tmp_path
    assert is_memory_event_path(str(ws / "MEMORY.md"), ws)
    assert is_memory_event_path(str(ws / "memory" / "2026-01-01.md"), ws)
    assert not is_memory_event_path(str(ws / "notes.md"), ws)
    assert not is_memory_event_path(str(ws / ".memlab" / "index.sqlite"), ws)


def test_dirty_flag_settles_and_debounces() -> None:
    d = DirtyFlag()
    assert not d.take_if_quiet(0.0, 0.0)
    d.mark()
    assert not d.take_if_quiet(10.0, 0.0)  # not settled yet
    time.sleep(0.06)
    d.mark()
    assert not d.take_if_quiet(0.05, 0.05)  # a fresh event: debounce not over
    time.sleep(0.06)
    assert d.take_if_quiet(0.05, 0.05)
    assert not d.take_if_quiet(0.0, 0.0)  # taken: clean again


def test_watch_picks_up_an_edit_within_seconds(small_workspace: Path, hashing) -> None:
    idx = MemoryIndex(
        small_workspace, embedder=hashing, db_path=small_workspace.parent / "w.sqlite"
    )
    synced = threading.Event()
    reports = []

    def on_sync(report) -> None:
        reports.append(report)
        synced.set()

    stop = threading.Event()
    t = threading.Thread(
        target=watch,
        kwargs=dict(
            index=idx, debounce_ms=200, settle_ms=200, on_sync=on_sync, stop=stop, verbose=False
        ),
        daemon=True,
    )
    t.start()
    try:
        assert synced.wait(30), "initial sync did not happen"
        synced.clear()
        t0 = time.monotonic()
        with (small_workspace / "memory" / "2026-03-20.md").open("a") as fh:
            fh.write("- Zebra migration finished for ticket OPS-77.\n")
        write(small_workspace, "memory/2026-03-22.md", "- brand new daily log\n")
        assert synced.wait(20), "the edit was not picked up"
        elapsed = time.monotonic() - t0
        # One debounced sync covers both events (or two syncs if they straddled the window).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if idx.keyword_search(build_fts_query("OPS-77"), 5)[0].size == 1:
                break
            time.sleep(0.1)
        assert idx.keyword_search(build_fts_query("OPS-77"), 5)[0].size == 1
        assert elapsed < 10
        assert sum(r.files_changed for r in reports[1:]) >= 1
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()
