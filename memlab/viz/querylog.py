"""An agent's query log at a glance (`plot_query_log`): ``memory_search`` calls per day and
the scores of the hits it was shown, from ``memlab harvest``'s report."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.viz.style import finish_figure, new_figure, series_colors, tidy_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_query_log"]


def _health(report: Mapping[str, Any] | str | os.PathLike[str]) -> Mapping[str, Any]:
    if isinstance(report, str | os.PathLike):
        p = Path(report)
        report = json.loads((p / "report.json" if p.is_dir() else p).read_text())
    return report.get("health", report)  # report.json, or its "health" part


def plot_query_log(
    report: Mapping[str, Any] | str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
) -> Figure:
    """Two panels: calls per day (bars on a date axis, days without a call left empty;
    the mean over days with a call as a dashed line) and the histogram of the shown hits'
    scores (its bins, with the median marked), with the error, no-result and re-asked
    shares in the second panel's legend.

    ``report``: harvest's report (``report.json``'s content, its ``health`` part, the file
    or the harvest folder holding it). A log without calls or scores draws empty panels.
    """
    h = _health(report)
    fig, axes = new_figure(1, 2, figsize=(11.0, 3.8))
    ax_days, ax_scores = axes[0]
    c_calls, c_scores = series_colors(2)
    by_day = h["calls_per_day"]["by_day"]
    days = [date.fromisoformat(d) for d in by_day]
    ax_days.bar(days, list(by_day.values()), width=0.8, color=c_calls)
    mean = h["calls_per_day"]["mean"]
    if mean is not None:
        ax_days.axhline(mean, color="0.3", linestyle="--", linewidth=1, label=f"mean {mean:.1f}")
        ax_days.legend(frameon=False, fontsize=8)
    ax_days.set_xlabel("day (UTC)")
    ax_days.set_ylabel("memory_search calls")
    for label in ax_days.get_xticklabels():
        label.set_rotation(30)
        label.set_horizontalalignment("right")
    tidy_axes(ax_days)

    dist = h["shown_scores"]
    edges = np.asarray(dist["histogram"]["edges"], dtype=float)
    counts = np.asarray(dist["histogram"]["counts"], dtype=float)
    ax_scores.bar(
        edges[:-1], counts, width=np.diff(edges), align="edge", color=c_scores, edgecolor="white"
    )
    if dist["median"] is not None:
        ax_scores.axvline(
            dist["median"], color="0.3", linewidth=1, label=f"median {dist['median']:.2f}"
        )

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.0f}%"

    shares = (
        f"errored {pct(h['error_share'])}, no result {pct(h['no_result_share'])},"
        f" re-asked {pct(h['reasked_share'])}"
    )
    ax_scores.plot([], [], " ", label=shares)
    ax_scores.legend(frameon=False, fontsize=8, loc="upper left")
    ax_scores.set_xlim(float(edges[0]), float(edges[-1]))
    ax_scores.set_xlabel(f"score of a hit shown (n={dist['n']})")
    ax_scores.set_ylabel("hits")
    tidy_axes(ax_scores)
    return finish_figure(fig, path, title)
