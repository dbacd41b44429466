"""The state behind ``memlab mcp``'s tools: `MemoryService`, a reader index under a lock
and a watcher thread with its own writer index.

Freshness and concurrency. Two ``MemoryIndex`` objects: the *writer* belongs to a
``memlab.files.watch`` thread (settle + debounce, then an incremental sync); the *reader*
answers every tool call under one lock (a ``MemoryIndex`` is not thread-safe; a search
holds it for milliseconds). SQLite runs in WAL mode and the writer holds ``DB.lock``,
so a search never waits for a sync: the wait bound is 0 s (``SYNC_WAIT_S``). A search
made while files changed since the last sync is answered from the index as last
synced, with a ``warning`` naming the stale files; the watcher picks them up within
``settle + debounce``.

Failures. The server starts whatever the embedding provider does: the first sync runs in
the watcher thread, and ``start`` waits for it at most ``STARTUP_WAIT_S``. A sync that
fails is retried in the background (``memlab.files.watch``: ``min(60, debounce · 2ⁿ)`` s); the
reader's query embedder is a ``memlab.embed.guard.GuardedEmbedder``, so a provider that
fails or hangs past its timeout makes ``memory_search`` answer from the keyword leg at once
(OpenClaw's keyword-only mode, with the command line's notice) until a background probe
finds it answering again. ``memory_status`` lists what is degraded, why and since when.

Size: one class, ``MemoryService``: the lock, the reader index and the watcher thread
are the state every tool call reads (``search``, ``get``, ``status``); the serving rules
(``serving``, ``stale_files``, ``with_stale``) run under that lock, and ``record`` /
``failed`` keep the outage state ``degraded_parts`` reports.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline
    from memlab.store import MemoryIndex, SyncReport

__all__ = [
    "QUERY_THREADS",
    "STALE_CHECK_S",
    "STARTUP_WAIT_S",
    "SYNC_WAIT_S",
    "MemoryService",
    "single_query_threads",
]

# How long a search may wait for a sync, in seconds: never (see the module docstring).
SYNC_WAIT_S = 0.0
# How long ``start`` waits for the first sync before serving anyway (a provider that hangs
# must not keep the server from starting; the sync goes on in the background).
STARTUP_WAIT_S = 10.0
# How old the stale-files list a search reports may be, in seconds.
STALE_CHECK_S = 1.0
# Intra-op threads of the reader's query embedder (onnxruntime). One short query is too small
# to split: on 2 busy cores one thread embeds it in half the time two take (p50 16 vs 34 ms,
# docs/benchmarks.md §11); the writer's batches (the watcher's syncs) keep every core.
QUERY_THREADS = 1


class MemoryService:
    """The state behind the tools: a reader index under a lock, a watcher with its own
    writer index, the pipeline and the ``memory_get`` extra paths.

    ``start()`` starts the watcher thread, whose first act is a sync, and waits for that
    sync (at most ``STARTUP_WAIT_S``: the first search then has an index, unless the
    provider fails or hangs); ``stop()`` ends it. The reader's embedder is wrapped in a
    ``GuardedEmbedder`` (a deadline, then keyword-only answers while the provider is down).
    ``preset_file``: what ``memory_status`` says of the ``--preset-file`` served
    (``memlab.config.preset_file.PresetFile.status``), None without one. Every method is
    safe to call from many threads at once.
    """

    def __init__(
        self,
        reader: MemoryIndex,
        writer: MemoryIndex,
        pipeline: Pipeline,
        *,
        citations: str = "auto",
        debounce_ms: int = 1500,
        settle_ms: int = 1500,
        preset_file: dict[str, Any] | None = None,
    ) -> None:
        self.reader = reader
        self.preset_file = preset_file
        self.writer = writer
        self.pipeline = pipeline
        self.citations = citations
        self.debounce_ms = debounce_ms
        self.settle_ms = settle_ms
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.last_sync: dict[str, Any] | None = None
        self.sync_error: dict[str, Any] | None = None
        self.first_sync = threading.Event()
        self.stale: list[str] = []
        self.stale_at: float | None = None
        single_query_threads(reader.embedder)
        self.guard = self.guard_reader()

    def guard_reader(self) -> Any:
        """Wrap the reader's embedder in a ``GuardedEmbedder`` (its own timeout as the
        deadline; probes from the watcher's first retry wait up to ``RETRY_MAX_S``); None
        for a keyword-only index."""
        from memlab.embed.guard import GuardedEmbedder
        from memlab.files.watch import RETRY_MAX_S

        e = getattr(self.reader, "embedder", None)
        if e is None:
            return None
        if not isinstance(e, GuardedEmbedder):
            first = max(self.debounce_ms / 1000, 0.1) * 2
            e = GuardedEmbedder(e, retry_s=first, retry_max_s=RETRY_MAX_S)
            self.reader.embedder = e
        return e

    # ------------------------------------------------------------------ lifecycle
    def start(self, wait: float = STARTUP_WAIT_S) -> None:
        """Start the watcher thread (its first act: build the line view of a system that
        ranks chunks by their best line, then sync) and wait up to ``wait`` seconds for that
        first sync; a failing or slow one goes on, and is retried, in the background."""
        self.thread = threading.Thread(target=self.watch, name="memlab-mcp-watch", daemon=True)
        self.thread.start()
        self.first_sync.wait(wait)

    def watch(self) -> None:
        """The watcher thread's body: the line view (``best_line`` systems: built now, not in
        the first tool call; a failure is recorded and the watcher's syncs, which sync the
        line views too, retry it), then ``memlab.files.watch.watch`` on the writer index."""
        from memlab.files.watch import watch

        if self.pipeline.best_line:
            try:
                self.pipeline.line_index(self.writer)
            except Exception as exc:  # e.g. the provider is down: the watcher retries
                self.failed(exc, 0.0)
        watch(
            self.writer,
            debounce_ms=self.debounce_ms,
            settle_ms=self.settle_ms,
            on_sync=self.record,
            on_error=self.failed,
            stop=self.stop_event,
        )

    def record(self, report: SyncReport) -> None:
        """Keep the last sync's summary for ``memory_status``; a sync that went through
        ends a sync outage."""
        self.last_sync = {
            "at": time.time(),
            "files_changed": report.files_changed,
            "files_removed": report.files_removed,
            "chunks": report.chunks,
            "embedded": report.embedded,
            "seconds": round(report.seconds, 3),
        }
        self.sync_error = None
        self.stale_at = None  # the stale list a search reports is re-checked after a sync
        self.first_sync.set()

    def failed(self, exc: BaseException, retry_in: float) -> None:
        """Record a failed sync for ``memory_status`` and the search warnings: the error,
        since when syncs fail, how many did, when the next try is. An ``EmbeddingError``
        also marks the reader's provider down, so searches answer keyword-only at once
        instead of each waiting for the provider."""
        from memlab.embed import EmbeddingError

        now = time.time()
        prev = self.sync_error or {}
        self.sync_error = {
            "error": f"{type(exc).__name__}: {exc}",
            "since": prev.get("since", now),
            "failures": prev.get("failures", 0) + 1,
            "next_retry_at": now + retry_in,
        }
        if isinstance(exc, EmbeddingError) and self.guard is not None:
            self.guard.mark_down(exc)
        self.first_sync.set()

    def stop(self) -> None:
        """Stop the watcher (waits up to 5 s for it) and the provider probe, and close both
        indexes."""
        self.stop_event.set()
        if self.guard is not None:
            self.guard.close()
        if self.thread is not None:
            self.thread.join(timeout=5)
        with self.lock:
            self.reader.close()
        self.writer.close()

    # ------------------------------------------------------------------ tools
    def search(
        self,
        query: str,
        maxResults: int | None = None,
        minScore: float | None = None,
        corpus: str | None = None,
    ) -> dict[str, Any]:
        """``memory_search``: ``memlab.tools.memory_search`` on the reader index.

        ``corpus``: ``memory`` / ``sessions`` keep the results of that source only
        (filtered after selection, so fewer than ``maxResults`` may come back from an
        index holding both); ``all`` or None keep every source the index covers. A bad
        argument (another corpus, an empty query, ``maxResults`` below 1 …:
        ``memlab.tools.check_search_arguments``) raises ``SearchArgumentError``, which the
        tool answers with the protocol's error result. Stale files (changed since the last sync) add
        a ``warning``; the search does not wait for their sync. The tools of the system's
        memory-file rule answer (``memlab.tools.variants``): a release system
        (``openclaw-2026.9``) with OpenClaw 2026.9.6's shapes and corpora.
        """
        from memlab.tools.variants import tool_variant

        variant = tool_variant(self.pipeline)
        with self.lock:
            index, pipeline, why = self.serving()
            res = variant.search(
                index,
                query,
                maxResults,
                minScore,
                corpus,
                pipeline=pipeline,
                citations=self.citations,
            )
            # a real search ran (not a corpus answered without one, not an outage)
            stale = self.stale_files() if "provider" in res and why is None else []
        return self.with_stale(self.with_why(res, why), stale)

    def serving(self) -> tuple[MemoryIndex, Pipeline, str | None]:
        """The index and system that answer a search now, and why they are not the usual
        ones (None when they are). Call with ``self.lock`` held.

        The reader, unless its index cannot serve without a sync (``MemoryIndex.usable``:
        not built yet, or to be rebuilt), which a tool call must not wait for — a first
        build of a large workspace, or a provider that is down or hangs. Then, for a system
        with a keyword leg, the reader's keyword-only index of the same files
        (``MemoryIndex.keyword_only``: FTS5 only, built here without the provider) and the
        system without its vector leg: OpenClaw's keyword-only mode."""
        from memlab.tools import keyword_index_note

        if not self.pipeline.keyword or self.reader.usable():
            return self.reader, self.pipeline, None
        down = self.guard.status() if self.guard is not None else None
        err = self.sync_error
        cause = (
            f"the embedding provider is down: {down['error']}"
            if down is not None
            else f"the sync fails: {err['error']}"
            if err is not None
            else "its first sync is still running"
        )
        try:
            keyword = self.reader.keyword_only()
            keyword.ensure_synced(files=True)
        except Exception:  # the reader answers (or says why it cannot) as before
            return self.reader, self.pipeline, None
        return keyword, self.pipeline.replace(vector=False), keyword_index_note(cause)

    @staticmethod
    def with_why(res: dict[str, Any], why: str | None) -> dict[str, Any]:
        """``res`` marked as a fallback answer when ``why`` is set (``serving``;
        ``memlab.tools.mark_fallback``)."""
        from memlab.tools import mark_fallback

        return mark_fallback(res, why)

    def with_stale(self, res: dict[str, Any], stale: list[str]) -> dict[str, Any]:
        """``res`` with a ``warning`` naming the stale files (up to 10), when there are any,
        and why they are stale: the watcher syncs them shortly, or syncs fail (the error)."""
        if stale:
            shown = ", ".join(stale[:10]) + (
                f" and {len(stale) - 10} more" if len(stale) > 10 else ""
            )
            err = self.sync_error
            why = (
                "the watcher syncs them shortly"
                if err is None
                else f"syncing fails, retried in the background: {err['error']}"
            )
            note = (
                f"{len(stale)} file(s) changed since the last sync are searched as last"
                f" indexed ({why}): {shown}"
            )
            res["warning"] = "; ".join(filter(None, [res.get("warning"), note]))
        return res

    def stale_files(self) -> list[str]:
        """``MemoryIndex.stale_files()`` of the reader, re-checked at most every
        ``STALE_CHECK_S`` seconds (one ``lstat`` per file costs more than a small search).
        Call with ``self.lock`` held. A failing check counts as nothing stale."""
        now = time.monotonic()
        if self.stale_at is None or now - self.stale_at >= STALE_CHECK_S:
            try:
                self.stale = self.reader.stale_files()
            except Exception:  # a status check must not fail a search that answered
                self.stale = []
            self.stale_at = now
        return self.stale

    def get(
        self,
        path: str,
        from_: int | None = None,
        lines: int | None = None,
        corpus: str | None = None,
    ) -> dict[str, Any]:
        """``memory_get``: ``memlab.tools.memory_get`` with the index's extra paths (the
        same rules as ``memlab get``; a refusal is logged on stderr with the rule): the tool
        of the system's memory-file rule (``memlab.tools.variants``; a release system's
        reads a window and answers with a ``status`` and its ``corpus``)."""
        from memlab.store.filerules import extra_path_names
        from memlab.tools import memory_path_refusal
        from memlab.tools.variants import tool_variant

        variant = tool_variant(self.pipeline)
        extra = extra_path_names(self.reader.extra_paths)
        res = variant.get(
            self.reader.workspace, path, from_, lines, extra_paths=extra, corpus=corpus
        )
        if variant.refused(res):
            why = memory_path_refusal(self.reader.workspace, path, extra, rules=variant.rules)
            print(f"memlab mcp: memory_get {path!r} refused: {why}", file=sys.stderr, flush=True)
        return res

    def status(self) -> dict[str, Any]:
        """``memory_status``: ``MemoryIndex.status()`` essentials, the pipeline, the
        watcher's state, the sync wait bound and ``degraded`` (``degraded_parts``)."""
        with self.lock:
            usable = self.reader.usable()
            st = self.reader.status()
        return {
            "degraded": self.degraded_parts(len(st["dirty_files"]), usable),
            "workspace": st["workspace"],
            "index_path": st["index_path"],
            "identity": st["identity"],
            "files": st["files"],
            "chunks": st["chunks"],
            "stale_files": st["dirty_files"],
            "skipped_files": st["skipped_files"],
            "fingerprint_current": st["fingerprint_current"],
            "last_sync": st["last_sync"],
            "pipeline": self.pipeline.name,
            # the preset file served (--preset-file): its path, base and parameters
            **({"preset_file": self.preset_file} if self.preset_file is not None else {}),
            "sources": list(self.reader.sources),
            "watching": self.thread is not None and self.thread.is_alive(),
            "watcher_last_sync": self.last_sync,
            "sync_wait_seconds": SYNC_WAIT_S,
        }

    def degraded_parts(self, n_stale: int, usable: bool = True) -> list[dict[str, Any]]:
        """What works less than it should, and why: ``[{what, why, since, effect}]``, empty
        when all is well. ``index`` (not built, or to be rebuilt: searches answer from a
        keyword-only index, ``serving``), ``embedding provider`` (the reader's guard has it
        down: searches answer keyword-only) and ``sync`` (the watcher's syncs fail:
        ``n_stale`` changed files are searched as last indexed until one goes through).
        ``since``: Unix seconds (None when not known)."""
        parts: list[dict[str, Any]] = []
        if not usable:
            parts.append(
                {
                    "what": "index",
                    "why": f"{self.reader.db_path} is not built for this embedder yet"
                    f" ({self.reader.rebuild_reason() or 'first sync running'})",
                    "since": None,
                    "effect": "memory_search answers from a keyword-only index of the same"
                    " files until the watcher's sync builds it"
                    if self.pipeline.keyword
                    else "memory_search cannot answer until the index is built",
                }
            )
        down = self.guard.status() if self.guard is not None else None
        if down is not None:
            parts.append(
                {
                    "what": "embedding provider",
                    "why": down["error"],
                    "since": down["since"],
                    "effect": "memory_search answers from the keyword leg alone (mode"
                    " fts-only, fallback true); the provider is checked in the background",
                }
            )
        err = self.sync_error
        if err is not None:
            wait = max(0.0, err["next_retry_at"] - time.time())
            parts.append(
                {
                    "what": "sync",
                    "why": err["error"],
                    "since": err["since"],
                    "effect": f"{n_stale} changed file(s) are searched as last indexed;"
                    f" {err['failures']} sync(s) failed, next try in {wait:.1f} s",
                }
            )
        return parts


def single_query_threads(embedder: Any, threads: int = QUERY_THREADS) -> bool:
    """Run an onnxruntime embedder (``OnnxEmbedder``; a ``FallbackEmbedder``'s primary and
    fallback too; a ``GuardedEmbedder``'s inner one) that has not loaded yet on one session of ``threads`` intra-op threads.

    For the reader index, which embeds one query per call. ``OnnxEmbedder``'s default
    (``sessions=None``) already runs a one-batch call on one single-thread session; this
    also pins an embedder built with explicit sessions. Returns whether any embedder
    was changed; a loaded one (its session exists), another backend or None is left as it
    is. The vectors do not depend on the thread count (same graph, same kernels).
    """
    from memlab.embed.onnx import OnnxEmbedder

    if embedder is None:
        return False
    if not isinstance(embedder, OnnxEmbedder):
        inner = [getattr(embedder, k, None) for k in ("primary", "fallback", "inner")]
        # a list, not a generator: both parts are set, whatever the first one answers
        return any([single_query_threads(e, threads) for e in inner if e is not embedder])
    if embedder.loaded or (embedder.threads, embedder.sessions) == (threads, 1):
        return False
    embedder.threads, embedder.sessions = threads, 1
    return True
