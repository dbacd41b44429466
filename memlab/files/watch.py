"""Keep an index fresh while memory files change (spec section 4, "Freshness").

File-system events under the workspace (memory files only) mark the index
dirty; once events have settled for ``settle_ms`` and no new event arrived for
``debounce_ms``, one incremental sync runs. ``watchdog`` delivers the events.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlab.store import MemoryIndex, SyncReport

# Longest wait before retrying a failed sync.
RETRY_MAX_S = 60.0


def is_memory_event_path(path: str, workspace: Path) -> bool:
    """True for ``MEMORY.md``/``memory.md`` at the root and ``*.md`` under ``memory/``."""
    try:
        rel = Path(path).resolve().relative_to(workspace.resolve())
    except (ValueError, OSError):
        return False
    parts = rel.parts
    if len(parts) == 1:
        return parts[0] in ("MEMORY.md", "memory.md")
    return len(parts) >= 1 and parts[0] == "memory"


class DirtyFlag:
    """Thread-safe 'something changed' marker with the time of the last event."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.first_event: float | None = None
        self.last_event: float | None = None

    def mark(self) -> None:
        now = time.monotonic()
        with self._lock:
            if self.first_event is None:
                self.first_event = now
            self.last_event = now

    def take_if_quiet(self, settle_s: float, debounce_s: float) -> bool:
        """True (and reset) once the first event is ``settle_s`` old and the last ``debounce_s``."""
        now = time.monotonic()
        with self._lock:
            if self.first_event is None or self.last_event is None:
                return False
            if now - self.first_event >= settle_s and now - self.last_event >= debounce_s:
                self.first_event = self.last_event = None
                return True
            return False


def watch(
    index: MemoryIndex,
    *,
    debounce_ms: int = 1500,
    settle_ms: int = 1500,
    max_seconds: float | None = None,
    on_sync: Callable[[SyncReport], Any] | None = None,
    on_error: Callable[[BaseException, float], Any] | None = None,
    stop: threading.Event | None = None,
    verbose: bool = True,
    interval_s: float | None = None,
) -> None:
    """Sync once, then re-sync after memory-file changes until Ctrl-C, ``stop`` or ``max_seconds``.

    Debounce rule: a sync starts when the first pending event is at least
    ``settle_ms`` old and the latest at least ``debounce_ms`` old (OpenClaw:
    1500/1500). Extra paths are watched too. A failing sync is reported and retried,
    the n-th consecutive failure after ``min(60, debounce · 2**n)`` seconds: the watcher
    keeps running and the changes it missed are not lost even when no event follows.
    ``on_sync(report)`` is called after each sync, ``on_error(exc, retry_in_s)`` after each
    failed one. ``interval_s`` (a QMD config's ``update.interval``): a sync also runs when
    that long has passed since the last one, whatever the events. Ctrl-C stops the watcher
    and is raised again (``memlab watch`` exits 130).
    """
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    from memlab.store.filerules import extra_path_names

    if debounce_ms < 0 or settle_ms < 0:
        raise ValueError("debounce_ms and settle_ms must be >= 0")
    ws = index.workspace
    dirty = DirtyFlag()
    extra_roots = [
        Path(p).expanduser() if Path(p).expanduser().is_absolute() else ws / p
        for p in extra_path_names(index.extra_paths)
    ]

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
            for p in paths:
                if not p:
                    continue
                if is_memory_event_path(p, ws) or any(_under(p, r) for r in extra_roots):
                    dirty.mark()
                    return

    def log(msg: str) -> None:
        if verbose:
            # One write of the whole line: print() writes the text and the newline in two
            # calls, and another thread (the MCP server announcing its URL) can land between.
            sys.stderr.write(msg + "\n")
            sys.stderr.flush()

    failures = 0
    retry_at = 0.0
    last_sync = time.monotonic()

    def run_sync() -> None:
        nonlocal failures, retry_at, last_sync
        last_sync = time.monotonic()
        try:
            report = index.sync(progress=False)
        except Exception as exc:  # keep watching; report and retry
            failures += 1
            wait = min(RETRY_MAX_S, max(debounce_ms / 1000, 0.1) * 2**failures)
            log(f"memlab watch: sync failed (retrying in {wait:.1f} s): {exc}")
            # Re-arm: the changes that triggered this sync are still unindexed, and no
            # further event may ever come for them (e.g. the writer lock was busy).
            retry_at = time.monotonic() + wait
            dirty.mark()
            if on_error is not None:
                on_error(exc, wait)
            return
        failures = 0
        retry_at = 0.0
        log(
            f"memlab watch: synced {report.files_changed} changed / {report.files_removed} removed"
            f" file(s), {report.chunks} chunks, embedded {report.embedded} ({report.seconds:.2f} s)"
        )
        if on_sync is not None:
            on_sync(report)

    observer = Observer()
    observer.schedule(Handler(), str(ws), recursive=True)
    for r in extra_roots:
        target = r if r.is_dir() else r.parent
        if target.exists() and not _under(str(target), ws):
            observer.schedule(Handler(), str(target), recursive=True)
    observer.start()
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    stop = stop or threading.Event()
    try:
        # Sync only once events are being observed: an edit made during the first
        # sync then still marks the index dirty.
        run_sync()
        log(f"memlab watch: watching {ws} (Ctrl-C to stop)")
        while not stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            if (
                time.monotonic() >= retry_at
                and dirty.take_if_quiet(settle_ms / 1000, debounce_ms / 1000)
            ) or (interval_s and time.monotonic() - last_sync >= interval_s):
                run_sync()
            stop.wait(0.05)
    except KeyboardInterrupt:
        log("memlab watch: stopped")
        raise  # the caller's to handle: the command line exits 130 (docs/cli.md)
    finally:
        observer.stop()
        observer.join(timeout=5)


def _under(path: str, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError):
        return False
