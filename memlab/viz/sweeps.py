"""Plots of sweeps: metric curves against one parameter (`plot_sweep`) and heatmaps over
two (`plot_heatmap`), from a ``SweepResult`` or its tidy table."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memlab.viz.style import (
    figure_axes,
    finish_figure,
    metric_label,
    param_label,
    series_colors,
    tidy_axes,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from memlab.eval.sweep import SweepResult

__all__ = ["plot_heatmap", "plot_sweep"]

# Columns of a sweep table that are statistics, not swept parameters.
_STAT_COLUMNS = ("metric", "mean", "low", "high", "test_mean")


def _sweep_table(sweep: SweepResult | pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    if isinstance(sweep, pd.DataFrame):
        table = sweep
        params = []
        for c in table.columns:
            if c in _STAT_COLUMNS or str(c).endswith("_eff"):
                continue  # effective weights are derived from the weights
            # A column fixed by the parameters before it (a sweep's coupled
            # text_weight = 1 − vector_weight) is not an axis of its own.
            if params and table.groupby(params, dropna=False)[c].nunique(dropna=False).max() <= 1:
                continue
            params.append(c)
    else:
        table, params = sweep.table, list(sweep.params)
    missing = [c for c in ("metric", "mean") if c not in table.columns]
    if missing:
        raise ValueError(
            f"a sweep table needs columns metric, mean (+ low, high); missing {missing}"
        )
    if not params:
        raise ValueError("the sweep table has no parameter column")
    return table, params


def plot_sweep(
    sweep: SweepResult | pd.DataFrame,
    metric: str | Sequence[str] | None = None,
    *,
    x: str | None = None,
    hue: str | None = None,
    held_out: bool = True,
    reference: float | Mapping[str, float] | None = None,
    mark_best: bool = True,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Sweep curves: the mean of a metric against one parameter, with its bootstrap band.

    ``sweep``: a ``SweepResult`` or its ``table`` (columns: the swept parameters,
    ``metric``, ``mean``, ``low``, ``high``, ``test_mean``). One line per metric
    (``metric`` None → every metric in the table), or with ``hue`` (a second
    swept parameter; default for two-parameter sweeps) one line per value of
    ``hue`` for a single metric. The band spans ``[low, high]`` (the sweep's
    bootstrap CI of the mean over queries). With a train/test split the solid
    line is the train mean and ``held_out`` adds the held-out mean as a dashed
    line of the same colour. ``reference`` draws labelled vertical lines (a
    number, or ``{label: x}``); ``mark_best`` marks each line's maximum (for a
    ``SweepResult`` without ``hue``: the setting ``best()`` chose by its tie rule; else
    the first maximum in x order). Parameters beyond ``x``/``hue`` must be constant.
    Raises ``ValueError`` for unknown metrics or parameters.
    """
    table, params = _sweep_table(sweep)
    x = x or params[0]
    if x not in params:
        raise ValueError(f"x must be a swept parameter {params}, got {x!r}")
    if hue is None and len(params) > 1:
        hue = next(p for p in params if p != x)
    if hue is not None and (hue not in params or hue == x):
        raise ValueError(f"hue must be another swept parameter of {params}, got {hue!r}")
    others = [p for p in params if p not in (x, hue)]
    varying = [p for p in others if table[p].nunique() > 1]
    if varying:
        raise ValueError(f"parameters {varying} vary too: choose them as x/hue or filter the table")
    available = list(dict.fromkeys(table["metric"]))
    metrics = available if metric is None else [metric] if isinstance(metric, str) else list(metric)
    unknown = [m for m in metrics if m not in available]
    if unknown:
        raise ValueError(f"metrics {unknown} are not in the sweep; it has {available}")
    if hue is not None and len(metrics) > 1:
        metrics = metrics[:1] if metric is None else metrics
        if len(metrics) > 1:
            raise ValueError("with a hue parameter, plot one metric at a time")

    series: list[tuple[str, pd.DataFrame]] = []
    for m in metrics:
        d = table[table["metric"] == m]
        if hue is None:
            series.append((m, d))
        else:
            for v in dict.fromkeys(d[hue]):
                name = f"{hue} = {v:g}" if isinstance(v, int | float | np.number) else str(v)
                series.append((name, d[d[hue] == v]))

    fig, ax = figure_axes(ax, (6.4, 4.0))
    has_test = held_out and "test_mean" in table.columns and table["test_mean"].notna().any()
    for (label, d), color in zip(series, series_colors(len(series)), strict=True):
        d = d.sort_values(x)
        xs = d[x].to_numpy(dtype=float)
        ys = d["mean"].to_numpy(dtype=float)
        ax.plot(
            xs,
            ys,
            color=color,
            marker="o",
            markersize=3,
            label=f"{label} (train)" if has_test else label,
        )
        if {"low", "high"} <= set(d.columns):
            ax.fill_between(
                xs,
                d["low"].to_numpy(float),
                d["high"].to_numpy(float),
                color=color,
                alpha=0.18,
                linewidth=0,
            )
        if has_test:
            ax.plot(
                xs,
                d["test_mean"].to_numpy(float),
                color=color,
                linestyle="--",
                label=f"{label} (held-out)",
            )
        if mark_best and len(ys):
            i = int(np.nanargmax(ys))
            if hue is None and not isinstance(sweep, pd.DataFrame):
                # The sweep's own choice: on a plateau, its tie rule, not the first point.
                chosen = sweep.best(label)["setting"][x]
                i = int(np.flatnonzero(np.isclose(xs, float(chosen)))[0])
            ax.plot([xs[i]], [ys[i]], marker="*", markersize=12, color=color, linestyle="none")
    refs = {"reference": reference} if isinstance(reference, int | float) else dict(reference or {})
    for label, value in refs.items():
        ax.axvline(float(value), color="0.35", linestyle=":", linewidth=1)
        ax.annotate(
            f"{label} {value:g}",
            (float(value), 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            va="top",
            fontsize=8,
            color="0.3",
        )
    ax.set_xlabel(param_label(x))
    ylabel = metric_label(metrics[0]) if len(metrics) == 1 else "metric value"
    ax.set_ylabel(f"{ylabel}\nmean over questions, band = bootstrap CI")
    tidy_axes(ax)
    if len(series) > 3:
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif len(series) > 1 or has_test:
        ax.legend(frameon=False, fontsize=8)
    return finish_figure(fig, path, title)


def plot_heatmap(
    sweep: SweepResult | pd.DataFrame,
    x: str | None = None,
    y: str | None = None,
    metric: str | None = None,
    *,
    value: str = "mean",
    annotate: bool = True,
    fmt: str = ".2f",
    cmap: str = "viridis",
    mark_best: bool = True,
    reference: Mapping[str, float] | None = None,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Figure:
    """A heatmap of one metric over two swept parameters (a two-parameter sweep table).

    Cell (x_i, y_j) holds ``value`` (``"mean"``, ``"test_mean"``, ``"low"`` or
    ``"high"``) of ``metric`` (default: the table's first) at that setting;
    grid points missing from the table are blank. ``mark_best`` outlines the
    highest cell (first in row-major order on ties); ``reference``
    (``{x_param: value, y_param: value}``) outlines a named setting (dashed white),
    e.g. OpenClaw's defaults, when both values are on the grid. ``x``/``y``
    default to the first two swept parameters; other parameters must be
    constant. Raises ``ValueError`` otherwise.
    """
    table, params = _sweep_table(sweep)
    if len(params) < 2:
        raise ValueError(f"a heatmap needs a sweep over two parameters, got {params}")
    x = x or params[0]
    y = y or next(p for p in params if p != x)
    for name, p in (("x", x), ("y", y)):
        if p not in params:
            raise ValueError(f"{name} must be a swept parameter of {params}, got {p!r}")
    if x == y:
        raise ValueError("x and y must differ")
    varying = [p for p in params if p not in (x, y) and table[p].nunique() > 1]
    if varying:
        raise ValueError(f"parameters {varying} vary too: filter the table first")
    metric = metric or str(table["metric"].iloc[0])
    d = table[table["metric"] == metric]
    if d.empty:
        raise ValueError(f"metric {metric!r} is not in the sweep")
    if value not in d.columns:
        raise ValueError(f"value must be a column of the sweep table, got {value!r}")
    grid = (
        d.pivot_table(index=y, columns=x, values=value, aggfunc="mean")
        .sort_index()
        .sort_index(axis=1)
    )
    z = grid.to_numpy(dtype=float)
    xs, ys = list(grid.columns), list(grid.index)

    fig, ax = figure_axes(ax, (1.0 + 0.55 * len(xs) + 1.5, 1.0 + 0.42 * len(ys) + 0.8))
    im = ax.imshow(np.ma.masked_invalid(z), origin="lower", aspect="auto", cmap=cmap)
    ax.set_xticks(
        range(len(xs)),
        [f"{v:g}" if isinstance(v, float) else str(v) for v in xs],
        rotation=90 if len(xs) > 12 else 0,
    )
    ax.set_yticks(range(len(ys)), [f"{v:g}" if isinstance(v, float) else str(v) for v in ys])
    ax.set_xlabel(param_label(x))
    ax.set_ylabel(param_label(y))
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    cbar = fig.colorbar(im, ax=ax, shrink=0.9)
    cbar.set_label(metric_label(metric) + ("" if value == "mean" else f" [{value}]"))
    cbar.outline.set_visible(False)
    if annotate and z.size <= 400:
        finite = z[np.isfinite(z)]
        mid = (finite.min() + finite.max()) / 2 if finite.size else 0.0
        for j in range(z.shape[0]):
            for i in range(z.shape[1]):
                if np.isfinite(z[j, i]):
                    ax.text(
                        i,
                        j,
                        format(z[j, i], fmt),
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="black" if z[j, i] > mid else "white",
                    )
    from matplotlib.patches import Rectangle

    if mark_best and np.isfinite(z).any():
        j, i = np.unravel_index(int(np.nanargmax(z)), z.shape)
        ax.add_patch(Rectangle((i - 0.5, j - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
    if reference:
        rx, ry = reference.get(x), reference.get(y)
        if rx in xs and ry in ys:
            ax.add_patch(
                Rectangle(
                    (xs.index(rx) - 0.5, ys.index(ry) - 0.5),
                    1,
                    1,
                    fill=False,
                    edgecolor="white",
                    linestyle="--",
                    linewidth=1.5,
                )
            )
    return finish_figure(fig, path, title)
