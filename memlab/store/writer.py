"""The write side of ``MemoryIndex``: sync under the writer lock, rebuilds, ``ensure_synced``.

``IndexWriter`` is a base class of ``MemoryIndex`` (it holds no state of its own): the
decisions of a sync — incremental or full reindex, set a corrupt file aside, restart
when the embedder switched — live here, the mechanics in ``memlab.store.sync``. The
methods stay methods of the index so a test or a benchmark can observe them (e.g.
count ``MemoryIndex._full_reindex`` calls).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.store.filerules import chunk_file
from memlab.store.identity import describe_fingerprint_change, fingerprints_match
from memlab.store.schema import IndexCorruptError, db_error
from memlab.store.sync import (
    EmbedderSwitched,
    SyncReport,
    full_reindex,
    remove_stale_builds,
    set_aside_unusable,
    sync_into,
    writer_lock,
)

if TYPE_CHECKING:
    from memlab.chunking import ChunkerConfig
    from memlab.embed import Embedder
    from memlab.files.workspace import MemoryFile

__all__ = ["IndexWriter"]


class IndexWriter:
    """Sync methods of ``MemoryIndex`` (see there for the attributes they use)."""

    if TYPE_CHECKING:
        workspace: Path
        db_path: Path
        embedder: Embedder | None
        chunker: ChunkerConfig
        fts_tokenizer: str
        fts_path_prefix: bool
        memory_files: str
        cache_enabled: bool
        cache_max_entries: int | None
        lock_timeout: float
        progress: bool | None
        _conn: sqlite3.Connection | None

        def connect(self) -> sqlite3.Connection: ...
        def close(self) -> None: ...
        def refresh(self) -> bool: ...
        def discover(self) -> list[MemoryFile]: ...
        def fingerprint(self) -> dict[str, Any]: ...
        def stored_fingerprint(self) -> dict[str, Any] | None: ...
        def stale_files(self) -> list[str]: ...
        def _drop_table(self) -> None: ...

    def sync(self, *, force: bool = False, progress: bool | None = None) -> SyncReport:
        """Bring the index in step with the workspace.

        Incremental: only files whose content hash changed are re-chunked, and
        only chunk texts missing from the embedding cache are embedded; within a
        changed file, chunks whose id is unchanged keep their rows. Files that
        disappeared leave every table. A fingerprint change (or ``force=True``)
        runs a full reindex into a new file swapped in atomically. Unreadable
        files are reported in ``files_failed`` and skipped; an embedding failure
        raises ``EmbeddingError`` before any chunk row is written (the cache keeps
        what was embedded). A corrupt index file (found on opening or during the
        sync) is moved aside and rebuilt from the Markdown. When the embedder
        changes identity during the sync (a ``FallbackEmbedder`` switching to its
        fallback), nothing embedded so far is written to the chunk tables and the
        sync restarts as a full reindex with the new embedder, so one index never
        mixes vectors of two providers.
        """
        t0 = time.perf_counter()
        show = self.progress if progress is None else progress
        with writer_lock(self.db_path, self.lock_timeout):
            remove_stale_builds(self.db_path)
            reason = "forced" if force else ""
            for _attempt in range(3):
                try:
                    report = self._sync_locked(reason, show)
                    break
                except EmbedderSwitched as exc:
                    reason = f"embedding provider switched: {exc}"
            else:  # pragma: no cover - a FallbackEmbedder switches once
                raise RuntimeError("embedding provider kept switching during sync")
        self._drop_table()
        report.seconds = time.perf_counter() - t0
        return report

    def _sync_locked(self, reason: str, show: bool | None) -> SyncReport:
        stored = None
        if self.db_path.exists():
            try:
                stored = self.stored_fingerprint()
            except IndexCorruptError as exc:
                self._set_aside_unusable()
                reason = reason or f"rebuilt from the Markdown: {exc}"
        fp = self.fingerprint()
        if not reason and not fingerprints_match(stored, fp):
            if stored is None:
                reason = "new index"
            else:
                reason = "fingerprint changed: " + describe_fingerprint_change(stored, fp)
        if not reason:
            conn = self.connect()
            try:
                return self._sync_into(conn, show)
            except sqlite3.DatabaseError as exc:
                err = db_error(self.db_path, exc)
                if not isinstance(err, IndexCorruptError):
                    raise err from exc
                with contextlib.suppress(sqlite3.Error):
                    conn.rollback()
                self._set_aside_unusable()
                reason = f"rebuilt from the Markdown: {err}"
        report = self._full_reindex(show)
        report.full_reindex = True
        report.reason = reason
        return report

    def _set_aside_unusable(self) -> None:
        self.close()
        set_aside_unusable(self.db_path)

    def _full_reindex(self, show: bool | None) -> SyncReport:
        def detached() -> None:
            self._conn = None

        return full_reindex(
            self.db_path,
            self.fts_tokenizer,
            self._conn,
            lambda conn: self._sync_into(conn, show),
            cache_max_entries=self.cache_max_entries,
            detached=detached,
        )

    def _sync_into(self, conn: sqlite3.Connection, show: bool | None) -> SyncReport:
        return sync_into(
            conn,
            self.discover(),
            workspace=self.workspace,
            chunker=self.chunker,
            embedder=self.embedder,
            cache_enabled=self.cache_enabled,
            fts_path_prefix=self.fts_path_prefix,
            fingerprint=self.fingerprint,
            show=show,
            chunk_file=lambda f, text: chunk_file(self.memory_files, self.chunker, f, text),
        )

    def ensure_synced(self, *, files: bool = False) -> SyncReport | None:
        """Prepare for a search: reload what another connection changed (``refresh``), and
        sync when the index is missing, corrupt or its fingerprint changed (the first
        search waits). With ``files=False`` (the library default, OpenClaw's behaviour: a
        search never waits for a sync) changed files alone do not trigger a sync; with
        ``files=True`` (``memlab search``) they do, and an unchanged workspace costs one
        ``lstat`` per memory file plus one query of the ``files`` table (``stale_files``).
        """
        self.refresh()
        try:
            stale = not self.db_path.exists() or not fingerprints_match(
                self.stored_fingerprint(), self.fingerprint()
            )
        except IndexCorruptError:
            stale = True
        if stale or (files and self.stale_files()):
            return self.sync()
        return None
