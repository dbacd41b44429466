"""memlab's ipywidgets panels, driven from Python as well as by hand (lab layer).

- ``explorer``: ``Explorer``, a search pipeline behind sliders over an index or a lab;
- ``judge``: ``Judge``, the judging of ``memlab judge`` in a notebook (same pool, order
  and ``judgments.jsonl``).
"""

from __future__ import annotations

from memlab.widgets.explorer import Explorer
from memlab.widgets.judge import Judge

__all__ = ["Explorer", "Judge"]
