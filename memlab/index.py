"""The memory index: one SQLite file per workspace and identity (spec section 4).

By default the file lives in the user cache, one per (FTS tokenizer, embedder)
identity (``default_db_path``, ``index_identity``): never inside the workspace, and
switching preset or embedder opens another file instead of rebuilding this one.

Tables: ``meta(key, value)``, ``files(path, source, hash, mtime, size)``,
``chunks(id, path, source, start_line, end_line, hash, model, text, embedding,
updated_at, heading, truncated)``, ``embedding_cache(provider, model,
provider_key, hash, embedding, dims, truncated, updated_at)`` and an FTS5 table
``chunks_fts`` whose rowid is the chunk's rowid. Vectors are float32 blobs in
``chunks.embedding``, loaded into memory on first search and served by a
``memlab.vectors`` engine (exact by default).

Sync is incremental by content hash; a change of fingerprint (provider, model,
provider key, sources, extra paths, chunker, FTS tokenizer, dimensions) builds
a new database beside the old one, copies the embedding cache and swaps it in
with ``os.replace``: a crash at any point leaves the old index usable.

Concurrency (see docs/reliability.md): one writer at a time (``DB.lock``); readers
never write, so they never wait for a long sync; chunk rowids are never reused, so
a reader whose cached table predates a sync can drop unknown rows instead of
mislabelling them; each search re-checks whether another connection changed the
index (``PRAGMA data_version``) or swapped the file (inode) and reloads if so. A
``MemoryIndex`` object is not thread-safe: give each thread its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab import __version__
from memlab.chunking import Chunk, ChunkerConfig
from memlab.paths import cache_dir
from memlab.workspace import (
    MemoryFile,
    MemoryFileError,
    discover_memory_files,
    read_memory_file,
    resolve_workspace,
    sha256_text,
)

if TYPE_CHECKING:
    import pandas as pd

    from memlab.config import MemorySearchConfig
    from memlab.embed import Embedder

SCHEMA_VERSION = 1
FTS_ONLY_MODEL = "fts-only"
FTS_TOKENIZE = {
    "unicode61": "unicode61",
    "trigram": "trigram case_sensitive 0",
    "porter": "porter unicode61",
}
# Vector-leg engines (memlab.vectors.ENGINES): "numpy" is the exact scan at memory
# speed; "faiss" exact too; "fp16"/"sq8" quantised scans re-scored exactly; "ivf"/"hnsw"
# approximate. See docs/benchmarks.md for their speed and recall.
VECTOR_BACKENDS = ("numpy", "faiss", "fp16", "sq8", "ivf", "hnsw")
# Rows fetched per batch when loading the chunk table (bounds the loader's extra memory).
LOAD_BATCH = 50_000
EMBED_BATCH = 64
# Seconds an SQLite call waits for another connection's lock before failing.
BUSY_TIMEOUT = 30.0


class IndexUnusableError(RuntimeError):
    """The index file cannot be used (not SQLite, corrupt, wrong schema, unreadable)."""


class IndexCorruptError(IndexUnusableError):
    """SQLite reports the index file corrupt or not a database: ``sync`` moves it aside
    (``DB.corrupt-<stamp>``) and rebuilds it from the Markdown."""


class IndexLockedError(RuntimeError):
    """Another process holds the index's writer lock (or an SQLite lock) longer than the
    timeout."""


class _EmbedderSwitched(Exception):
    """The embedder changed identity during a sync (a ``FallbackEmbedder`` switched)."""


@dataclass
class SyncReport:
    """What one ``MemoryIndex.sync`` did."""

    files: int = 0
    files_changed: int = 0
    files_removed: int = 0
    files_failed: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0
    cache_hits: int = 0
    truncated: int = 0
    zero_vectors: int = 0
    full_reindex: bool = False
    reason: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def chunk_id(source: str, path: str, chunk: Chunk, model: str) -> str:
    """sha256 of ``source:path:startLine:endLine:hash:model`` (OpenClaw's chunk id)."""
    key = f"{source}:{path}:{chunk.start_line}:{chunk.end_line}:{chunk.hash}:{model}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def index_identity(
    fts_tokenizer: str, embedder: Embedder | None, *, fts_path_prefix: bool = False
) -> str:
    """The name of one index among a workspace's indexes: what its rows depend on most.

    ``f"{fts_tokenizer}-{provider}-{h}"`` with ``h`` the first 12 hex digits of
    sha256(``provider|model|identity_key|dims|path_prefix``); keyword-only mode is
    provider ``none``. Switching preset (porter vs unicode61) or embedder therefore picks
    another file instead of rebuilding one: e.g. ``porter-hashing-3c1f0a9e2b7d``.
    """
    if embedder is None:
        provider, model, key, dims = "none", FTS_ONLY_MODEL, "", 0
    else:
        provider, model = embedder.provider, embedder.model
        key, dims = embedder.identity_key, getattr(embedder, "dimensions", None) or 0
    h = hashlib.sha256(f"{provider}|{model}|{key}|{dims}|{int(fts_path_prefix)}".encode())
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in provider)
    return f"{fts_tokenizer}-{safe}-{h.hexdigest()[:12]}"


def workspace_cache_key(workspace: Path) -> str:
    """``f"{name}-{sha256(realpath)[:16]}"``: one user-cache folder per workspace folder."""
    real = os.path.realpath(workspace)
    return f"{Path(real).name}-{hashlib.sha256(real.encode()).hexdigest()[:16]}"


def default_db_path(workspace: Path, identity: str = "default") -> Path:
    """``cache_dir("indexes", workspace_cache_key(workspace), identity + ".sqlite")``.

    Never inside the workspace (memlab does not write into a user's folders unasked,
    and a read-only workspace works the same); one file per ``index_identity``, so
    indexes for two tokenizers or embedders live side by side.
    """
    return cache_dir("indexes", workspace_cache_key(workspace), f"{identity}.sqlite")


def describe_fingerprint_change(stored: dict[str, Any] | None, current: dict[str, Any]) -> str:
    """Why a stored index no longer fits, in words: ``"embedder changed from hashing/
    hashing-128 to local/bge-small; FTS tokenizer changed from unicode61 to porter"``.
    ``stored`` None → ``"new index"``; equal fingerprints → ``""``."""
    if stored is None:
        return "new index"
    keys = _diff_keys(stored, current)
    parts: list[str] = []
    emb = ("provider", "model", "provider_key", "dims")
    if any(k in keys for k in emb):
        was = f"{stored.get('provider')}/{stored.get('model')}"
        now = f"{current.get('provider')}/{current.get('model')}"
        if was != now:
            parts.append(f"embedder changed from {was} to {now}")
        elif "dims" in keys:
            parts.append(
                f"embedding dimensions changed from {stored.get('dims')} to {current.get('dims')}"
            )
        else:
            parts.append(f"embedder {now} changed identity (model files or settings)")
    labels = {
        "fts_tokenizer": "FTS tokenizer",
        "chunker": "chunker",
        "sources": "sources",
        "fts_path_prefix": "FTS path prefix",
        "schema": "index schema",
    }
    for k, label in labels.items():
        if k in keys:
            parts.append(f"{label} changed from {stored.get(k)} to {current.get(k)}")
    if "extra_paths" in keys:
        parts.append("extra paths changed")
    parts.extend(k for k in keys if k not in (*emb, *labels, "extra_paths"))
    return "; ".join(parts)


@dataclass
class ChunkTable:
    """The index's chunks as arrays, position-aligned (position = row in these arrays).

    ``vectors`` is float32 [N, d] (or None in keyword-only mode). Texts are not
    kept in memory; fetch them with ``MemoryIndex.texts(positions)``.
    """

    rowids: np.ndarray
    ids: np.ndarray
    paths: np.ndarray
    sources: np.ndarray
    start_lines: np.ndarray
    end_lines: np.ndarray
    mtimes: np.ndarray
    vectors: np.ndarray | None
    # Which source index each chunk comes from when tables of several indexes are
    # concatenated (a lab's groups): int64 [N], or None for one index. Chunks of two
    # segments are never neighbours, even when their paths are equal.
    segments: np.ndarray | None = None
    # Columns derived from the ones above (decay times, neighbour maps, heading flags),
    # computed once per table by the stage that needs them: see ``derived``.
    derived_cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.rowids)

    def derived(self, key: Any, compute: Callable[[ChunkTable], Any]) -> Any:
        """A column derived from this table, computed by ``compute(table)`` on first use
        and kept with the table (keys name the quantity and its parameters, e.g.
        ``("times", "exact")``). A table is immutable once loaded, so the value never
        goes stale; a reloaded index has a new table and a fresh cache."""
        if key not in self.derived_cache:
            self.derived_cache[key] = compute(self)
        return self.derived_cache[key]

    def positions(self, rowids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Positions of the given chunk rowids (rowids are sorted ascending)."""
        return np.searchsorted(self.rowids, np.asarray(rowids, dtype=np.int64))

    def frame(self) -> pd.DataFrame:
        """A DataFrame view: docno (chunk id), path, source, start_line, end_line, mtime."""
        import pandas as pd

        return pd.DataFrame(
            {
                "docno": self.ids,
                "path": self.paths,
                "source": self.sources,
                "start_line": self.start_lines,
                "end_line": self.end_lines,
                "mtime": self.mtimes,
            }
        )


class MemoryIndex:
    """A workspace's memory index (SQLite + an in-memory exact vector index).

    ``embedder``: an ``Embedder``, a provider name for ``resolve_embedder``
    (``"auto"``, ``"local"``, ``"hashing"``, ``"none"``...) or ``None`` for
    keyword-only mode. The database path defaults to ``default_db_path``.
    ``vector_backend`` picks the vector-leg engine (``VECTOR_BACKENDS``; default
    ``"numpy"``, the exact scan at memory speed) and ``vector_params`` its options
    (e.g. ``{"nprobe": 32}`` for ``"ivf"``; see ``memlab.vectors.make_engine``).
    One writer at a time: ``sync`` takes an exclusive lock on ``DB.lock`` and
    waits up to ``lock_timeout`` seconds before raising ``IndexLockedError``.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        db_path: str | os.PathLike[str] | None = None,
        embedder: Embedder | str | None = "auto",
        chunker: ChunkerConfig | None = None,
        extra_paths: Sequence[str] = (),
        sources: Sequence[str] = ("memory",),
        sessions_dir: str | os.PathLike[str] | None = None,
        fts_tokenizer: str = "unicode61",
        fts_path_prefix: bool = False,
        vector_backend: str = "numpy",
        vector_params: dict[str, Any] | None = None,
        cache_enabled: bool = True,
        cache_max_entries: int | None = None,
        lock_timeout: float = 30.0,
        progress: bool | None = None,
    ) -> None:
        self.workspace = resolve_workspace(workspace)
        if fts_tokenizer not in FTS_TOKENIZE:
            raise ValueError(
                f"fts_tokenizer must be one of {', '.join(FTS_TOKENIZE)}; got {fts_tokenizer!r}"
            )
        if vector_backend not in VECTOR_BACKENDS:
            raise ValueError(
                f"vector_backend must be one of {', '.join(VECTOR_BACKENDS)}; got {vector_backend!r}"
            )
        for s in sources:
            if s not in ("memory", "sessions"):
                raise ValueError(f"sources must be 'memory' and/or 'sessions'; got {s!r}")
        if isinstance(embedder, str):
            from memlab.embed import resolve_embedder

            embedder = resolve_embedder(embedder)
        self.embedder: Embedder | None = embedder
        self.chunker = chunker or ChunkerConfig()
        self.extra_paths = tuple(dict.fromkeys(str(p) for p in extra_paths))
        self.sources = tuple(sources)
        self.sessions_dir = (
            Path(sessions_dir).expanduser() if sessions_dir else self.workspace / "sessions"
        )
        self.fts_tokenizer = fts_tokenizer
        self.fts_path_prefix = fts_path_prefix
        self.vector_backend = vector_backend
        self.vector_params = dict(vector_params or {})
        self.cache_enabled = cache_enabled
        self.cache_max_entries = cache_max_entries
        self.lock_timeout = lock_timeout
        self.progress = progress
        self.db_path = (
            Path(db_path).expanduser()
            if db_path
            else default_db_path(self.workspace, self.identity)
        )
        self._conn: sqlite3.Connection | None = None
        self._conn_ident: tuple[int, int] | None = None
        self._table: ChunkTable | None = None
        self._table_version: int | None = None
        self._ann: Any = None

    # ------------------------------------------------------------------ setup
    @classmethod
    def from_config(
        cls,
        workspace: str | os.PathLike[str],
        config: MemorySearchConfig,
        **overrides: Any,
    ) -> MemoryIndex:
        """An index configured from OpenClaw settings (provider, chunking, store, sources)."""
        from memlab.embed import resolve_embedder

        remote = None
        if config.remote_base_url:
            remote = {
                "base_url": config.remote_base_url,
                "api_key": config.remote_api_key,
                "headers": config.remote_headers,
            }
        kwargs: dict[str, Any] = {
            "db_path": config.store_path,
            "chunker": ChunkerConfig("openclaw", config.chunk_tokens, config.chunk_overlap),
            "extra_paths": config.extra_paths,
            "sources": config.sources,
            "fts_tokenizer": config.fts_tokenizer,
            "cache_enabled": config.cache_enabled,
            "cache_max_entries": config.cache_max_entries,
        }
        if "embedder" not in overrides:
            kwargs["embedder"] = resolve_embedder(
                config.provider,
                model=config.model,
                remote=remote,
                fallback=None if config.fallback == "none" else config.fallback,
            )
        kwargs.update(overrides)
        return cls(workspace, **kwargs)

    def __repr__(self) -> str:
        return (
            f"MemoryIndex(workspace={str(self.workspace)!r}, model={self.model!r}, "
            f"chunker={self.chunker.fingerprint()!r}, db={str(self.db_path)!r})"
        )

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def model(self) -> str:
        """The embedding model's name, or ``fts-only`` in keyword-only mode."""
        return self.embedder.model if self.embedder is not None else FTS_ONLY_MODEL

    @property
    def has_vectors(self) -> bool:
        return self.embedder is not None

    @property
    def identity(self) -> str:
        """``index_identity`` of this index's tokenizer and embedder (its default file name)."""
        return index_identity(
            self.fts_tokenizer, self.embedder, fts_path_prefix=self.fts_path_prefix
        )

    def rebuild_reason(self) -> str:
        """Why the next sync would rebuild this index (``describe_fingerprint_change``), or
        ``""`` when the stored fingerprint matches; ``"new index"`` when there is no file."""
        if not self.db_path.exists():
            return "new index"
        try:
            stored = self.stored_fingerprint()
        except IndexCorruptError as exc:
            return f"rebuilt from the Markdown: {exc}"
        return (
            describe_fingerprint_change(stored, self.fingerprint())
            if stored != self.fingerprint()
            else ""
        )

    def fingerprint(self) -> dict[str, Any]:
        """Everything whose change makes the stored chunks or vectors invalid."""
        e = self.embedder
        extra_hash = hashlib.sha256(json.dumps(list(self.extra_paths)).encode()).hexdigest()
        return {
            "schema": SCHEMA_VERSION,
            "provider": e.provider if e else "none",
            "model": self.model,
            "provider_key": e.identity_key if e else "",
            "dims": (getattr(e, "dimensions", None) or 0) if e else 0,
            "sources": list(self.sources),
            "extra_paths": extra_hash,
            "chunker": self.chunker.fingerprint(),
            "fts_tokenizer": self.fts_tokenizer,
            "fts_path_prefix": self.fts_path_prefix,
        }

    def connect(self) -> sqlite3.Connection:
        """The (lazily opened) connection; creates the schema on a new file.

        A file that is not a usable memlab index raises ``IndexUnusableError`` naming it.
        """
        if self._conn is None:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = _open_db(self.db_path, self.fts_tokenizer)
            self._conn_ident = _file_ident(self.db_path)
        return self._conn

    def close(self) -> None:
        """Close the connection and drop the cached table (reopened on next use)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._conn_ident = None
        self._table = None
        self._table_version = None
        self._ann = None

    def stored_fingerprint(self) -> dict[str, Any] | None:
        """The fingerprint saved by the last sync (None for a new, empty index)."""
        try:
            row = (
                self.connect().execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
            )
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.db_path, exc) from exc
        return json.loads(row[0]) if row else None

    def refresh(self) -> bool:
        """Drop the cached table when another connection changed the index since it was loaded.

        Changed means: the file at ``db_path`` is another file than the one this object has
        open (a full reindex swapped it in; the connection is reopened), or ``PRAGMA
        data_version`` moved (another connection committed). Returns True when something was
        dropped. Called at the start of every search (``ensure_synced``), never in the
        middle of one, so one search works on one table.
        """
        if self._conn is None:
            return False
        if _file_ident(self.db_path) != self._conn_ident:
            self.close()
            return True
        if self._table is None:
            return False
        try:
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.db_path, exc) from exc
        if version != self._table_version:
            self._table = None
            self._table_version = None
            self._ann = None
            return True
        return False

    # ------------------------------------------------------------------ discovery
    def discover(self) -> list[MemoryFile]:
        """The memory files (and session transcripts when enabled) this index covers."""
        files: list[MemoryFile] = []
        if "memory" in self.sources:
            files.extend(discover_memory_files(self.workspace, self.extra_paths))
        if "sessions" in self.sources and self.sessions_dir.is_dir():
            for p in sorted(self.sessions_dir.glob("*.jsonl")):
                if p.is_file() and not p.is_symlink():
                    files.append(MemoryFile(f"sessions/{p.name}", p.absolute(), "sessions"))
        return files

    def _read(self, f: MemoryFile) -> tuple[str, str, float, int]:
        if f.source == "sessions":
            from memlab.sessions import read_session_text

            text, mtime, size = read_session_text(f.abspath)
            return text, sha256_text(text), mtime, size
        # Files inside the workspace are opened folder by folder without following a
        # symlink (one swapped in after discovery included); extra files outside it have
        # only their last component protected.
        inside = not f.path.startswith("../")
        ft = read_memory_file(f.abspath, f.path, root=self.workspace if inside else None)
        return ft.text, ft.hash, ft.mtime, ft.size

    # ------------------------------------------------------------------ sync
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
        with self._writer_lock():
            self._remove_stale_builds()
            reason = "forced" if force else ""
            for _attempt in range(3):
                try:
                    report = self._sync_locked(reason, show)
                    break
                except _EmbedderSwitched as exc:
                    reason = f"embedding provider switched: {exc}"
            else:  # pragma: no cover - a FallbackEmbedder switches once
                raise RuntimeError("embedding provider kept switching during sync")
        self._table = None
        self._table_version = None
        self._ann = None
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
        if not reason and stored != fp:
            if stored is None:
                reason = "new index"
            else:
                reason = "fingerprint changed: " + describe_fingerprint_change(stored, fp)
        if not reason:
            conn = self.connect()
            try:
                return self._sync_into(conn, show)
            except sqlite3.DatabaseError as exc:
                err = _db_error(self.db_path, exc)
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
        """Move a corrupt index file aside (kept for inspection) so a rebuild can start."""
        self.close()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = f"{self.db_path}.corrupt-{stamp}"
        n = 1
        while Path(base).exists():  # two rebuilds in one second keep both copies
            n += 1
            base = f"{self.db_path}.corrupt-{stamp}-{n}"
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.db_path) + suffix)
            if src.exists():
                os.replace(src, Path(base + suffix))

    @contextlib.contextmanager
    def _writer_lock(self) -> Iterator[None]:
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.db_path.with_name(self.db_path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + self.lock_timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise IndexLockedError(
                            f"another process is writing {self.db_path} "
                            f"(waited {self.lock_timeout:g} s for {lock_path})"
                        ) from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)

    def _remove_stale_builds(self) -> None:
        # Full reindexes killed before their swap leave DB.tmp-* files behind (as big as
        # the index); we hold the writer lock, so none of them is in use.
        for stale in self.db_path.parent.glob(glob.escape(self.db_path.name) + ".tmp-*"):
            with contextlib.suppress(OSError):
                stale.unlink()

    def _full_reindex(self, show: bool | None) -> SyncReport:
        old_conn = self._conn
        fd, tmp_name = tempfile.mkstemp(prefix=self.db_path.name + ".tmp-", dir=self.db_path.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        tmp.unlink()
        try:
            new = _open_db(tmp, self.fts_tokenizer)
            if old_conn is None and self.db_path.exists():
                with contextlib.suppress(IndexUnusableError):
                    old_conn = _open_db(self.db_path, None)
            if old_conn is not None:
                _copy_cache(old_conn, new)
            report = self._sync_into(new, show)
            if self.cache_max_entries:
                _prune_cache(new, self.cache_max_entries)
            # Stay in WAL mode: a file swapped in as DELETE would make its first opener
            # switch it back, which needs an exclusive lock that readers can be refused.
            # Closing the only connection checkpoints and deletes the temp file's WAL.
            new.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            new.close()
            if old_conn is not None:
                old_conn.close()
            self._conn = None
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(str(self.db_path) + suffix)
            os.replace(tmp, self.db_path)
            _fsync_dir(self.db_path.parent)
        finally:
            for p in (
                tmp,
                Path(str(tmp) + "-wal"),
                Path(str(tmp) + "-shm"),
                Path(str(tmp) + "-journal"),
            ):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        return report

    def _sync_into(self, conn: sqlite3.Connection, show: bool | None) -> SyncReport:
        report = SyncReport()
        files = self.discover()
        report.files = len(files)
        stored = {
            row[0]: (row[1], row[2], row[3])
            for row in conn.execute("SELECT path, hash, mtime, size FROM files")
        }
        model = self.model
        changed: list[tuple[MemoryFile, str, float, int, list[Chunk]]] = []
        # Files whose text is unchanged but whose mtime/size moved (touched, rewritten with
        # the same text): their row is refreshed so `stale_files` stops reporting them.
        touched: list[tuple[float, int, str]] = []
        seen: set[str] = set()
        for f in _progress(files, show, "files", unit="file"):
            seen.add(f.path)
            try:
                text, file_hash, mtime, size = self._read(f)
            except (MemoryFileError, OSError) as exc:
                reason = exc.reason if isinstance(exc, MemoryFileError) else str(exc)
                report.files_failed.append((f.path, reason))
                # Keep the last good rows of a file that is briefly unreadable.
                continue
            if f.path in stored and stored[f.path][0] == file_hash:
                if stored[f.path][1:] != (mtime, size):
                    touched.append((mtime, size, f.path))  # same text: only the stat moved
                continue
            changed.append((f, file_hash, mtime, size, self.chunker.chunk(text)))
        failed = {path for path, _ in report.files_failed}
        removed = [p for p in stored if p not in seen and p not in failed]

        # Embed everything missing from the cache first, committing the cache
        # batch by batch: a crash or a provider failure loses no finished work
        # and leaves the chunk tables untouched.
        vectors: dict[str, tuple[bytes, int]] = {}
        if self.embedder is not None:
            identity = _identity(self.embedder)
            wanted = {c.hash: c.text for _, _, _, _, chunks in changed for c in chunks}
            vectors, hits, embedded, truncated = self._embed_with_cache(conn, wanted, show)
            report.cache_hits, report.embedded, report.truncated = hits, embedded, truncated
            if _identity(self.embedder) != identity:
                raise _EmbedderSwitched(
                    f"{identity[0]}/{identity[1]} failed, now {self.embedder.provider}/"
                    f"{self.embedder.model}: {getattr(self.embedder, 'fallback_reason', '')}"
                )

        now = time.time()
        with conn:
            # Rowids only grow (high-water mark kept in meta): a reader holding a table
            # loaded before this sync never sees a rowid it knows reused for another chunk.
            next_rowid = max(
                int(_get_meta(conn, "next_rowid") or 0),
                (conn.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0) + 1,
            )
            for path in removed:
                report.chunks_removed += _delete_file(conn, path)
            for f, file_hash, mtime, size, chunks in changed:
                # Keep the rows of chunks whose id (path, lines, text, model) is unchanged:
                # appending to a long daily log rewrites its last chunks, not all of them.
                old = dict(conn.execute("SELECT id, rowid FROM chunks WHERE path = ?", (f.path,)))
                new_rows: dict[str, Chunk] = {}
                for c in chunks:
                    new_rows.setdefault(chunk_id(f.source, f.path, c, model), c)
                gone = [(rowid,) for cid, rowid in old.items() if cid not in new_rows]
                if gone:
                    conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", gone)
                    conn.executemany("DELETE FROM chunks WHERE rowid = ?", gone)
                    report.chunks_removed += len(gone)
                rows = []
                fts_rows = []
                for cid, c in new_rows.items():
                    if cid in old:
                        continue
                    blob, trunc = vectors.get(c.hash, (None, 0))
                    if blob is not None and not any(blob) and c.text.strip():
                        report.zero_vectors += 1
                    rows.append(
                        (
                            next_rowid,
                            cid,
                            f.path,
                            f.source,
                            c.start_line,
                            c.end_line,
                            c.hash,
                            model,
                            c.text,
                            blob,
                            now,
                            c.heading,
                            trunc,
                        )
                    )
                    fts_text = f"{f.path}\n{c.text}" if self.fts_path_prefix else c.text
                    fts_rows.append((next_rowid, fts_text))
                    next_rowid += 1
                conn.executemany(
                    "INSERT INTO chunks(rowid, id, path, source, start_line, end_line, hash,"
                    " model, text, embedding, updated_at, heading, truncated)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
                conn.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", fts_rows)
                report.chunks_added += len(rows)
                conn.execute(
                    "INSERT OR REPLACE INTO files(path, source, hash, mtime, size) VALUES (?,?,?,?,?)",
                    (f.path, f.source, file_hash, mtime, size),
                )
            conn.executemany("UPDATE files SET mtime = ?, size = ? WHERE path = ?", touched)
            _set_meta(conn, "next_rowid", str(next_rowid))
            _set_meta(conn, "fingerprint", json.dumps(self.fingerprint(), sort_keys=True))
            _set_meta(conn, "memlab_version", __version__)
            _set_meta(conn, "last_sync", str(now))
        report.files_changed = len(changed)
        report.files_removed = len(removed)
        report.chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return report

    def _embed_with_cache(
        self, conn: sqlite3.Connection, wanted: dict[str, str], show: bool | None
    ) -> tuple[dict[str, tuple[bytes, int]], int, int, int]:
        assert self.embedder is not None
        e = self.embedder
        out: dict[str, tuple[bytes, int]] = {}
        hits = 0
        if self.cache_enabled and wanted:
            key = (e.provider, e.model, e.identity_key)
            hashes = list(wanted)
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                q = ",".join("?" * len(part))
                for h, blob, trunc in conn.execute(
                    "SELECT hash, embedding, truncated FROM embedding_cache WHERE provider=? AND"
                    f" model=? AND provider_key=? AND hash IN ({q})",
                    (*key, *part),
                ):
                    out[h] = (blob, trunc)
            hits = len(out)
        truncated = sum(t for _, t in out.values())
        todo = [(h, t) for h, t in wanted.items() if h not in out]
        todo.sort(key=lambda ht: len(ht[1]))
        bar = _bar(len(todo), show, "embedding", "chunk")
        try:
            for i in range(0, len(todo), EMBED_BATCH):
                batch = todo[i : i + EMBED_BATCH]
                texts = [t for _, t in batch]
                vecs = np.ascontiguousarray(e.embed_documents(texts), dtype=np.float32)
                flags = _truncation_flags(e, texts)
                truncated += int(sum(flags))
                now = time.time()
                rows = []
                for (h, _), v, fl in zip(batch, vecs, flags, strict=True):
                    blob = v.tobytes()
                    out[h] = (blob, int(fl))
                    rows.append(
                        (e.provider, e.model, e.identity_key, h, blob, len(v), int(fl), now)
                    )
                if self.cache_enabled:
                    with conn:
                        conn.executemany(
                            "INSERT OR REPLACE INTO embedding_cache(provider, model, provider_key,"
                            " hash, embedding, dims, truncated, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                            rows,
                        )
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        return out, hits, len(todo), truncated

    # ------------------------------------------------------------------ reading
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
            stale = not self.db_path.exists() or self.stored_fingerprint() != self.fingerprint()
        except IndexCorruptError:
            stale = True
        if stale or (files and self.stale_files()):
            return self.sync()
        return None

    def stale_files(self) -> list[str]:
        """Memory files whose (mtime, size) differ from the last sync, new files, and
        indexed files that are gone: sorted display paths (``[]`` = in step).

        Costs one ``lstat`` per discovered file and one read of the ``files`` table; no
        file is opened. A file rewritten with the same size within the same mtime tick is
        not seen (as with any mtime check); ``memlab index`` hashes every file.
        """
        try:
            rows = self.connect().execute("SELECT path, mtime, size FROM files").fetchall()
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.db_path, exc) from exc
        indexed = {r[0]: (r[1], r[2]) for r in rows}
        dirty: list[str] = []
        current = self.discover()
        for f in current:
            try:
                st = f.abspath.lstat()
            except OSError:
                continue
            if indexed.get(f.path) != (st.st_mtime, st.st_size):
                dirty.append(f.path)
        seen = {f.path for f in current}
        dirty.extend(p for p in indexed if p not in seen)
        return sorted(dirty)

    def status(self) -> dict[str, Any]:
        """Index path and identity, fingerprint, counts, truncated chunks and whether files
        changed since the last sync (``stale_files``)."""
        conn = self.connect()
        stored = self.stored_fingerprint()
        dirty_files = self.stale_files()
        n_files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        n_chunks, n_trunc = conn.execute(
            "SELECT count(*), coalesce(sum(truncated), 0) FROM chunks"
        ).fetchone()
        last = conn.execute("SELECT value FROM meta WHERE key='last_sync'").fetchone()
        return {
            "workspace": str(self.workspace),
            "index_path": str(self.db_path),
            "identity": self.identity,
            "fingerprint": stored,
            "fingerprint_current": stored == self.fingerprint(),
            "files": n_files,
            "chunks": n_chunks,
            "truncated_chunks": int(n_trunc),
            "cache_entries": conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0],
            "last_sync": float(last[0]) if last else None,
            "dirty": bool(dirty_files) or stored != self.fingerprint(),
            "dirty_files": dirty_files,
        }

    @property
    def table(self) -> ChunkTable:
        """The chunks as position-aligned arrays (loaded once, refreshed after ``sync``)."""
        if self._table is None:
            self._table = self._load_table()
        return self._table

    def _load_table(self) -> ChunkTable:
        # Rows are read in batches straight into preallocated arrays: holding every row
        # as Python tuples first would cost ~2× the vector bytes at peak (1M chunks: 3.6
        # GB instead of ~1.7 GB). Paths and sources repeat: one str object per value.
        conn = self.connect()
        # One read transaction: the version, the row count and the scan see one snapshot.
        own = not conn.in_transaction
        cur: sqlite3.Cursor | None = None
        try:
            if own:
                conn.execute("BEGIN")
            self._table_version = conn.execute("PRAGMA data_version").fetchone()[0]
            n = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            dims = 0
            if self.embedder is not None:
                row = conn.execute(
                    "SELECT length(embedding) FROM chunks WHERE embedding IS NOT NULL LIMIT 1"
                ).fetchone()
                dims = (row[0] or 0) // 4 if row else 0
            blob = "c.embedding" if dims else "NULL"  # no vectors: do not read the blobs
            cur = conn.execute(
                "SELECT c.rowid, c.id, c.path, c.source, c.start_line, c.end_line,"
                f" coalesce(f.mtime, 0), {blob} FROM chunks c"
                " LEFT JOIN files f ON f.path = c.path ORDER BY c.rowid"
            )
            rowids = np.empty(n, dtype=np.int64)
            ids = np.empty(n, dtype=object)
            paths = np.empty(n, dtype=object)
            sources = np.empty(n, dtype=object)
            starts = np.empty(n, dtype=np.int64)
            ends = np.empty(n, dtype=np.int64)
            mtimes = np.empty(n, dtype=np.float64)
            vectors = np.zeros((n, dims), dtype=np.float32) if self.embedder is not None else None
            shared: dict[str, str] = {}
            i = 0
            while i < n and (rows := cur.fetchmany(LOAD_BATCH)):
                m = len(rows)
                cols = list(zip(*rows, strict=True))
                rowids[i : i + m] = cols[0]
                ids[i : i + m] = cols[1]
                paths[i : i + m] = [shared.setdefault(x, x) for x in cols[2]]
                sources[i : i + m] = [shared.setdefault(x, x) for x in cols[3]]
                starts[i : i + m] = cols[4]
                ends[i : i + m] = cols[5]
                mtimes[i : i + m] = cols[6]
                if vectors is not None and dims:
                    for j, b in enumerate(cols[7]):
                        if b is not None and len(b) == dims * 4:
                            vectors[i + j] = np.frombuffer(b, dtype=np.float32)
                i += m
            if i != n:  # impossible within one snapshot; never hand out a partial table
                raise IndexCorruptError(f"{self.db_path}: counted {n} chunks but read {i}")
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.db_path, exc) from exc
        finally:
            # Close the cursor first: a rollback under an open cursor leaves the
            # connection pinned to the old snapshot (it would never see later commits).
            with contextlib.suppress(sqlite3.Error):
                if cur is not None:
                    cur.close()
                if own and conn.in_transaction:
                    conn.rollback()  # read-only: ends the snapshot
        if vectors is not None and n == 0:
            vectors = None
        return ChunkTable(
            rowids=rowids,
            ids=ids,
            paths=paths,
            sources=sources,
            start_lines=starts,
            end_lines=ends,
            mtimes=mtimes,
            vectors=vectors,
        )

    def texts(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        """Chunk texts for table positions (fetched from SQLite; order kept).

        A chunk deleted by another connection's sync after this table was loaded (its
        file changed during the search) comes back as ``""``; rowids are never reused,
        so a position never yields another chunk's text.
        """
        pos = np.asarray(positions, dtype=np.int64)
        if pos.size == 0:
            return []
        rowids = self.table.rowids[pos]
        conn = self.connect()
        found: dict[int, str] = {}
        uniq = list(dict.fromkeys(int(r) for r in rowids))
        try:
            for i in range(0, len(uniq), 500):
                part = uniq[i : i + 500]
                q = ",".join("?" * len(part))
                found.update(
                    conn.execute(f"SELECT rowid, text FROM chunks WHERE rowid IN ({q})", part)
                )
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.db_path, exc) from exc
        return [found.get(int(r), "") for r in rowids]

    # ------------------------------------------------------------------ search legs
    def keyword_search(self, fts_query: str | None, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """Run an FTS5 MATCH query: (table positions, bm25 ranks), best (most negative) first.

        ``fts_query`` is an FTS5 expression (see ``memlab.textquery``); ``None``
        or a query SQLite rejects yields no hits, as OpenClaw does.
        """
        empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
        if not fts_query or limit <= 0:
            return empty
        try:
            rows = (
                self.connect()
                .execute(
                    "SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ?"
                    " ORDER BY r ASC LIMIT ?",
                    (fts_query, int(limit)),
                )
                .fetchall()
            )
        except sqlite3.OperationalError as exc:
            if (getattr(exc, "sqlite_errorname", "") or "").startswith(
                ("SQLITE_BUSY", "SQLITE_LOCKED")
            ):
                raise _db_error(self.db_path, exc) from exc
            return empty  # a query FTS5 rejects
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.db_path, exc) from exc
        if not rows:
            return empty
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        ranks = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        t = self.table
        if len(t) == 0:
            return empty
        # Rows committed by another connection after this table was loaded are not in
        # it: they are left out (the next search reloads the table and finds them).
        pos = t.positions(rowids)
        known = (pos < len(t)) & (t.rowids[np.minimum(pos, len(t) - 1)] == rowids)
        return pos[known], ranks[known]

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Query vectors [Q, d] (each query trimmed, as OpenClaw embeds it)."""
        if self.embedder is None:
            raise RuntimeError("keyword-only index: no embedder")
        if not queries:
            return np.zeros((0, self.embedder.dimensions or 0), dtype=np.float32)
        before = _identity(self.embedder)
        vecs = np.vstack([self.embedder.embed_query(q.strip()) for q in queries]).astype(np.float32)
        if _identity(self.embedder) != before:
            from memlab.embed import EmbeddingError

            # A FallbackEmbedder switched while embedding the query: its vectors are not
            # comparable with the stored ones. The next sync rebuilds with the fallback.
            raise EmbeddingError(
                f"embedding provider {before[0]}/{before[1]} failed during the search and was"
                f" replaced by {self.embedder.provider}/{self.embedder.model}; the index holds"
                f" {before[1]} vectors until the next sync rebuilds it"
                f" ({getattr(self.embedder, 'fallback_reason', '')})"
            )
        return vecs

    def vector_search(self, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by cosine (inner product of unit vectors) for a batch of query vectors.

        Served by the ``vector_backend`` engine (``memlab.vectors``), built lazily from
        the chunk table and rebuilt when the table reloads. Exact engines break score
        ties by the lower position. Returns (positions [Q, k'], scores [Q, k']) with
        k' = min(k, N); rows of an all-zero or non-finite query vector (not scanned), and
        slots an approximate engine could not fill, hold position −1 and score NaN
        (OpenClaw skips the vector side for a zero query).
        """
        qv = np.atleast_2d(np.asarray(query_vectors, dtype=np.float32))
        t = self.table
        kk = min(int(k), len(t))
        nq = qv.shape[0]
        if t.vectors is None or t.vectors.shape[1] == 0 or kk <= 0:
            return np.full((nq, 0), -1, dtype=np.int64), np.full((nq, 0), np.nan)
        pos = np.full((nq, kk), -1, dtype=np.int64)
        scores = np.full((nq, kk), np.nan)
        # An all-zero (or non-finite) query has no direction: nothing to scan for.
        ok = np.flatnonzero(np.isfinite(qv).all(axis=1) & qv.any(axis=1))
        if ok.size:
            p, sc = self.vector_engine().search(qv[ok], kk)
            p = np.asarray(p, dtype=np.int64)
            pos[ok, : p.shape[1]] = p
            scores[ok, : p.shape[1]] = np.asarray(sc, dtype=np.float64)
        scores[pos < 0] = np.nan
        return pos, scores

    def set_vector_engine(self, engine: Any) -> None:
        """Serve the vector leg from a prebuilt ``memlab.vectors`` engine over ``table.vectors``
        (e.g. an IVF index tuned elsewhere) until the table next reloads after a sync."""
        vecs = self.table.vectors
        held = getattr(engine, "vectors", None)
        shape = (
            held.shape if held is not None else (getattr(engine, "n", -1), getattr(engine, "d", -1))
        )
        if vecs is None or tuple(shape) != vecs.shape:
            raise ValueError(
                f"the engine holds {tuple(shape)} vectors, this index's table"
                f" {None if vecs is None else vecs.shape}: build it over index.table.vectors"
            )
        self._ann = engine

    def vector_engine(self) -> Any:
        """The vector-leg engine over the current table (built on first use)."""
        if self._ann is None:
            from memlab.vectors import make_engine

            vecs = self.table.vectors
            if vecs is None:
                raise ValueError("keyword-only index: no vectors to search")
            self._ann = make_engine(self.vector_backend, vecs, **self.vector_params)
        return self._ann


# ---------------------------------------------------------------------- helpers
def _open_db(path: Path, fts_tokenizer: str | None) -> sqlite3.Connection:
    """Open (and, given a tokenizer, create) an index file.

    Opening an existing index writes nothing: readers must never queue behind a long
    sync for a write lock, and must not leave WAL frames beside a file that a full
    reindex is about to replace. Raises ``IndexCorruptError``, ``IndexLockedError`` or
    ``IndexUnusableError`` (see ``_db_error``).
    """
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, check_same_thread=False)
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=OFF")
        have = {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE name IN"
                " ('meta', 'files', 'chunks', 'embedding_cache', 'chunks_fts')"
            )
        }
        if len(have) < 5:
            if fts_tokenizer is None:
                raise IndexUnusableError(f"{path} is not a memlab index (tables missing)")
            _create_schema(conn, fts_tokenizer)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise _db_error(path, exc) from exc
    except IndexUnusableError:
        if conn is not None:
            conn.close()
        raise
    return conn


def _create_schema(conn: sqlite3.Connection, fts_tokenizer: str) -> None:
    tokenize = FTS_TOKENIZE[fts_tokenizer]
    with conn:
        conn.executescript(
            f"""
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS files(
                path TEXT PRIMARY KEY, source TEXT NOT NULL, hash TEXT NOT NULL,
                mtime REAL NOT NULL, size INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS chunks(
                id TEXT UNIQUE NOT NULL, path TEXT NOT NULL, source TEXT NOT NULL,
                start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL,
                model TEXT NOT NULL, text TEXT NOT NULL, embedding BLOB,
                updated_at REAL NOT NULL, heading TEXT NOT NULL DEFAULT '',
                truncated INTEGER NOT NULL DEFAULT 0);
            CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
            CREATE TABLE IF NOT EXISTS embedding_cache(
                provider TEXT NOT NULL, model TEXT NOT NULL, provider_key TEXT NOT NULL,
                hash TEXT NOT NULL, embedding BLOB NOT NULL, dims INTEGER NOT NULL,
                truncated INTEGER NOT NULL DEFAULT 0, updated_at REAL NOT NULL,
                PRIMARY KEY(provider, model, provider_key, hash));
            CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, tokenize='{tokenize}');
            """
        )
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )


def _delete_file(conn: sqlite3.Connection, path: str) -> int:
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE path = ?", (path,))]
    if rowids:
        conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r,) for r in rowids])
        conn.execute("DELETE FROM chunks WHERE path = ?", (path,))
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    return len(rowids)


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def _get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _identity(e: Embedder) -> tuple[str, str, str]:
    return (e.provider, e.model, e.identity_key)


def _file_ident(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _db_error(path: Path, exc: sqlite3.Error) -> Exception:
    """Classify an SQLite error: corruption, a lock held too long, or anything else.

    Only ``SQLITE_CORRUPT*`` and ``SQLITE_NOTADB`` mean the file itself is bad (and may
    be rebuilt); busy/locked means another connection held a lock past the busy timeout;
    other errors (I/O, permissions, disk full) leave the file alone.
    """
    name = getattr(exc, "sqlite_errorname", "") or ""
    msg = str(exc)
    # A text value that is not UTF-8 can only come from damaged pages (memlab stores
    # str); Python's sqlite3 reports it without an SQLite error code.
    if (
        name.startswith("SQLITE_CORRUPT")
        or name == "SQLITE_NOTADB"
        or msg.startswith("Could not decode to UTF-8")
    ):
        return IndexCorruptError(f"{path} is corrupt or not a memlab index ({msg})")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return IndexLockedError(
            f"{path} is busy: another connection held an SQLite lock for more than"
            f" {BUSY_TIMEOUT:g} s ({msg})"
        )
    return IndexUnusableError(f"{path} is not a usable memlab index ({msg})")


def _copy_cache(old: sqlite3.Connection, new: sqlite3.Connection) -> None:
    try:
        rows = old.execute(
            "SELECT provider, model, provider_key, hash, embedding, dims, truncated, updated_at"
            " FROM embedding_cache"
        ).fetchall()
    except sqlite3.DatabaseError:
        return
    with new:
        new.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?,?,?,?,?)", rows)


def _prune_cache(conn: sqlite3.Connection, max_entries: int) -> None:
    with conn:
        conn.execute(
            "DELETE FROM embedding_cache WHERE rowid NOT IN ("
            " SELECT rowid FROM embedding_cache ORDER BY updated_at DESC LIMIT ?)",
            (max_entries,),
        )


def _diff_keys(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _truncation_flags(embedder: Embedder, texts: list[str]) -> list[int]:
    per_text = getattr(embedder, "truncation_flags", None)
    if per_text is not None:
        return [int(x) for x in per_text(texts)]
    counter = getattr(embedder, "count_truncated", None)
    if counter is None:
        return [0] * len(texts)
    return [int(counter([t]) > 0) for t in texts]


def _show(show: bool | None) -> bool:
    return sys.stderr.isatty() if show is None else show


def _progress(items: list[Any], show: bool | None, desc: str, unit: str) -> Any:
    if not _show(show) or len(items) < 50:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit=unit, leave=False, disable=None)  # terminal only


def _bar(total: int, show: bool | None, desc: str, unit: str) -> Any:
    if not _show(show) or total < 64:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=None)  # terminal only
