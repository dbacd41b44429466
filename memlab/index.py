"""Deprecated, kept for one release: import from ``memlab.store`` instead.

The memory index moved to the ``memlab.store`` package (schema, identity, sync,
embedding cache, chunk table, search legs, ``MemoryIndex``). This module re-exports
every name other code imported from ``memlab.index``, so notebooks, benchmarks and
older code keep working unchanged. Tunables (``LOAD_BATCH``, ``BUSY_TIMEOUT``,
``EMBED_BATCH``) are read where they are used: patch ``memlab.store.table.LOAD_BATCH``
or ``memlab.store.schema.BUSY_TIMEOUT``, not the copies here.
"""

from __future__ import annotations

from memlab.store import (
    BUSY_TIMEOUT,
    EMBED_BATCH,
    FTS_ONLY_MODEL,
    FTS_TOKENIZE,
    FTS_TOKENIZERS,
    LOAD_BATCH,
    SCHEMA_VERSION,
    VECTOR_BACKENDS,
    ChunkTable,
    IndexCorruptError,
    IndexLockedError,
    IndexUnusableError,
    MemoryIndex,
    SyncReport,
    chunk_id,
    default_db_path,
    describe_fingerprint_change,
    index_identity,
    workspace_cache_key,
)

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
    "index_identity",
    "workspace_cache_key",
]
