"""``MemoryIndex``: one workspace's SQLite index, its sync and its two search legs.

This class ties the store's parts together: the schema (``memlab.store.schema``), the
identity and fingerprint (``identity``), sync and full reindex (``writer`` decides,
``sync`` does), the chunk table (``table``) and the legs (``legs``). Vectors are float32
blobs in ``chunks.embedding``, loaded into memory on first search and served by a
``memlab.retrieval.vectors`` engine (exact by default).

Concurrency (see docs/reliability.md): one writer at a time (``DB.lock``); readers
never write, so they never wait for a long sync; chunk rowids are never reused, so
a reader whose cached table predates a sync can drop unknown rows instead of
mislabelling them; each search re-checks whether another connection changed the
index (``PRAGMA data_version``) or swapped the file (inode) and reloads if so. A
``MemoryIndex`` object is not thread-safe: give each thread its own.

Size: one class, ``MemoryIndex``, the object every caller holds: its methods are
short calls into the modules named above, over state they share: the connection
(``connect``), the ``table`` reloaded when ``data_version`` or the inode changes, the
line views (``line_view``) and the vector engine (``set_vector_engine``).
"""

from __future__ import annotations

import glob
import json
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import memlab.store.legs as legs
from memlab.chunking import ChunkerConfig
from memlab.config.vocab import FTS_TOKENIZE, LINE_VIEW_MEMORY_FILES, SOURCES, VECTOR_BACKENDS
from memlab.files.sessions import transcript_places
from memlab.files.workspace import MemoryFile, resolve_workspace
from memlab.store.asof import PastKeywords
from memlab.store.filerules import (
    DEFAULT_MEMORY_FILES,
    check_memory_files,
    chunker_fingerprint,
    discover_files,
    normalize_extra_entries,
    stores_annotations,
)
from memlab.store.identity import (
    default_db_path,
    describe_fingerprint_change,
    fingerprints_match,
    index_fingerprint,
    index_identity,
)
from memlab.store.schema import (
    FTS_ONLY_MODEL,
    IndexCorruptError,
    IndexUnusableError,
    db_error,
    file_ident,
    open_db,
)
from memlab.store.sync import SyncReport, skipped_files, stale_files
from memlab.store.table import ChunkTable, fetch_texts, load_table
from memlab.store.writer import IndexWriter

if TYPE_CHECKING:
    from memlab.config import MemorySearchConfig
    from memlab.embed import Embedder

__all__ = ["MemoryIndex"]


class MemoryIndex(IndexWriter):
    """A workspace's memory index (SQLite + an in-memory exact vector index).

    ``embedder``: an ``Embedder``, a provider name for ``resolve_embedder``
    (``"auto"``, ``"local"``, ``"hashing"``, ``"none"``...) or ``None`` for
    keyword-only mode. The database path defaults to ``default_db_path``.
    ``vector_backend`` picks the vector-leg engine (``VECTOR_BACKENDS``; default
    ``"numpy"``, the exact scan at memory speed) and ``vector_params`` its options
    (e.g. ``{"nprobe": 32}`` for ``"ivf"``; see ``memlab.retrieval.vectors.make_engine``).
    ``memory_files`` (``memlab.config.vocab.MEMORY_FILE_RULES``): which files are memory and how
    they are chunked (``memlab.store.filerules``): ``"openclaw-2026.4"`` (default; the
    ``chunker``) or ``"openclaw-2026.9"`` (the release's discovery and fixed chunker, with
    per-chunk annotations in ``table.importance``/``project_keys``/``triggers``); part of
    the identity (file name) and the fingerprint.
    ``sources`` with ``"sessions"`` adds the JSONL transcripts of ``sessions_dir``
    (default: ``memlab.files.sessions.transcript_places``, ``WORKSPACE/sessions``).
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
        extra_paths: Sequence[str | Mapping[str, str]] = (),
        sources: Sequence[str] = ("memory",),
        sessions_dir: str | os.PathLike[str] | None = None,
        fts_tokenizer: str = "unicode61",
        fts_path_prefix: bool = False,
        memory_files: str = DEFAULT_MEMORY_FILES,
        vector_backend: str = "numpy",
        vector_params: dict[str, Any] | None = None,
        cache_enabled: bool = True,
        cache_max_entries: int | None = None,
        lock_timeout: float = 30.0,
        progress: bool | None = None,
        default_memory: bool = True,
    ) -> None:
        self.workspace = resolve_workspace(workspace)
        # False: the extra paths only (a QMD config's includeDefaultMemory: false).
        self.default_memory = bool(default_memory)
        if fts_tokenizer not in FTS_TOKENIZE:
            raise ValueError(
                f"fts_tokenizer must be one of {', '.join(FTS_TOKENIZE)}; got {fts_tokenizer!r}"
            )
        if vector_backend not in VECTOR_BACKENDS:
            raise ValueError(
                f"vector_backend must be one of {', '.join(VECTOR_BACKENDS)}; got {vector_backend!r}"
            )
        for s in sources:
            if s not in SOURCES:
                raise ValueError(f"sources must be 'memory' and/or 'sessions'; got {s!r}")
        if isinstance(embedder, str):
            from memlab.embed import resolve_embedder

            embedder = resolve_embedder(embedder)
        self.embedder: Embedder | None = embedder
        self.chunker = chunker or ChunkerConfig()
        # Paths as strings; {path, pattern} entries (the 2026.9 rule) kept as dicts.
        self.extra_paths = normalize_extra_entries(extra_paths)
        self.sources = tuple(sources)
        # one rule of where transcripts are (memlab.files.sessions.transcript_places)
        self.sessions_dir = transcript_places(self.workspace, sessions=sessions_dir).jsonl_dir
        self.fts_tokenizer = fts_tokenizer
        self.fts_path_prefix = fts_path_prefix
        self.memory_files = check_memory_files(memory_files)
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
        # Line views opened by line_view(), by FTS5 tokenizer; synced with this index.
        self._line_views: dict[str, MemoryIndex] = {}
        self._keyword_only: MemoryIndex | None = None

    # ------------------------------------------------------------------ setup
    @classmethod
    def from_config(
        cls,
        workspace: str | os.PathLike[str],
        config: MemorySearchConfig,
        **overrides: Any,
    ) -> MemoryIndex:
        """An index configured from OpenClaw settings (provider, chunking, store, sources):
        ``cls(workspace, **memlab.config.index_options(config, **overrides))``, the one
        translation from config to index arguments (see there for the overrides)."""
        from memlab.config import index_options

        return cls(workspace, **index_options(config, **overrides))

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
        """True when an embedder is set (False in keyword-only mode)."""
        return self.embedder is not None

    @property
    def identity(self) -> str:
        """``index_identity`` of this index's tokenizer, embedder and memory-file rule (its
        default file name)."""
        return index_identity(
            self.fts_tokenizer,
            self.embedder,
            fts_path_prefix=self.fts_path_prefix,
            memory_files=self.memory_files,
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
            if not fingerprints_match(stored, self.fingerprint())
            else ""
        )

    def fingerprint(self) -> dict[str, Any]:
        """Everything whose change makes the stored chunks or vectors invalid
        (``memlab.store.identity.index_fingerprint``)."""
        return index_fingerprint(
            self.embedder,
            sources=self.sources,
            extra_paths=self.extra_paths,
            chunker=chunker_fingerprint(self.memory_files, self.chunker),
            fts_tokenizer=self.fts_tokenizer,
            fts_path_prefix=self.fts_path_prefix,
            memory_files=self.memory_files,
            default_memory=self.default_memory,
        )

    def connect(self) -> sqlite3.Connection:
        """The (lazily opened) connection; creates the schema on a new file.

        A file that is not a usable memlab index raises ``IndexUnusableError`` naming it.
        """
        if self._conn is None:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = open_db(self.db_path, self.fts_tokenizer)
            self._conn_ident = file_ident(self.db_path)
        return self._conn

    def line_view(self, fts_tokenizer: str | None = None) -> MemoryIndex:
        """The same workspace indexed one line per row (``ChunkerConfig("line")``), for
        systems that rank chunks by their best line (``memlab.stages.best_line``).

        Same files, sources, embedder and options as this index, with ``fts_tokenizer``
        (None = this index's). Its file sits beside this one's:
        ``<this file's stem>.lines-<tokenizer><its suffix>`` (in the user cache, never in the
        workspace). Built on first use (``ensure_synced``: the first search waits, as for
        any new index), then kept in step by every ``sync`` of the chunk index — from any
        ``MemoryIndex`` object on that file (a watcher's, a server's writer), since a sync
        also syncs each line view found beside it on disk, and ``stale_files`` (hence
        ``ensure_synced(files=True)``, ``memlab search``) counts a view's stale files as the
        index's. Only the 2026-04 file rule has a line chunker; under ``openclaw-2026.9``
        (the release's fixed chunker) this raises ValueError. A line index is its own line
        view.
        """
        if self.memory_files not in LINE_VIEW_MEMORY_FILES:
            raise ValueError(
                f"line_view: memory_files={self.memory_files!r} chunks with the release's own "
                f"chunker; a line view needs one of {', '.join(LINE_VIEW_MEMORY_FILES)}"
            )
        tok = fts_tokenizer or self.fts_tokenizer
        if self.chunker.kind == "line" and tok == self.fts_tokenizer:
            return self
        view = self._line_view_index(tok)
        view.ensure_synced()
        return view

    def keyword_only(self) -> MemoryIndex:
        """The same files, chunks and tokenizer indexed without an embedder (OpenClaw's
        keyword-only mode), in ``<this file's stem>.keyword-only<suffix>`` beside this
        index (user cache, never the workspace). Not synced here (``ensure_synced`` builds
        it, with no provider: FTS5 only). For answering while this index cannot be built or
        used: the MCP server serves it while the embedding provider is down and no index
        with its vectors exists yet. A keyword-only index is its own."""
        if self.embedder is None:
            return self
        if self._keyword_only is None:
            self._keyword_only = MemoryIndex(
                self.workspace,
                db_path=self.db_path.with_name(
                    f"{self.db_path.stem}.keyword-only{self.db_path.suffix}"
                ),
                embedder=None,
                chunker=self.chunker,
                extra_paths=self.extra_paths,
                sources=self.sources,
                sessions_dir=self.sessions_dir,
                fts_tokenizer=self.fts_tokenizer,
                fts_path_prefix=self.fts_path_prefix,
                memory_files=self.memory_files,
                cache_enabled=self.cache_enabled,
                lock_timeout=self.lock_timeout,
                progress=False,
            )
        return self._keyword_only

    def usable(self) -> bool:
        """Whether a search can run on this index without a sync first: the file exists
        and its fingerprint is this index's (``ensure_synced`` would otherwise build or
        rebuild it). Reads the meta table only; a corrupt file is not usable."""
        if not self.db_path.exists():
            return False
        try:
            self.refresh()  # a full build by another object swapped the file in
            return fingerprints_match(self.stored_fingerprint(), self.fingerprint())
        except IndexUnusableError:
            return False

    def _line_view_index(self, tok: str) -> MemoryIndex:
        # The line view's object (made once, not synced here): see line_view.
        view = self._line_views.get(tok)
        if view is None:
            view = MemoryIndex(
                self.workspace,
                db_path=self.db_path.with_name(
                    f"{self.db_path.stem}.lines-{tok}{self.db_path.suffix}"
                ),
                embedder=self.embedder,
                chunker=ChunkerConfig("line"),
                extra_paths=self.extra_paths,
                sources=self.sources,
                sessions_dir=self.sessions_dir,
                fts_tokenizer=tok,
                fts_path_prefix=self.fts_path_prefix,
                memory_files=self.memory_files,
                vector_backend=self.vector_backend,
                vector_params=self.vector_params,
                cache_enabled=self.cache_enabled,
                cache_max_entries=self.cache_max_entries,
                lock_timeout=self.lock_timeout,
                progress=self.progress,
            )
            self._line_views[tok] = view
        return view

    def line_view_tokenizers(self) -> list[str]:
        """The FTS5 tokenizers of this index's line views: those opened by ``line_view``
        and those whose file exists beside this index's (``<stem>.lines-<tok><suffix>``,
        the suffix of this index's file, so ``a.db`` and ``a.sqlite`` never share one); none
        under a file rule without line views (``LINE_VIEW_MEMORY_FILES``)."""
        if self.memory_files not in LINE_VIEW_MEMORY_FILES:
            return []
        found = set(self._line_views)
        prefix, suffix = f"{self.db_path.stem}.lines-", self.db_path.suffix
        if self.db_path.parent.is_dir():
            pattern = f"{glob.escape(prefix)}*{glob.escape(suffix)}"
            for f in self.db_path.parent.glob(pattern):
                tok = f.name[len(prefix) : len(f.name) - len(suffix)]
                if tok in FTS_TOKENIZE:
                    found.add(tok)
        return sorted(found)

    def sync(self, *, force: bool = False, progress: bool | None = None) -> SyncReport:
        """``IndexWriter.sync`` of this index, then of each of its line views
        (``line_view_tokenizers``: opened here or found on disk, so whoever syncs the chunk
        index keeps them in step); the report is this index's."""
        report = super().sync(force=force, progress=progress)
        for tok in self.line_view_tokenizers():
            self._line_view_index(tok).sync(force=force, progress=progress)
        return report

    def close(self) -> None:
        """Close the connection and drop the cached table (reopened on next use); line
        views are closed too."""
        for view in self._line_views.values():
            view.close()
        if self._keyword_only is not None:
            self._keyword_only.close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._conn_ident = None
        self._drop_table()

    def _drop_table(self) -> None:
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
            raise db_error(self.db_path, exc) from exc
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
        if file_ident(self.db_path) != self._conn_ident:
            self.close()
            return True
        if self._table is None:
            return False
        try:
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise db_error(self.db_path, exc) from exc
        if version != self._table_version:
            self._drop_table()
            return True
        return False

    def discover(self) -> list[MemoryFile]:
        """The memory files (and session transcripts when enabled) this index covers."""
        files: list[MemoryFile] = []
        if "memory" in self.sources:
            files.extend(
                discover_files(
                    self.memory_files,
                    self.workspace,
                    self.extra_paths,
                    default_memory=self.default_memory,
                )
            )
        if "sessions" in self.sources and self.sessions_dir.is_dir():
            for p in sorted(self.sessions_dir.glob("*.jsonl")):
                if p.is_file() and not p.is_symlink():
                    files.append(MemoryFile(f"sessions/{p.name}", p.absolute(), "sessions"))
        return files

    # ------------------------------------------------------------------ reading
    def stale_files(self) -> list[str]:
        """Memory files whose (mtime, size) differ from the last sync, new files, and
        indexed files that are gone: sorted display paths (``[]`` = in step).

        Costs one ``lstat`` per discovered file and one read of the ``files`` table; no
        file is opened. A file rewritten with the same size within the same mtime tick is
        not seen (as with any mtime check); ``memlab index`` hashes every file. A line view
        of this index (``line_view``) that is behind counts too: its stale files join the
        list, so a sync is asked for even when only the view missed one (a sync that failed
        between the two files, a view built while the workspace changed).
        """
        stale = set(stale_files(self.connect(), self.db_path, self.discover))
        for view in self.existing_line_views():
            try:
                stale.update(view.stale_files())
            except IndexUnusableError:  # a corrupt view: every file is behind in it, and
                # the sync this asks for moves it aside and rebuilds it
                stale.update(f.path for f in self.discover())
        return sorted(stale)

    def existing_line_views(self) -> list[MemoryIndex]:
        """The line views of this index whose files exist (``line_view_tokenizers``), as
        objects. Opens nothing."""
        views = [self._line_view_index(tok) for tok in self.line_view_tokenizers()]
        return [v for v in views if v.db_path.exists()]

    def status(self) -> dict[str, Any]:
        """Index path and identity, fingerprint, counts, truncated chunks, whether files
        changed since the last sync (``stale_files``, line views included), the files the
        last sync skipped and why (``skipped_files``: ``[{path, reason}]``, sorted; they do
        not make the index dirty until they change) and the line views beside this index
        (``line_views``: {tokenizer: path}, on disk only)."""
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
            "memory_files": self.memory_files,
            "fingerprint": stored,
            "fingerprint_current": fingerprints_match(stored, self.fingerprint()),
            "files": n_files,
            "chunks": n_chunks,
            "truncated_chunks": int(n_trunc),
            "cache_entries": conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0],
            "last_sync": float(last[0]) if last else None,
            "dirty": bool(dirty_files) or not fingerprints_match(stored, self.fingerprint()),
            "dirty_files": dirty_files,
            "skipped_files": [
                {"path": path, "reason": rec["reason"]}
                for path, rec in sorted(skipped_files(conn, self.db_path).items())
            ],
            "line_views": {v.fts_tokenizer: str(v.db_path) for v in self.existing_line_views()},
        }

    @property
    def table(self) -> ChunkTable:
        """The chunks as position-aligned arrays (loaded once, refreshed after ``sync``)."""
        if self._table is None:
            self._table, self._table_version = load_table(
                self.connect(),
                self.db_path,
                with_vectors=self.embedder is not None,
                annotations=stores_annotations(self.memory_files),
            )
        return self._table

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
        return fetch_texts(self.connect(), self.db_path, rowids)

    # ------------------------------------------------------------------ search legs
    def keyword_search(self, fts_query: str | None, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """Run an FTS5 MATCH query: (table positions, bm25 ranks), best (most negative) first.

        ``fts_query`` is an FTS5 expression (see ``memlab.retrieval.textquery``); ``None``
        or a query SQLite rejects yields no hits, as OpenClaw does.
        """
        return legs.keyword_leg(self.connect, lambda: self.table, self.db_path, fts_query, limit)

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Query vectors [Q, d] (each query trimmed, as OpenClaw embeds it)."""
        return legs.embed_queries(self.embedder, queries)

    def vector_search(
        self,
        query_vectors: np.ndarray,
        k: int,
        *,
        visible: Callable[[int], np.ndarray | None] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by cosine (inner product of unit vectors) for a batch of query vectors.

        Served by the ``vector_backend`` engine (``memlab.retrieval.vectors``), built lazily from
        the chunk table and rebuilt when the table reloads. Exact engines break score
        ties by the lower position. Returns (positions [Q, k'], scores [Q, k']) with
        k' = min(k, N); rows of an all-zero or non-finite query vector (not scanned), and
        slots an approximate engine could not fill, hold position −1 and score NaN
        (OpenClaw skips the vector side for a zero query). ``visible(i)``: the rows query
        ``i`` may see (bool [N], None = all; ``memlab.store.asof``), scanned exactly
        (``memlab.store.legs.vector_leg_visible``; an approximate engine is refused).
        """
        if visible is not None:
            return legs.vector_leg_visible(
                self.table, self.vector_engine, query_vectors, k, visible
            )
        return legs.vector_leg(self.table, self.vector_engine, query_vectors, k)

    def past_keywords(self) -> PastKeywords:
        """The keyword leg over a subset of this index's rows (``memlab.store.asof``: an
        in-memory FTS5 table of the rows ``show`` is given, with this index's tokenizer and
        FTS text), for searches with a time cut-off. The caller closes it."""
        return PastKeywords(self.connect, self.table, self.fts_tokenizer, self.db_path)

    def set_vector_engine(self, engine: Any) -> None:
        """Serve the vector leg from a prebuilt ``memlab.retrieval.vectors`` engine over ``table.vectors``
        (e.g. an IVF index tuned elsewhere) until the table next reloads after a sync."""
        legs.check_engine(engine, self.table.vectors)
        self._ann = engine

    def vector_engine(self) -> Any:
        """The vector-leg engine over the current table (built on first use)."""
        if self._ann is None:
            from memlab.retrieval.vectors import make_engine

            vecs = self.table.vectors
            if vecs is None:
                raise ValueError("keyword-only index: no vectors to search")
            self._ann = make_engine(self.vector_backend, vecs, **self.vector_params)
        return self._ann
