"""Search as a pipeline of declared stages: ``Pipeline`` (``memlab.pipeline.base``) and
the ``Ranking`` it returns (declared with the stages that write it,
``memlab.stages.declare``); the result frames and explanations live in
``memlab.pipeline.explain``, the presets in ``memlab.pipeline.presets``."""

from __future__ import annotations

from memlab.pipeline.base import Pipeline
from memlab.stages.declare import Ranking

__all__ = ["Pipeline", "Ranking"]
