"""Writing an index: the writer lock, incremental sync and the crash-safe full reindex.

Sync is incremental by content hash; a change of fingerprint (provider, model,
provider key, sources, extra paths, chunker, FTS tokenizer, dimensions) builds
a new database beside the old one (``DB.tmp-*``), copies the embedding cache and
swaps it in with ``os.replace``: a crash at any point leaves the old index usable.
One writer at a time (``writer_lock`` on ``DB.lock``); chunk rowids only grow
(high-water mark ``meta.next_rowid``), so a reader's older table never mislabels a
row. The invariants are listed, with their tests, in docs/reliability.md.

Size: one module because it is what ``memlab.store.writer`` runs while holding
``writer_lock``: ``sync_into`` (one transaction, ~160 lines), ``full_reindex`` and its
swap, the clean-up of failed builds (``remove_stale_builds``, ``set_aside_unusable``);
``skipped_files`` / ``stale_files`` read the stamps (``skip_stamp``) it writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab import __version__
from memlab.files.workspace import MemoryFile, MemoryFileError, read_memory_file, sha256_text
from memlab.store.embedcache import copy_cache, embed_with_cache, progress_items, prune_cache
from memlab.store.filerules import chunk_annotations, row_id_suffix
from memlab.store.identity import chunk_id, embedder_identity
from memlab.store.schema import (
    FTS_ONLY_MODEL,
    IndexLockedError,
    IndexUnusableError,
    db_error,
    delete_file,
    get_meta,
    open_db,
    set_meta,
)

if TYPE_CHECKING:
    from memlab.chunking import Chunk, ChunkerConfig
    from memlab.embed import Embedder

__all__ = [
    "SKIPPED_META",
    "EmbedderSwitched",
    "SyncReport",
    "full_reindex",
    "read_source",
    "remove_stale_builds",
    "set_aside_unusable",
    "skip_stamp",
    "skipped_files",
    "stale_files",
    "sync_into",
    "writer_lock",
]


# meta key of the files the last sync skipped: JSON {path: {reason, mtime, size, ctime}},
# the stat seen when each was skipped (``skipped_files``).
SKIPPED_META = "skipped_files"


class EmbedderSwitched(Exception):
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
        """Every field by name (a copy; ``files_failed`` is the same list object)."""
        return dict(self.__dict__)


@contextlib.contextmanager
def writer_lock(db_path: Path, timeout: float) -> Iterator[None]:
    """Hold the exclusive ``flock`` on ``DB.lock`` (created if missing) for the block,
    polling every 50 ms; raises ``IndexLockedError`` after ``timeout`` seconds."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = db_path.with_name(db_path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexLockedError(
                        f"another process is writing {db_path} "
                        f"(waited {timeout:g} s for {lock_path})"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def remove_stale_builds(db_path: Path) -> None:
    """Delete ``DB.tmp-*`` files left by full reindexes killed before their swap (as big
    as the index). Call under the writer lock: then none of them is in use."""
    for stale in db_path.parent.glob(glob.escape(db_path.name) + ".tmp-*"):
        with contextlib.suppress(OSError):
            stale.unlink()


def set_aside_unusable(db_path: Path) -> None:
    """Move a corrupt index file (and its ``-wal``/``-shm``) to ``DB.corrupt-<stamp>``
    (``-2``, ``-3``… within one second), kept for inspection, so a rebuild can start.
    Close every connection to it first."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{db_path}.corrupt-{stamp}"
    n = 1
    while Path(base).exists():  # two rebuilds in one second keep both copies
        n += 1
        base = f"{db_path}.corrupt-{stamp}-{n}"
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(db_path) + suffix)
        if src.exists():
            os.replace(src, Path(base + suffix))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def full_reindex(
    db_path: Path,
    fts_tokenizer: str,
    old_conn: sqlite3.Connection | None,
    build: Callable[[sqlite3.Connection], SyncReport],
    *,
    cache_max_entries: int | None,
    detached: Callable[[], None],
) -> SyncReport:
    """Build a new index in ``DB.tmp-*`` and swap it in with ``os.replace``.

    The embedding cache of ``old_conn`` (or of the file at ``db_path``, opened when
    ``old_conn`` is None) is copied in, ``build(new_conn)`` fills it, the cache is pruned
    to ``cache_max_entries`` (None/0 = unbounded), then both connections are closed,
    ``detached()`` is called (the caller forgets its connection), the old ``-wal``/
    ``-shm`` are removed, the file is swapped and its folder fsync'ed. A failure or a
    kill at any point leaves the old index; the temp files are always removed.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=db_path.name + ".tmp-", dir=db_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()
    try:
        new = open_db(tmp, fts_tokenizer)
        if old_conn is None and db_path.exists():
            with contextlib.suppress(IndexUnusableError):
                old_conn = open_db(db_path, None)
        if old_conn is not None:
            copy_cache(old_conn, new)
        report = build(new)
        if cache_max_entries:
            prune_cache(new, cache_max_entries)
        # Stay in WAL mode: a file swapped in as DELETE would make its first opener
        # switch it back, which needs an exclusive lock that readers can be refused.
        # Closing the only connection checkpoints and deletes the temp file's WAL.
        new.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        new.close()
        if old_conn is not None:
            old_conn.close()
        detached()
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(db_path) + suffix)
        os.replace(tmp, db_path)
        _fsync_dir(db_path.parent)
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


def read_source(f: MemoryFile, workspace: Path) -> tuple[str, str, float, int]:
    """``(text, sha256 of text, mtime, size)`` of one memory file or session transcript.

    Files inside the workspace are opened folder by folder without following a symlink
    (one swapped in after discovery included); extra files outside it have only their
    last component protected. Raises ``MemoryFileError`` / ``OSError`` with the reason.
    """
    if f.source == "sessions":
        from memlab.files.sessions import read_session_text

        text, mtime, size = read_session_text(f.abspath)
        return text, sha256_text(text), mtime, size
    inside = not f.path.startswith("../")
    ft = read_memory_file(f.abspath, f.path, root=workspace if inside else None)
    return ft.text, ft.hash, ft.mtime, ft.size


def sync_into(
    conn: sqlite3.Connection,
    files: Sequence[MemoryFile],
    *,
    workspace: Path,
    chunker: ChunkerConfig,
    embedder: Embedder | None,
    cache_enabled: bool,
    fts_path_prefix: bool,
    fingerprint: Callable[[], dict[str, Any]],
    show: bool | None,
    chunk_file: Callable[[MemoryFile, str], Sequence[Chunk]] | None = None,
) -> SyncReport:
    """Bring the rows of ``conn`` in step with ``files`` (incremental, by content hash).

    Files whose hash is unchanged are skipped (a moved mtime/size is recorded); changed
    files are re-chunked, keeping the rows of chunks whose id is unchanged; files gone
    (not merely unreadable: those are reported in ``files_failed`` and keep their rows)
    leave every table. Every missing vector is embedded first (``embed_with_cache``),
    then one transaction writes chunk, FTS and file rows and ``meta`` (``next_rowid``,
    ``fingerprint()`` as JSON, version, ``last_sync``). Raises ``EmbedderSwitched``
    before writing any chunk row when the embedder changed identity meanwhile.
    ``chunk_file(file, text)`` (default ``chunker.chunk(text)``) cuts a file under the
    index's memory-file rule (``memlab.store.filerules``); annotated chunks store their
    importance, project key and triggers, and their row id includes them.
    """
    report = SyncReport()
    report.files = len(files)
    stored = {
        row[0]: (row[1], row[2], row[3])
        for row in conn.execute("SELECT path, hash, mtime, size FROM files")
    }
    model = embedder.model if embedder is not None else FTS_ONLY_MODEL
    changed: list[tuple[MemoryFile, str, float, int, list[Chunk]]] = []
    # Files whose text is unchanged but whose mtime/size moved (touched, rewritten with
    # the same text): their row is refreshed so `stale_files` stops reporting them.
    touched: list[tuple[float, int, str]] = []
    seen: set[str] = set()
    skipped: dict[str, dict[str, Any]] = {}
    for f in progress_items(list(files), show, "files", unit="file"):
        seen.add(f.path)
        try:
            text, file_hash, mtime, size = read_source(f, workspace)
        except (MemoryFileError, OSError) as exc:
            reason = exc.reason if isinstance(exc, MemoryFileError) else str(exc)
            report.files_failed.append((f.path, reason))
            st = exc.stat if isinstance(exc, MemoryFileError) else None
            if st is not None:  # remembered: not "changed" again until this stat moves
                skipped[f.path] = {"reason": reason, **skip_stamp(st)}
            # Keep the last good rows of a file that is briefly unreadable.
            continue
        if f.path in stored and stored[f.path][0] == file_hash:
            if stored[f.path][1:] != (mtime, size):
                touched.append((mtime, size, f.path))  # same text: only the stat moved
            continue
        chunks = chunk_file(f, text) if chunk_file is not None else chunker.chunk(text)
        changed.append((f, file_hash, mtime, size, list(chunks)))
    failed = {path for path, _ in report.files_failed}
    removed = [p for p in stored if p not in seen and p not in failed]

    # Embed everything missing from the cache first, committing the cache
    # batch by batch: a crash or a provider failure loses no finished work
    # and leaves the chunk tables untouched.
    vectors: dict[str, tuple[bytes, int]] = {}
    if embedder is not None:
        identity = embedder_identity(embedder)
        wanted = {c.hash: c.text for _, _, _, _, chunks in changed for c in chunks}
        vectors, hits, embedded, truncated = embed_with_cache(
            conn, embedder, wanted, cache_enabled=cache_enabled, show=show
        )
        report.cache_hits, report.embedded, report.truncated = hits, embedded, truncated
        if embedder_identity(embedder) != identity:
            raise EmbedderSwitched(
                f"{identity[0]}/{identity[1]} failed, now {embedder.provider}/"
                f"{embedder.model}: {getattr(embedder, 'fallback_reason', '')}"
            )

    now = time.time()
    with conn:
        # Rowids only grow (high-water mark kept in meta): a reader holding a table
        # loaded before this sync never sees a rowid it knows reused for another chunk.
        next_rowid = max(
            int(get_meta(conn, "next_rowid") or 0),
            (conn.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0) + 1,
        )
        for path in removed:
            report.chunks_removed += delete_file(conn, path)
        for f, file_hash, mtime, size, chunks in changed:
            # Keep the rows of chunks whose id (path, lines, text, model) is unchanged:
            # appending to a long daily log rewrites its last chunks, not all of them.
            old = dict(conn.execute("SELECT id, rowid FROM chunks WHERE path = ?", (f.path,)))
            new_rows: dict[str, Chunk] = {}
            for c in chunks:
                cid = chunk_id(f.source, f.path, c, model)
                if suffix := row_id_suffix(c):
                    cid = hashlib.sha256((cid + suffix).encode("utf-8")).hexdigest()
                new_rows.setdefault(cid, c)
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
                        *chunk_annotations(c),
                    )
                )
                fts_text = f"{f.path}\n{c.text}" if fts_path_prefix else c.text
                fts_rows.append((next_rowid, fts_text))
                next_rowid += 1
            conn.executemany(
                "INSERT INTO chunks(rowid, id, path, source, start_line, end_line, hash,"
                " model, text, embedding, updated_at, heading, truncated, importance,"
                " project_key, triggers) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            conn.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", fts_rows)
            report.chunks_added += len(rows)
            conn.execute(
                "INSERT OR REPLACE INTO files(path, source, hash, mtime, size) VALUES (?,?,?,?,?)",
                (f.path, f.source, file_hash, mtime, size),
            )
        conn.executemany("UPDATE files SET mtime = ?, size = ? WHERE path = ?", touched)
        set_meta(conn, SKIPPED_META, json.dumps(skipped, sort_keys=True))
        set_meta(conn, "next_rowid", str(next_rowid))
        fp = fingerprint()
        old_fp = get_meta(conn, "fingerprint")
        if not fp.get("dims") and old_fp:
            # An embedder that has not learned its width yet (a remote one that embedded
            # nothing in this sync) must not erase the width the index knows.
            fp["dims"] = json.loads(old_fp).get("dims", 0)
        set_meta(conn, "fingerprint", json.dumps(fp, sort_keys=True))
        set_meta(conn, "memlab_version", __version__)
        set_meta(conn, "last_sync", str(now))
    report.files_changed = len(changed)
    report.files_removed = len(removed)
    report.chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return report


def skip_stamp(st: os.stat_result) -> dict[str, float]:
    """What a skipped file is remembered by: ``{mtime, size, ctime}`` of its stat. ctime
    too, so that a change of the file that leaves mtime and size alone (a ``chmod`` that
    makes it readable) counts as a change."""
    return {"mtime": st.st_mtime, "size": st.st_size, "ctime": st.st_ctime}


def skipped_files(conn: sqlite3.Connection, db_path: Path) -> dict[str, dict[str, Any]]:
    """The files the last sync skipped: ``{path: {reason, mtime, size, ctime}}`` (``{}`` for
    an index synced before this record existed). SQLite errors are mapped by
    ``db_error``."""
    try:
        raw = get_meta(conn, SKIPPED_META)
    except sqlite3.DatabaseError as exc:
        raise db_error(db_path, exc) from exc
    return json.loads(raw) if raw else {}


def stale_files(
    conn: sqlite3.Connection, db_path: Path, discover: Callable[[], Sequence[MemoryFile]]
) -> list[str]:
    """Display paths of the ``discover()``ed files whose ``lstat`` (mtime, size) differs
    from the ``files`` table (new files included), plus indexed paths no longer
    discovered; sorted, ``[]`` = in step. A file the last sync skipped (not UTF-8, a
    symlink, permission denied: ``skipped_files``) is in step while its (mtime, size, ctime)
    are those it was skipped with, whatever rows it had before. A file that cannot be
    stat'ed is left out. No file is opened; SQLite errors are mapped by ``db_error``."""
    try:
        rows = conn.execute("SELECT path, mtime, size FROM files").fetchall()
    except sqlite3.DatabaseError as exc:
        raise db_error(db_path, exc) from exc
    indexed = {r[0]: (r[1], r[2]) for r in rows}
    skipped = skipped_files(conn, db_path)
    dirty: list[str] = []
    current = discover()
    for f in current:
        try:
            st = f.abspath.lstat()
        except OSError:
            continue
        if indexed.get(f.path) == (st.st_mtime, st.st_size):
            continue
        known = skipped.get(f.path)
        if known is None or {k: known[k] for k in ("mtime", "size", "ctime")} != skip_stamp(st):
            dirty.append(f.path)
    seen = {f.path for f in current}
    dirty.extend(p for p in indexed if p not in seen)
    return sorted(dirty)
