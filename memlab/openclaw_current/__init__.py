"""OpenClaw as it runs in release 2026.9.6 (npm ``openclaw@2026.9.6``, commit eb377ac5), exact.

The release's own ranking functions, one per rule of ``openclaw-current.md``, so a
notebook or a golden test can call each of them alone: ranking (§5–§9) in
:mod:`~memlab.openclaw_current.ranking` and :mod:`~memlab.openclaw_current.mmr`; its
keyword leg in :mod:`~memlab.openclaw_current.keyword` (over given ranks) and
:mod:`~memlab.openclaw_current.retrieval` (from the index); trigger recall
(§10) in :mod:`~memlab.openclaw_current.triggers`. The engine runs them as stages and
legs (``memlab.stages.current``, ``memlab.retrieval.candidates.KEYWORD_LEGS``) of the
``openclaw-current`` preset. The rest of the release sits beside its 2026-04 counterpart:
discovery (§1) in ``memlab.store.release_files``, chunking and annotations (§2, §8, §9) in
``memlab.chunking.release`` / ``memlab.chunking.annotations``, tools (§11) in
``memlab.tools.release``, config in ``memlab.config.release``; this package re-exports the
names a notebook reaches for. The release's whole ranking composed per hit,
``rank_hits``, is a test oracle (tests/release_oracle.py), not part of the package.
"""

from __future__ import annotations

from memlab.chunking.release import (
    Annotations,
    CurrentChunk,
    chunk_markdown,
    estimate_chars,
    parse_annotations,
    split_curated_entries,
    strip_annotations,
)
from memlab.openclaw_current.ranking import (
    build_fts_query,
    date_from_path,
    decay_multiplier,
    expansion_keywords,
    importance_multiplier,
    is_evergreen,
    keyword_boost,
    mmr_rerank,
    mmr_tokenize,
    path_specificity,
    project_multiplier,
)
from memlab.openclaw_current.triggers import (
    TriggerEntry,
    TriggerMatch,
    recall_triggers,
    trigger_context,
    trigger_matches,
)
from memlab.retrieval.fusion import bm25_rank_to_score  # the release's textScore is OpenClaw's map
from memlab.store.release_files import CurrentMemoryFile, list_memory_files

__all__ = [
    "Annotations",
    "CurrentChunk",
    "CurrentMemoryFile",
    "TriggerEntry",
    "TriggerMatch",
    "bm25_rank_to_score",
    "build_fts_query",
    "chunk_markdown",
    "date_from_path",
    "decay_multiplier",
    "estimate_chars",
    "expansion_keywords",
    "importance_multiplier",
    "is_evergreen",
    "keyword_boost",
    "list_memory_files",
    "mmr_rerank",
    "mmr_tokenize",
    "parse_annotations",
    "path_specificity",
    "project_multiplier",
    "recall_triggers",
    "split_curated_entries",
    "strip_annotations",
    "trigger_context",
    "trigger_matches",
]
