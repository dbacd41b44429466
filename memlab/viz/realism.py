"""The realism curve as a picture: the tuned vector weight's plateau against term overlap,
the synthetic curve of each style and every real group placed on it
(``memlab.eval.realism``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memlab.viz.style import figure_axes, finish_figure, series_colors, tidy_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from memlab.eval.realism import Point

__all__ = ["plot_realism"]


def plot_realism(
    curve: Sequence[Point],
    groups: Sequence[Point] = (),
    *,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Vector weight (y) against term overlap (x): per style of ``curve``, the plateau as a
    band and its midpoint as a line (the curve's prediction); each real group of ``groups``
    as a vertical bar over its own plateau with a dot at its best weight, labelled with its
    name. Saved to ``path`` when given (``finish_figure``)."""
    fig, ax = figure_axes(ax, (8.0, 4.8))
    styles = list(dict.fromkeys(p.style for p in curve))
    colors = dict(zip(styles, series_colors(max(len(styles), 2)), strict=False))
    for style in styles:
        pts = sorted((p for p in curve if p.style == style), key=lambda p: p.overlap)
        xs = [p.overlap for p in pts]
        c = colors[style]
        ax.fill_between(xs, [p.low for p in pts], [p.high for p in pts], color=c, alpha=0.15)
        ax.plot(xs, [p.middle for p in pts], "-o", color=c, label=f"synthetic, {style}")
    for g in groups:
        ax.vlines(g.overlap, g.low, g.high, color="0.35", linewidth=2)
        ax.plot(g.overlap, g.best, "s", color="0.2", markersize=4)
        ax.annotate(
            g.name.split(":")[-1],
            (g.overlap, g.high),
            fontsize=6,
            rotation=60,
            xytext=(0, 3),
            textcoords="offset points",
        )
    if groups:
        ax.plot([], [], "s-", color="0.2", label="real groups (plateau, best weight)")
    ax.set_xlabel("term overlap of questions with their evidence")
    ax.set_ylabel("vector weight of wsum (text = 1 − it)")
    ax.set_ylim(-0.03, 1.03)
    tidy_axes(ax, "both")
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return finish_figure(fig, path, title)
