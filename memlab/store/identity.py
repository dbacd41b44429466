"""What an index is: chunk ids, its identity and file name, its fingerprint.

By default an index file lives in the user cache, one per (FTS tokenizer, embedder)
identity (``default_db_path``, ``index_identity``): never inside the workspace, and
switching preset or embedder opens another file instead of rebuilding this one. The
fingerprint (``index_fingerprint``) lists everything whose change invalidates the
stored rows; ``describe_fingerprint_change`` says in words what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.paths import cache_dir
from memlab.store.filerules import DEFAULT_MEMORY_FILES, identity_tag
from memlab.store.schema import FTS_ONLY_MODEL, SCHEMA_VERSION

if TYPE_CHECKING:
    from memlab.chunking import Chunk
    from memlab.embed import Embedder

__all__ = [
    "chunk_id",
    "default_db_path",
    "describe_fingerprint_change",
    "embedder_dims",
    "embedder_identity",
    "fingerprints_match",
    "index_fingerprint",
    "index_identity",
    "workspace_cache_key",
]


def chunk_id(source: str, path: str, chunk: Chunk, model: str) -> str:
    """sha256 of ``source:path:startLine:endLine:hash:model`` (OpenClaw's chunk id)."""
    key = f"{source}:{path}:{chunk.start_line}:{chunk.end_line}:{chunk.hash}:{model}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def embedder_identity(e: Embedder) -> tuple[str, str, str]:
    """``(provider, model, identity_key)``: vectors of two embedders are comparable only
    when these are equal (a ``FallbackEmbedder`` that switched changes them)."""
    return (e.provider, e.model, e.identity_key)


def embedder_dims(e: Embedder | None) -> int:
    """The embedder's vector width if known without asking it (0 otherwise).

    A remote embedder that was not told its width learns it from its first response
    (``known_dimensions`` is None until then): naming or checking an index must not
    send a request, or a provider that is down would make even the keyword fallback
    impossible. Other embedders know their width (``dimensions``).
    """
    if e is None:
        return 0
    if hasattr(e, "known_dimensions"):
        return int(e.known_dimensions or 0)
    return int(getattr(e, "dimensions", None) or 0)


def fingerprints_match(stored: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    """Whether an index with fingerprint ``stored`` serves a system with ``current``.

    Equal fingerprints match; so do fingerprints equal but for ``dims`` when either side
    did not know the width (``dims`` 0, ``embedder_dims``: a remote embedder learns it from
    its first answer, and a sync whose texts all came from the embedding cache never asks
    it): the model and settings (``provider_key``) are the same, so the width is too. None
    (no index) never matches.
    """
    if stored is None:
        return False
    if stored == current:
        return True
    unknown = 0 in (current.get("dims"), stored.get("dims"))
    if unknown and stored.get("provider") not in (None, "none"):
        return {**stored, "dims": 0} == {**current, "dims": 0}
    return False


def index_identity(
    fts_tokenizer: str,
    embedder: Embedder | None,
    *,
    fts_path_prefix: bool = False,
    memory_files: str = DEFAULT_MEMORY_FILES,
) -> str:
    """The name of one index among a workspace's indexes: what its rows depend on most.

    ``f"{fts_tokenizer}-{provider}-{h}"`` with ``h`` the first 12 hex digits of
    sha256(``provider|model|identity_key|path_prefix``) (no request is made: the width,
    which a remote embedder may only learn by asking, is not part of it); keyword-only mode is
    provider ``none``. Switching preset (porter vs unicode61) or embedder therefore picks
    another file instead of rebuilding one: e.g. ``porter-hashing-3c1f0a9e2b7d``. The
    release's file rule (``memory_files="openclaw-2026.9"``) appends
    ``filerules.identity_tag`` (``-oc2026.9-…``): its own file; 2026.4 names are unchanged.
    """
    if embedder is None:
        provider, model, key = "none", FTS_ONLY_MODEL, ""
    else:
        provider, model, key = embedder_identity(embedder)
    h = hashlib.sha256(f"{provider}|{model}|{key}|{int(fts_path_prefix)}".encode())
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in provider)
    return f"{fts_tokenizer}-{safe}-{h.hexdigest()[:12]}{identity_tag(memory_files)}"


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


def index_fingerprint(
    embedder: Embedder | None,
    *,
    sources: Sequence[str],
    extra_paths: Sequence[str],
    chunker: str,
    fts_tokenizer: str,
    fts_path_prefix: bool,
    memory_files: str = DEFAULT_MEMORY_FILES,
    default_memory: bool = True,
) -> dict[str, Any]:
    """Everything whose change makes the stored chunks or vectors invalid.

    Keys: ``schema``, ``provider`` (``"none"`` keyword-only), ``model`` (``fts-only``
    keyword-only), ``provider_key``, ``dims`` (0 when unknown or keyword-only),
    ``sources``, ``extra_paths`` (sha256 of their JSON list), ``chunker`` (the chunker's
    fingerprint string; ``filerules.chunker_fingerprint``, which names the release's
    chunking version for 2026.9), ``fts_tokenizer``, ``fts_path_prefix``, ``memory_files``
    (the discovery and chunking rule, ``memlab.config.vocab.MEMORY_FILE_RULES``), and
    ``default_memory: false`` only when the default memory files are left out (so every
    other index keeps its fingerprint).
    """
    e = embedder
    extra_hash = hashlib.sha256(json.dumps(list(extra_paths)).encode()).hexdigest()
    return {
        "schema": SCHEMA_VERSION,
        "provider": e.provider if e else "none",
        "model": e.model if e is not None else FTS_ONLY_MODEL,
        "provider_key": e.identity_key if e else "",
        "dims": embedder_dims(e),
        "sources": list(sources),
        "extra_paths": extra_hash,
        "chunker": chunker,
        "fts_tokenizer": fts_tokenizer,
        "fts_path_prefix": fts_path_prefix,
        "memory_files": memory_files,
        **({} if default_memory else {"default_memory": False}),
    }


def describe_fingerprint_change(stored: dict[str, Any] | None, current: dict[str, Any]) -> str:
    """Why a stored index no longer fits, in words: ``"embedder changed from hashing/
    hashing-128 to local/bge-small; FTS tokenizer changed from unicode61 to porter"``.
    ``stored`` None → ``"new index"``; equal fingerprints → ``""``."""
    if stored is None:
        return "new index"
    # An index written before the memory-file rule was recorded used the 2026-04 rule.
    stored = {"memory_files": DEFAULT_MEMORY_FILES, **stored}
    keys = sorted(k for k in set(stored) | set(current) if stored.get(k) != current.get(k))
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
        "memory_files": "memory-file rule",
        "schema": "index schema",
    }
    for k, label in labels.items():
        if k in keys:
            parts.append(f"{label} changed from {stored.get(k)} to {current.get(k)}")
    if "extra_paths" in keys:
        parts.append("extra paths changed")
    parts.extend(k for k in keys if k not in (*emb, *labels, "extra_paths"))
    return "; ".join(parts)
