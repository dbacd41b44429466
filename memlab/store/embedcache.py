"""The embedding cache: chunk vectors kept by (provider, model, provider_key, hash).

A chunk text already embedded by the same embedder identity is never embedded again,
whether it moved, was re-chunked or came back after a full reindex (the cache is copied
into the new file). New vectors are committed batch by batch (``EMBED_BATCH`` chunks),
so a crash or a provider failure loses no finished work.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from memlab.embed import Embedder

__all__ = [
    "EMBED_BATCH",
    "copy_cache",
    "embed_with_cache",
    "progress_bar",
    "progress_items",
    "prune_cache",
    "truncation_flags",
]

# Chunks per embedder call, and per committed cache transaction.
EMBED_BATCH = 64
# Hashes per `IN (...)` cache lookup (below SQLite's variable limit).
LOOKUP_BATCH = 500


def embed_with_cache(
    conn: sqlite3.Connection,
    embedder: Embedder,
    wanted: dict[str, str],
    *,
    cache_enabled: bool,
    show: bool | None,
) -> tuple[dict[str, tuple[bytes, int]], int, int, int]:
    """Vectors for ``wanted`` (chunk hash → text): ``(vectors, hits, embedded, truncated)``.

    ``vectors`` maps hash → (float32 blob, truncated flag 0/1); ``hits`` = hashes found
    in the cache (0 when ``cache_enabled`` is False: nothing is read or written),
    ``embedded`` = texts sent to the embedder (shortest first, ``EMBED_BATCH`` per call,
    each batch committed to the cache), ``truncated`` = chunks cut by the embedder
    (cached and new). An embedder error propagates after the finished batches are
    committed.
    """
    e = embedder
    out: dict[str, tuple[bytes, int]] = {}
    hits = 0
    if cache_enabled and wanted:
        key = (e.provider, e.model, e.identity_key)
        hashes = list(wanted)
        for i in range(0, len(hashes), LOOKUP_BATCH):
            part = hashes[i : i + LOOKUP_BATCH]
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
    bar = progress_bar(len(todo), show, "embedding", "chunk")
    try:
        for i in range(0, len(todo), EMBED_BATCH):
            batch = todo[i : i + EMBED_BATCH]
            texts = [t for _, t in batch]
            vecs = np.ascontiguousarray(e.embed_documents(texts), dtype=np.float32)
            flags = truncation_flags(e, texts)
            truncated += int(sum(flags))
            now = time.time()
            rows = []
            for (h, _), v, fl in zip(batch, vecs, flags, strict=True):
                blob = v.tobytes()
                out[h] = (blob, int(fl))
                rows.append((e.provider, e.model, e.identity_key, h, blob, len(v), int(fl), now))
            if cache_enabled:
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


def copy_cache(old: sqlite3.Connection, new: sqlite3.Connection) -> None:
    """Copy every embedding-cache row of ``old`` into ``new`` (one transaction); an
    unreadable ``old`` cache copies nothing."""
    try:
        rows = old.execute(
            "SELECT provider, model, provider_key, hash, embedding, dims, truncated, updated_at"
            " FROM embedding_cache"
        ).fetchall()
    except sqlite3.DatabaseError:
        return
    with new:
        new.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?,?,?,?,?)", rows)


def prune_cache(conn: sqlite3.Connection, max_entries: int) -> None:
    """Keep the ``max_entries`` most recently updated cache rows, delete the rest."""
    with conn:
        conn.execute(
            "DELETE FROM embedding_cache WHERE rowid NOT IN ("
            " SELECT rowid FROM embedding_cache ORDER BY updated_at DESC LIMIT ?)",
            (max_entries,),
        )


def truncation_flags(embedder: Embedder, texts: list[str]) -> list[int]:
    """Per text, 1 when the embedder cut it to its input limit: from
    ``embedder.truncation_flags(texts)`` if it has one, else ``count_truncated([t]) > 0``
    per text, else all 0."""
    per_text = getattr(embedder, "truncation_flags", None)
    if per_text is not None:
        return [int(x) for x in per_text(texts)]
    counter = getattr(embedder, "count_truncated", None)
    if counter is None:
        return [0] * len(texts)
    return [int(counter([t]) > 0) for t in texts]


def _show(show: bool | None) -> bool:
    return sys.stderr.isatty() if show is None else show


def progress_items(items: list[Any], show: bool | None, desc: str, unit: str) -> Any:
    """``items`` wrapped in a tqdm bar when shown (``show`` None = stderr is a terminal)
    and there are at least 50; else ``items`` unchanged."""
    if not _show(show) or len(items) < 50:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit=unit, leave=False, disable=None)  # terminal only


def progress_bar(total: int, show: bool | None, desc: str, unit: str) -> Any:
    """A tqdm bar of ``total`` steps when shown and ``total`` ≥ 64; else None."""
    if not _show(show) or total < 64:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=None)  # terminal only
