"""The look every memlab plot shares: axis labels with units, figures that never show
twice, saving by suffix.

Figures are closed in pyplot as soon as they are drawn (`new_figure`), so a notebook
shows each one once (as the value a cell returns) and long sessions do not accumulate
them; with no display and no Jupyter kernel the Agg backend is selected (`pyplot`), so
scripts and CI never need a GUI. Axis labels carry units (``PARAM_LABELS``,
``COLUMN_LABELS``, `metric_label`); no titles unless asked, no top/right spines, light
horizontal grid only (`tidy_axes`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLUMN_LABELS",
    "PARAM_LABELS",
    "SAVE_FORMATS",
    "figure_axes",
    "finish_figure",
    "metric_label",
    "new_figure",
    "param_label",
    "pyplot",
    "series_colors",
    "tidy_axes",
]

# Axis labels with units for the pipeline parameters a sweep varies.
PARAM_LABELS: dict[str, str] = {
    "vector_weight": "vector weight (share of the fused score; text = 1 − w)",
    "text_weight": "text weight (share of the fused score)",
    "candidate_multiplier": "candidate multiplier (candidates per leg ÷ max results)",
    "max_candidates": "max candidates per leg",
    "max_results": "max results",
    "min_score": "minScore (threshold on the final score)",
    "mmr_lambda": "MMR λ (1 = relevance only, 0 = diversity only)",
    "half_life_days": "decay half-life (days)",
    "decay_weight": "QMD recency boost weight",
    "rrf_k": "RRF k (rank offset)",
    "missing": "score of a leg that missed the chunk",
}

# Axis labels for the score columns of `Pipeline.run` frames and `score_frame`.
COLUMN_LABELS: dict[str, str] = {
    "vector_score": "vector leg: cosine similarity",
    "text_raw": "keyword leg: FTS5 bm25 (lower = better)",
    "text_score": "keyword leg: score |r|/(1+|r|)",
    "vector_norm": "vector leg after normalisation",
    "text_norm": "keyword leg after normalisation",
    "fused": "fused score",
    "decay": "decay multiplier",
    "final": "final score (after decay)",
    "score": "final score (after decay)",
}

SAVE_FORMATS = (".png", ".svg", ".pdf")


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def pyplot() -> Any:
    """pyplot, with the Agg backend selected first when nothing could show a window.

    Agg is chosen only when pyplot is not imported yet, ``MPLBACKEND`` is unset, no
    Jupyter kernel runs and there is no display (``DISPLAY``/``WAYLAND_DISPLAY`` unset on
    Linux; macOS and Windows always have one); otherwise matplotlib's own choice stands.
    """
    import matplotlib

    in_kernel = "ipykernel" in sys.modules
    if (
        "matplotlib.pyplot" not in sys.modules
        and not os.environ.get("MPLBACKEND")
        and not in_kernel
        and not _has_display()
    ):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def new_figure(
    nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float]
) -> tuple[Figure, Any]:
    """A figure of ``nrows × ncols`` axes (constrained layout; ``axes`` always a 2-D
    array, even for one panel), already closed in pyplot: the caller owns it, and a
    notebook shows it once, as the value its cell returns."""
    plt = pyplot()
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    # The caller owns the figure: closing it here keeps pyplot from showing it a
    # second time at the end of a notebook cell.
    plt.close(fig)
    return fig, axes


def figure_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """Where a one-panel plot draws: ``ax`` and its figure when given (``figsize`` is then
    ignored), else a new one-panel figure of ``figsize`` inches (`new_figure`)."""
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    fig, axes = new_figure(figsize=figsize)
    return fig, axes[0, 0]


def tidy_axes(ax: Axes, grid: str = "y") -> None:
    """The house style of an axes: no top/right spines; a light grid along ``grid``
    (``"y"``, ``"x"``, ``"both"``) drawn below the data, or none for ``""``."""
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if grid:
        ax.grid(axis=grid, color="0.9", linewidth=0.8)
        ax.set_axisbelow(True)


def finish_figure(
    fig: Figure, path: str | os.PathLike[str] | None, title: str | None = None
) -> Figure:
    """``fig`` with ``title`` as its suptitle (when given), saved to ``path`` (when given:
    150 dpi, tight box, parent folders created; the format follows the suffix, one of
    ``SAVE_FORMATS``, else ``ValueError``). Returns ``fig``."""
    if title:
        fig.suptitle(title)
    if path is not None:
        p = Path(path)
        if p.suffix.lower() not in SAVE_FORMATS:
            raise ValueError(f"path must end in one of {', '.join(SAVE_FORMATS)}, got {p.name!r}")
        p.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(p, dpi=150, bbox_inches="tight")
    return fig


def metric_label(metric: str) -> str:
    """Readable axis label of a metric name: ``"recall@6"`` → ``"recall@6 (share of evidence
    spans in the top 6)"``; unknown names are returned unchanged."""
    name, _, k = metric.partition("@")
    name = name.lower()
    top = f"the top {k}" if k else "the ranking"
    labels = {
        "recall": f"share of evidence spans in {top}",
        "recall_any": f"questions with any evidence in {top}",
        "success": f"questions with any evidence in {top}",
        "hit": f"questions with any evidence in {top}",
        "hit_rate": f"questions with any evidence in {top}",
        "recall_all": f"questions with all evidence in {top}",
        "precision": f"share of {top} that is evidence",
        "mrr": "reciprocal rank of the first evidence",
        "ndcg": "graded gain, rank-discounted",
        "alpha_ndcg": "novelty-aware gain",
        "subtopic_recall": f"share of subtopics in {top}",
        "budget_recall": f"share of evidence within {k} tokens",
    }
    what = labels.get(name)
    return f"{metric} ({what})" if what else metric


def param_label(param: str) -> str:
    """Axis label of a swept parameter: ``PARAM_LABELS[param]``, else the name with
    underscores as spaces."""
    return PARAM_LABELS.get(param, param.replace("_", " "))


def series_colors(n: int) -> list[Any]:
    """``n`` colours of matplotlib's ``tab10`` cycle, in order (repeating after 10)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]
