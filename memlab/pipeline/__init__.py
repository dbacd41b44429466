"""Search as a pipeline of declared stages: ``Pipeline`` (``memlab.pipeline.base``).

``from memlab.pipeline import Pipeline, Ranking`` is the public path. The other
names importable here moved; they are deprecated re-exports, kept for one
release: the presets (``openclaw``, ``preset``, ``PRESETS``, ``from_config`` ...:
now ``memlab.presets``), the frames (``ranking_frame``, ``explain``,
``explain_formula``, ``explain_weights``: ``memlab.pipeline.explain``), ``chunk_times``
(``memlab.stages.decay``), ``SELECTED_BY`` (``memlab.stages.selection``),
``VECTOR_LOWER`` / ``TEXT_LOWER`` (``memlab.stages.legs``) and the allowed-value
lists (``memlab.vocab``). The presets are read on first use, since
``memlab.presets`` builds on ``memlab.pipeline.base``.
"""

from __future__ import annotations

from typing import Any

from memlab.pipeline.base import Pipeline, Ranking
from memlab.pipeline.explain import explain, explain_formula, explain_weights, ranking_frame
from memlab.stages.decay import chunk_times
from memlab.stages.legs import TEXT_LOWER, VECTOR_LOWER
from memlab.stages.selection import SELECTED_BY
from memlab.vocab import (
    DECAY_KINDS,
    DECAY_RULES,
    FUSION_METHODS,
    KEYWORD_MODES,
    MMR_KINDS,
    TEXT_SOURCES,
)

__all__ = [
    "DECAY_KINDS",
    "DECAY_RULES",
    "FUSION_METHODS",
    "KEYWORD_MODES",
    "MMR_KINDS",
    "SELECTED_BY",
    "TEXT_LOWER",
    "TEXT_SOURCES",
    "VECTOR_LOWER",
    "Pipeline",
    "Ranking",
    "chunk_times",
    "explain",
    "explain_formula",
    "explain_weights",
    "ranking_frame",
]

_PRESET_NAMES = frozenset(
    {
        "LAB_KEYWORD_MODE",
        "PRESETS",
        "bm25_only",
        "from_config",
        "memlab_best",
        "memlab_best_chunk",
        "openclaw",
        "openclaw_latest",
        "preset",
        "qmd_like",
        "rrf_preset",
        "vector_only",
        "wsum_preset",
    }
)


def __getattr__(name: str) -> Any:
    """The presets, moved to ``memlab.presets`` (deprecated here, kept for one release)."""
    if name in _PRESET_NAMES:
        from memlab import presets

        return getattr(presets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
