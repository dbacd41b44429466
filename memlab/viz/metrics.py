"""Plots of metric tables: bars per question category (`plot_by_category`) and a
metric at several cutoffs k (`plot_recall_at_k`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.viz.style import figure_axes, finish_figure, metric_label, series_colors, tidy_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from memlab.eval.experiment import ExperimentResult

__all__ = ["plot_by_category", "plot_recall_at_k"]


def plot_by_category(
    result: ExperimentResult | pd.DataFrame,
    metric: str | None = None,
    path: str | os.PathLike[str] | None = None,
    *,
    systems: Sequence[str] | None = None,
    overall: bool = True,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """Grouped bars: one group per question category, one bar per system.

    ``result``: an ``ExperimentResult`` (bars = ``by_category(metric)``; the
    extra group ``all`` = each system's mean over all scored questions, and
    each group's tick label carries its question count), or a DataFrame of
    categories × systems (plotted as given, no ``all`` group). ``systems``
    picks and orders the bars. The y axis starts at 0 and ends at 1 when every
    value lies in [0, 1]. Raises ``ValueError`` for an unknown metric or system.
    """
    counts: dict[str, int] = {}
    if isinstance(result, pd.DataFrame):
        table = result
        m = metric or ""
    else:
        m = metric or result.metrics[0]
        if m not in result.metrics:
            raise ValueError(f"metric {m!r} was not measured; the experiment has {result.metrics}")
        table = result.by_category(m)
        pq = result.per_query[result.per_query["metric"] == m]
        counts = pq[pq["system"] == table.columns[0]].groupby("category")["qid"].count().to_dict()
        if overall:
            table = table.copy()
            all_row = pq.groupby("system")["value"].mean()
            table.loc["all"] = all_row.reindex(table.columns)
            counts["all"] = int(sum(counts.values()))
    names = list(systems) if systems is not None else list(table.columns)
    unknown = [s for s in names if s not in table.columns]
    if unknown:
        raise ValueError(f"systems {unknown} are not in the result; it has {list(table.columns)}")
    table = table[names]
    groups = [str(c) for c in table.index]
    n_g, n_s = len(groups), len(names)
    fig, ax = figure_axes(ax, (max(6.0, 0.5 + n_g * (0.35 + 0.16 * n_s)), 4.0))
    width = 0.8 / max(n_s, 1)
    xs = np.arange(n_g)
    for i, (name, color) in enumerate(zip(names, series_colors(n_s), strict=True)):
        ax.bar(
            xs - 0.4 + width * (i + 0.5),
            table[name].to_numpy(float),
            width,
            label=name,
            color=color,
        )
    labels = [f"{g}\n(n={counts[g]})" if g in counts else g for g in groups]
    ax.set_xticks(xs, labels, fontsize=8)
    ax.set_xlabel("question category")
    ax.set_ylabel(f"{metric_label(m)}\nmean over questions" if m else "value")
    vals = table.to_numpy(float)
    if np.isfinite(vals).any() and np.nanmin(vals) >= 0 and np.nanmax(vals) <= 1:
        ax.set_ylim(0, 1)
    if overall and "all" in groups:
        ax.axvline(groups.index("all") - 0.5, color="0.75", linewidth=0.8)
    tidy_axes(ax)
    ax.legend(
        frameon=False, fontsize=8, ncol=min(n_s, 6), loc="upper left", bbox_to_anchor=(0, 1.16)
    )
    return finish_figure(fig, path, title)


def plot_recall_at_k(
    table: pd.DataFrame,
    *,
    reference: Mapping[str, Mapping[int, float]] | None = None,
    metric: str = "recall",
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Metric at several cutoffs: one line per system (rows of ``table``) over k.

    ``table``: index = systems, columns = cutoffs k (ints, or names like
    ``"recall@5"`` whose number after ``@`` is k), values in [0, 1].
    ``reference``: published rows ``{label: {k: value}}`` drawn as hollow
    markers on a dotted line (e.g. the paper's DRAGON retriever). The x axis is
    logarithmic in k, since cutoffs usually double.
    """

    def as_k(c: Any) -> int:
        if isinstance(c, int | np.integer):
            return int(c)
        text = str(c)
        return int(text.rsplit("@", 1)[-1])

    ks = [as_k(c) for c in table.columns]
    fig, ax = figure_axes(ax, (6.0, 4.0))
    rows = list(table.index)
    for name, color in zip(rows, series_colors(len(rows) + len(reference or {})), strict=False):
        ax.plot(
            ks,
            table.loc[name].to_numpy(float),
            marker="o",
            markersize=4,
            color=color,
            label=str(name),
        )
    ref_colors = series_colors(len(rows) + len(reference or {}))[len(rows) :]
    for (label, values), color in zip((reference or {}).items(), ref_colors, strict=True):
        kk = sorted(values)
        ax.plot(
            kk,
            [values[x] for x in kk],
            linestyle=":",
            marker="o",
            markerfacecolor="white",
            color=color,
            label=label,
        )
    ax.set_xscale("log")
    allk = sorted(set(ks) | {x for v in (reference or {}).values() for x in v})
    ax.set_xticks(allk, [str(x) for x in allk])
    ax.minorticks_off()
    ax.set_xlabel("k (results read)")
    ax.set_ylabel(metric_label(f"{metric}@k"))
    ax.set_ylim(0, 1)
    tidy_axes(ax)
    ax.legend(frameon=False, fontsize=8)
    return finish_figure(fig, path, title)
