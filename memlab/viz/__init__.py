"""Plots of memlab's results: sweeps, categories, score distributions, rank changes, heatmaps.

Every function takes memlab's own result objects or their DataFrames, draws
with matplotlib, returns the ``Figure`` and, when ``path`` is given, saves it
(the format follows the suffix: ``.png``, ``.svg`` or ``.pdf``). Figures are
closed in pyplot as soon as they are drawn, so a notebook shows each one once
(as the value a cell returns) and long sessions do not accumulate them; with
no display and no Jupyter kernel the Agg backend is selected, so scripts and
CI never need a GUI.

Axis labels carry units (``PARAM_LABELS``, ``metric_label``); no titles unless
asked, no top/right spines, light horizontal grid only.

- ``style``: the shared look (labels with units, figure creation, saving).
- ``sweeps``: ``plot_sweep`` (curves with bootstrap bands), ``plot_heatmap``.
- ``metrics``: ``plot_by_category`` (bars per question category), ``plot_recall_at_k``.
- ``scores``: ``score_frame``, ``plot_score_distributions`` (histograms per leg and stage).
- ``ranks``: ``mark_relevant``, ``plot_rank_changes`` (a bump chart of two systems' top k).
- ``realism``: ``plot_realism`` (the tuned weight's plateau against term overlap).
- ``querylog``: ``plot_query_log`` (an agent's calls per day and shown scores, from
  ``memlab harvest``'s report).
"""

from __future__ import annotations

from memlab.viz.metrics import plot_by_category, plot_recall_at_k
from memlab.viz.querylog import plot_query_log
from memlab.viz.ranks import mark_relevant, plot_rank_changes
from memlab.viz.realism import plot_realism
from memlab.viz.scores import plot_score_distributions, score_frame
from memlab.viz.style import COLUMN_LABELS, PARAM_LABELS, metric_label
from memlab.viz.sweeps import plot_heatmap, plot_sweep

__all__ = [
    "COLUMN_LABELS",
    "PARAM_LABELS",
    "mark_relevant",
    "metric_label",
    "plot_by_category",
    "plot_heatmap",
    "plot_query_log",
    "plot_rank_changes",
    "plot_realism",
    "plot_recall_at_k",
    "plot_score_distributions",
    "plot_sweep",
    "score_frame",
]
