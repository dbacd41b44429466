"""memlab: a research and evaluation toolkit for agent-memory retrieval.

The flat public API a notebook imports. The engine (workspace discovery,
chunking, embedding, the SQLite index, search presets, the agent's tools) and
the lab (candidates, fusion, decay, MMR, datasets, metrics, experiments) are
one pipeline: what a researcher tunes here is what ``memlab search`` runs.
"""

from __future__ import annotations

__version__ = "0.1.0"

import importlib
from typing import Any

_EXPORTS = {
    "Dataset": "memlab.datasets.base",
    "load_folder": "memlab.datasets.base",
    "SynthConfig": "memlab.datasets.synthetic",
    "generate": "memlab.datasets.synthetic",
    "load_locomo": "memlab.datasets.locomo",
    "load_longmemeval": "memlab.datasets.longmemeval",
    "load_realmem": "memlab.datasets.realmem",
    "Lab": "memlab.eval.lab",
    "run_experiment": "memlab.eval.experiment",
    "sweep": "memlab.eval.sweep",
    "evaluate": "memlab.eval.metrics",
    "CandidateSet": "memlab.retrieval.candidates",
    "retrieve": "memlab.retrieval.candidates",
    "Chunk": "memlab.chunking",
    "ChunkerConfig": "memlab.chunking",
    "chunk_headings": "memlab.chunking",
    "chunk_lines": "memlab.chunking",
    "chunk_markdown": "memlab.chunking",
    "estimate_chars": "memlab.chunking",
    "MemorySearchConfig": "memlab.config",
    "load_openclaw_config": "memlab.config",
    "bm25_rank_to_score": "memlab.retrieval.fusion",
    "clamp_weights": "memlab.retrieval.fusion",
    "fuse": "memlab.retrieval.fusion",
    "normalize": "memlab.retrieval.fusion",
    "MemoryIndex": "memlab.store",
    "SyncReport": "memlab.store",
    "PRESETS": "memlab.pipeline.presets",
    "Pipeline": "memlab.pipeline",
    "bm25_only": "memlab.pipeline.presets",
    "openclaw": "memlab.pipeline.presets",
    "openclaw_latest": "memlab.pipeline.presets",
    "preset": "memlab.pipeline.presets",
    "qmd_like": "memlab.pipeline.presets",
    "rrf_preset": "memlab.pipeline.presets",
    "vector_only": "memlab.pipeline.presets",
    "wsum_preset": "memlab.pipeline.presets",
    "decay_multiplier": "memlab.retrieval.rerank",
    "file_timestamp": "memlab.retrieval.rerank",
    "mmr_rerank": "memlab.retrieval.rerank",
    "mmr_tokenize": "memlab.retrieval.rerank",
    "snippet": "memlab.retrieval.rerank",
    "build_fts_query": "memlab.retrieval.textquery",
    "memory_get": "memlab.tools",
    "memory_search": "memlab.tools",
    "MemoryFile": "memlab.files.workspace",
    "discover_memory_files": "memlab.files.workspace",
    "read_memory_file": "memlab.files.workspace",
}


def __getattr__(name: str) -> Any:
    # Lazy: `import memlab` stays cheap (the command line starts fast); a name is
    # imported from its module on first use.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "PRESETS",
    "CandidateSet",
    "Chunk",
    "ChunkerConfig",
    "Dataset",
    "Lab",
    "MemoryFile",
    "MemoryIndex",
    "MemorySearchConfig",
    "Pipeline",
    "SyncReport",
    "SynthConfig",
    "__version__",
    "bm25_only",
    "bm25_rank_to_score",
    "build_fts_query",
    "chunk_headings",
    "chunk_lines",
    "chunk_markdown",
    "clamp_weights",
    "decay_multiplier",
    "discover_memory_files",
    "estimate_chars",
    "evaluate",
    "file_timestamp",
    "fuse",
    "generate",
    "load_folder",
    "load_locomo",
    "load_longmemeval",
    "load_openclaw_config",
    "load_realmem",
    "memory_get",
    "memory_search",
    "mmr_rerank",
    "mmr_tokenize",
    "normalize",
    "openclaw",
    "openclaw_latest",
    "preset",
    "qmd_like",
    "read_memory_file",
    "retrieve",
    "rrf_preset",
    "run_experiment",
    "snippet",
    "sweep",
    "vector_only",
    "wsum_preset",
]
