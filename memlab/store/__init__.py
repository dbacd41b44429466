"""The memory index: one SQLite file per workspace and identity (spec section 4).

Parts, each in its own module:

- ``schema``: tables, opening a file, meta get/set, SQLite error mapping (``db_error``)
  and the ``Index*Error`` classes;
- ``identity``: chunk ids, ``index_identity``, ``default_db_path``, the fingerprint and
  ``describe_fingerprint_change``;
- ``sync``: the writer lock, incremental sync, the crash-safe full reindex
  (``DB.tmp-*`` swapped in with ``os.replace``), ``SyncReport``;
- ``embedcache``: the embedding cache;
- ``table``: ``ChunkTable`` and its loading in batches within one read transaction;
- ``legs``: the keyword (FTS5) and vector (``memlab.retrieval.vectors``) legs;
- ``index``: ``MemoryIndex``, which ties them together (connect/refresh, sync, texts,
  both legs, status).

The invariants these modules keep are stated, with their tests, in docs/reliability.md.
"""

from __future__ import annotations

from memlab.config.vocab import FTS_TOKENIZE, FTS_TOKENIZERS, VECTOR_BACKENDS
from memlab.store.embedcache import EMBED_BATCH
from memlab.store.identity import (
    chunk_id,
    default_db_path,
    describe_fingerprint_change,
    index_fingerprint,
    index_identity,
    workspace_cache_key,
)
from memlab.store.index import MemoryIndex
from memlab.store.schema import (
    BUSY_TIMEOUT,
    FTS_ONLY_MODEL,
    SCHEMA_VERSION,
    IndexCorruptError,
    IndexLockedError,
    IndexUnusableError,
)
from memlab.store.sync import SyncReport
from memlab.store.table import LOAD_BATCH, ChunkTable

__all__ = [
    "BUSY_TIMEOUT",
    "EMBED_BATCH",
    "FTS_ONLY_MODEL",
    "FTS_TOKENIZE",
    "FTS_TOKENIZERS",
    "LOAD_BATCH",
    "SCHEMA_VERSION",
    "VECTOR_BACKENDS",
    "ChunkTable",
    "IndexCorruptError",
    "IndexLockedError",
    "IndexUnusableError",
    "MemoryIndex",
    "SyncReport",
    "chunk_id",
    "default_db_path",
    "describe_fingerprint_change",
    "index_fingerprint",
    "index_identity",
    "workspace_cache_key",
]
