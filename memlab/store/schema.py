"""The index file's SQLite schema, its meta table and the mapping of SQLite errors.

Tables: ``meta(key, value)``, ``files(path, source, hash, mtime, size)``,
``chunks(id, path, source, start_line, end_line, hash, model, text, embedding,
updated_at, heading, truncated, importance, project_key, triggers)``, ``embedding_cache(provider, model,
provider_key, hash, embedding, dims, truncated, updated_at)`` and an FTS5 table
``chunks_fts`` whose rowid is the chunk's rowid (spec section 4).

Opening an existing index writes nothing (see ``open_db``); every SQLite error is
classified by ``db_error`` into corruption, a lock held too long, or another
unusable state.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memlab.config.vocab import FTS_TOKENIZE

__all__ = [
    "BUSY_TIMEOUT",
    "FTS_ONLY_MODEL",
    "SCHEMA_VERSION",
    "IndexCorruptError",
    "IndexLockedError",
    "IndexUnusableError",
    "create_schema",
    "db_error",
    "delete_file",
    "file_ident",
    "get_meta",
    "open_db",
    "set_meta",
]

# 2: chunks gained the release's recall annotations (importance, project_key, triggers;
# NULL in 2026.4 indexes). The fingerprint holds the version, so an older file is rebuilt.
SCHEMA_VERSION = 2
FTS_ONLY_MODEL = "fts-only"
# Seconds an SQLite call waits for another connection's lock before failing.
BUSY_TIMEOUT = 30.0
TABLES = ("meta", "files", "chunks", "embedding_cache", "chunks_fts")


class IndexUnusableError(RuntimeError):
    """The index file cannot be used (not SQLite, corrupt, wrong schema, unreadable)."""


class IndexCorruptError(IndexUnusableError):
    """SQLite reports the index file corrupt or not a database: ``sync`` moves it aside
    (``DB.corrupt-<stamp>``) and rebuilds it from the Markdown."""


class IndexLockedError(RuntimeError):
    """Another process holds the index's writer lock (or an SQLite lock) longer than the
    timeout."""


def open_db(path: Path, fts_tokenizer: str | None) -> sqlite3.Connection:
    """Open (and, given a tokenizer, create) an index file.

    Opening an existing index writes nothing: readers must never queue behind a long
    sync for a write lock, and must not leave WAL frames beside a file that a full
    reindex is about to replace. ``fts_tokenizer`` None → a file without memlab's five
    tables is refused instead of created. Raises ``IndexCorruptError``,
    ``IndexLockedError`` or ``IndexUnusableError`` (see ``db_error``).
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
        if len(have) < len(TABLES):
            if fts_tokenizer is None:
                raise IndexUnusableError(f"{path} is not a memlab index (tables missing)")
            create_schema(conn, fts_tokenizer)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise db_error(path, exc) from exc
    except IndexUnusableError:
        if conn is not None:
            conn.close()
        raise
    return conn


def create_schema(conn: sqlite3.Connection, fts_tokenizer: str) -> None:
    """Create the five tables (if missing) with FTS5 ``tokenize=FTS_TOKENIZE[fts_tokenizer]``
    and record ``schema_version`` (kept if already set), in one transaction."""
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
                truncated INTEGER NOT NULL DEFAULT 0, importance INTEGER,
                project_key TEXT, triggers TEXT);
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


def delete_file(conn: sqlite3.Connection, path: str) -> int:
    """Delete one file's rows from ``chunks``, ``chunks_fts`` and ``files`` (inside the
    caller's transaction); returns the number of chunk rows deleted (0 if none)."""
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE path = ?", (path,))]
    if rowids:
        conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r,) for r in rowids])
        conn.execute("DELETE FROM chunks WHERE path = ?", (path,))
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    return len(rowids)


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """``meta[key] = value`` (insert or replace; the caller commits)."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """``meta[key]``, or None when the key was never set."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def file_ident(path: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of ``path``, or None when it cannot be stat'ed: tells a file
    swapped in by ``os.replace`` from the one a connection has open."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def db_error(path: Path, exc: sqlite3.Error) -> Exception:
    """Classify an SQLite error: corruption, a lock held too long, or anything else.

    Only ``SQLITE_CORRUPT*`` and ``SQLITE_NOTADB`` mean the file itself is bad (and may
    be rebuilt) → ``IndexCorruptError``; busy/locked means another connection held a
    lock past the busy timeout → ``IndexLockedError``; other errors (I/O, permissions,
    disk full) leave the file alone → ``IndexUnusableError``. Returns the exception
    (the caller raises it ``from exc``).
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
