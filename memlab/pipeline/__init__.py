"""Search as a pipeline of declared stages: ``Pipeline`` and ``Ranking``
(``memlab.pipeline.base``); the result frames and explanations live in
``memlab.pipeline.explain``, the presets in ``memlab.presets``."""

from __future__ import annotations

from memlab.pipeline.base import Pipeline, Ranking

__all__ = ["Pipeline", "Ranking"]
