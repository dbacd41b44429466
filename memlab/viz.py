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
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.eval.relevance import relevant_results

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from memlab.candidates import CandidateSet
    from memlab.eval.experiment import ExperimentResult
    from memlab.eval.lab import LabCandidates
    from memlab.eval.sweep import SweepResult
    from memlab.pipeline import Pipeline

__all__ = [
    "COLUMN_LABELS",
    "PARAM_LABELS",
    "mark_relevant",
    "metric_label",
    "plot_by_category",
    "plot_heatmap",
    "plot_rank_changes",
    "plot_recall_at_k",
    "plot_score_distributions",
    "plot_sweep",
    "score_frame",
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

_STAT_COLUMNS = ("metric", "mean", "low", "high", "test_mean")
_SAVE_FORMATS = (".png", ".svg", ".pdf")
_THRESHOLD_COLUMNS = ("fused", "final", "score")


# --------------------------------------------------------------------------- plumbing
def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _pyplot() -> Any:
    """pyplot, with the Agg backend selected first when nothing could show a window."""
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


def _figure(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float]) -> tuple[Figure, Any]:
    plt = _pyplot()
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    # The caller owns the figure: closing it here keeps pyplot from showing it a
    # second time at the end of a notebook cell.
    plt.close(fig)
    return fig, axes


def _target(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    fig, axes = _figure(figsize=figsize)
    return fig, axes[0, 0]


def _tidy(ax: Axes, grid: str = "y") -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if grid:
        ax.grid(axis=grid, color="0.9", linewidth=0.8)
        ax.set_axisbelow(True)


def _finish(fig: Figure, path: str | os.PathLike[str] | None, title: str | None = None) -> Figure:
    if title:
        fig.suptitle(title)
    if path is not None:
        p = Path(path)
        if p.suffix.lower() not in _SAVE_FORMATS:
            raise ValueError(f"path must end in one of {', '.join(_SAVE_FORMATS)}, got {p.name!r}")
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


def _param_label(param: str) -> str:
    return PARAM_LABELS.get(param, param.replace("_", " "))


def _colors(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


# --------------------------------------------------------------------------- sweeps
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

    fig, ax = _target(ax, (6.4, 4.0))
    has_test = held_out and "test_mean" in table.columns and table["test_mean"].notna().any()
    for (label, d), color in zip(series, _colors(len(series)), strict=True):
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
    ax.set_xlabel(_param_label(x))
    ylabel = metric_label(metrics[0]) if len(metrics) == 1 else "metric value"
    ax.set_ylabel(f"{ylabel}\nmean over questions, band = bootstrap CI")
    _tidy(ax)
    if len(series) > 3:
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif len(series) > 1 or has_test:
        ax.legend(frameon=False, fontsize=8)
    return _finish(fig, path, title)


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

    fig, ax = _target(ax, (1.0 + 0.55 * len(xs) + 1.5, 1.0 + 0.42 * len(ys) + 0.8))
    im = ax.imshow(np.ma.masked_invalid(z), origin="lower", aspect="auto", cmap=cmap)
    ax.set_xticks(
        range(len(xs)),
        [f"{v:g}" if isinstance(v, float) else str(v) for v in xs],
        rotation=90 if len(xs) > 12 else 0,
    )
    ax.set_yticks(range(len(ys)), [f"{v:g}" if isinstance(v, float) else str(v) for v in ys])
    ax.set_xlabel(_param_label(x))
    ax.set_ylabel(_param_label(y))
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
    return _finish(fig, path, title)


# --------------------------------------------------------------------------- categories
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
    fig, ax = _target(ax, (max(6.0, 0.5 + n_g * (0.35 + 0.16 * n_s)), 4.0))
    width = 0.8 / max(n_s, 1)
    xs = np.arange(n_g)
    for i, (name, color) in enumerate(zip(names, _colors(n_s), strict=True)):
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
    _tidy(ax)
    ax.legend(
        frameon=False, fontsize=8, ncol=min(n_s, 6), loc="upper left", bbox_to_anchor=(0, 1.16)
    )
    return _finish(fig, path, title)


# --------------------------------------------------------------------------- score distributions
def score_frame(cs: CandidateSet | LabCandidates, pipeline: Pipeline) -> pd.DataFrame:
    """Every candidate a pipeline scores, with its stage scores (before selection).

    One row per (query, candidate) that is valid for ``pipeline`` (within its
    depth and scorable by its fusion): ``qid, column, vector_score`` (cosine),
    ``text_score`` (the keyword leg's input: |r|/(1+|r|) for ``bm25map``),
    ``vector_norm, text_norm, fused, decay, final``. Absent leg scores are NaN.
    """
    c = getattr(cs, "cs", cs)
    st = pipeline.scores(c)
    qi, ci = np.nonzero(st["valid"])
    return pd.DataFrame(
        {
            "qid": np.asarray(c.qids, dtype=object)[qi],
            "column": ci,
            "vector_score": st["vec_in"][qi, ci],
            "text_score": st["text_in"][qi, ci],
            "vector_norm": st["vec_norm"][qi, ci],
            "text_norm": st["text_norm"][qi, ci],
            "fused": st["fused"][qi, ci],
            "decay": st["decay"][qi, ci],
            "final": st["final"][qi, ci],
        }
    )


def _distribution_series(
    data: Any, pipelines: Sequence[Pipeline] | None
) -> tuple[list[tuple[str, pd.DataFrame]], str]:
    from memlab.candidates import CandidateSet

    is_cands = isinstance(data, CandidateSet) or hasattr(data, "cs")
    if is_cands:
        if pipelines:
            return [(p.name, score_frame(data, p)) for p in pipelines], "candidates"
        from memlab.pipeline import Pipeline

        # Raw legs: a neutral pipeline that keeps every candidate of both legs.
        c = getattr(data, "cs", data)
        neutral = Pipeline(
            name="candidates",
            max_results=max(1, c.depth),
            candidate_multiplier=1.0,
            max_candidates=max(1, c.depth),
        )
        return [("candidates", score_frame(c, neutral))], "candidates"
    if pipelines:
        raise ValueError("pipelines= needs a CandidateSet or LabCandidates to score")
    if isinstance(data, pd.DataFrame):
        return [
            (
                str(data["system"].iloc[0])
                if "system" in data.columns and len(data)
                else "results",
                data,
            )
        ], "results"
    if isinstance(data, Mapping):
        return [(str(k), v) for k, v in data.items()], "results"
    raise TypeError(
        f"expected a results DataFrame, a mapping of them, or candidates; got {type(data).__name__}"
    )


def plot_score_distributions(
    data: pd.DataFrame | Mapping[str, pd.DataFrame] | CandidateSet | LabCandidates,
    *,
    pipelines: Sequence[Pipeline] | None = None,
    columns: Sequence[str] | None = None,
    threshold: float | Mapping[str, float] | None = None,
    bins: int = 40,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Histograms of scores per leg and stage: one row per series, one panel per column.

    ``data``: a ``Pipeline.run`` results frame, a mapping ``{label: frame}``, or
    a ``CandidateSet``/``LabCandidates`` — then every candidate is counted
    (``score_frame``), scored by each of ``pipelines`` (one row each) or, without
    pipelines, as the raw legs. ``columns`` default: ``vector_score,
    text_score, score`` for results, ``vector_score, text_score`` for raw
    candidates, ``fused`` for pipelines. ``threshold`` (a number, or
    ``{label: number}``; with pipelines, default each one's ``min_score``)
    draws a line on ``fused``/``final``/``score`` panels, annotated with the
    share of values at or above it. NaN values (a leg that missed the chunk)
    are left out and counted in the panel's legend text. Raises ``ValueError``
    for a column missing from the data.
    """
    series, unit = _distribution_series(data, pipelines)
    if columns is None:
        if unit == "results":
            columns = ["vector_score", "text_score", "score"]
        else:
            columns = ["fused"] if pipelines else ["vector_score", "text_score"]
    columns = list(columns)
    for label, frame in series:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"{label}: no column(s) {missing}; it has {list(frame.columns)}")
    if threshold is None and pipelines:
        threshold = {p.name: p.min_score for p in pipelines}
    # One column of several series reads better side by side than stacked.
    side_by_side = len(columns) == 1 and len(series) > 1
    nrows, ncols = (1, len(series)) if side_by_side else (len(series), len(columns))
    fig, axes = _figure(nrows, ncols, figsize=(3.3 * ncols + 0.6, 2.4 * nrows + 0.4))
    if side_by_side:
        axes = axes.T
    colors = _colors(len(columns))
    for r, (label, frame) in enumerate(series):
        for c, col in enumerate(columns):
            ax = axes[r, c]
            v = frame[col].to_numpy(dtype=float)
            finite = v[np.isfinite(v)]
            ax.hist(finite, bins=bins, color=colors[c], alpha=0.85)
            absent = int(v.size - finite.size)
            note = f"{label}: n = {finite.size}" + (f", {absent} absent" if absent else "")
            ax.set_title(note, fontsize=8, loc="left")
            ax.set_xlabel(COLUMN_LABELS.get(col, col), fontsize=8)
            if c == 0 and (r == 0 or not side_by_side):
                ax.set_ylabel(unit)
            t = threshold.get(label) if isinstance(threshold, Mapping) else threshold
            if t is not None and col in _THRESHOLD_COLUMNS:
                share = float((finite >= t).mean()) if finite.size else 0.0
                ax.axvline(float(t), color="crimson", linestyle="--", linewidth=1)
                ax.annotate(
                    f"minScore {t:g}: {share:.1%} pass",
                    (float(t), 1.0),
                    xycoords=("data", "axes fraction"),
                    xytext=(3, -12),
                    textcoords="offset points",
                    fontsize=8,
                    color="crimson",
                )
            _tidy(ax)
    return _finish(fig, path, title)


# --------------------------------------------------------------------------- rank changes
def mark_relevant(run: pd.DataFrame, evidence: pd.DataFrame) -> pd.DataFrame:
    """A copy of a results frame with a ``relevant`` column.

    A result is relevant when an evidence span of the same ``qid`` and ``path``
    overlaps its line range: ``start_line <= span.end_line and span.start_line
    <= end_line`` (spans with ``grade < 1`` do not count). Works for any chunker
    and for multi-workspace datasets, whose qids are unique across groups. The
    judgement is ``memlab.eval.relevance.relevant_results`` (the rule every metric
    uses); a missing column raises ``ValueError``.
    """
    relevant = relevant_results(run, evidence)
    out = run.copy()
    out["relevant"] = relevant.tolist()
    return out


def _item_labels(frame: pd.DataFrame, label: str | Callable[[Any], str]) -> list[str]:
    if callable(label):
        return [str(label(r)) for r in frame.itertuples(index=False)]
    if label == "where":
        return [
            f"{p}#L{s}-L{e}" if s != e else f"{p}#L{s}"
            for p, s, e in zip(frame["path"], frame["start_line"], frame["end_line"], strict=True)
        ]
    return [str(v) for v in frame[label]]


def plot_rank_changes(
    run_a: pd.DataFrame,
    run_b: pd.DataFrame,
    qid: str | None = None,
    *,
    names: tuple[str, str] | None = None,
    k: int = 10,
    label: str | Callable[[Any], str] = "where",
    relevant: Iterable[str] | None = None,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Figure:
    """A bump chart of one question's top-k under two systems.

    Left column: system A's ranks 1..k, right column: system B's; a line joins
    the positions of each result (by ``docno``) in both. A result in only one
    top-k runs to the row "not in top k" below the last rank, dashed. Relevant
    results — the ``relevant`` docnos, or the frames' ``relevant`` column (see
    ``mark_relevant``) — are drawn thick in green, the rest thin in grey.
    ``qid`` defaults to the first qid of ``run_a``; ``names`` to the frames'
    ``system`` column. Labels: ``"where"`` (path#Lstart-Lend), a column name,
    or a function of a row. One line per distinct result of the two top-ks.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if qid is None:
        if run_a.empty:
            raise ValueError("run_a is empty: give qid=")
        qid = str(run_a["qid"].iloc[0])

    def top(run: pd.DataFrame) -> pd.DataFrame:
        d = run[run["qid"].astype(str) == str(qid)].sort_values("rank").head(k)
        return d.reset_index(drop=True)

    a, b = top(run_a), top(run_b)
    if names is None:
        names = tuple(  # type: ignore[assignment]
            str(r["system"].iloc[0]) if "system" in r.columns and len(r) else default
            for r, default in ((run_a, "A"), (run_b, "B"))
        )
    rel: set[str] = set(map(str, relevant)) if relevant is not None else set()
    for d in (a, b):
        if relevant is None and "relevant" in d.columns:
            rel |= set(d.loc[d["relevant"].astype(bool), "docno"].astype(str))
    pos_a = {str(dn): i for i, dn in enumerate(a["docno"])}
    pos_b = {str(dn): i for i, dn in enumerate(b["docno"])}
    labels = dict(zip(a["docno"].astype(str), _item_labels(a, label), strict=True))
    labels.update(zip(b["docno"].astype(str), _item_labels(b, label), strict=True))
    out_row = k + 0.6
    n = max(len(a), len(b), 1)
    fig, ax = _target(ax, (9.0, 0.34 * (n + 2) + 0.8))
    items = list(dict.fromkeys([*pos_a, *pos_b]))
    for dn in items:
        ya = pos_a.get(dn, out_row)
        yb = pos_b.get(dn, out_row)
        is_rel = dn in rel
        ax.plot(
            [0, 1],
            [ya, yb],
            color="forestgreen" if is_rel else "0.6",
            linewidth=2.4 if is_rel else 1.0,
            linestyle="-" if dn in pos_a and dn in pos_b else "--",
            marker="o",
            markersize=4,
        )
    for dn, i in pos_a.items():
        ax.annotate(
            f"{labels[dn]}  {i + 1}",
            (0, i),
            xytext=(-6, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=7,
            color="forestgreen" if dn in rel else "0.25",
        )
    for dn, i in pos_b.items():
        ax.annotate(
            f"{i + 1}  {labels[dn]}",
            (1, i),
            xytext=(6, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=7,
            color="forestgreen" if dn in rel else "0.25",
        )
    ax.text(0.5, out_row, f"not in top {k}", ha="center", va="center", fontsize=8, color="0.4")
    # Room for the labels inside the axes, so saving never clips them.
    ax.set_xlim(-1.3, 2.3)
    ax.set_ylim(out_row + 0.6, -0.7)
    ax.set_yticks([])
    ax.set_xticks([0, 1], list(names), fontsize=9)
    ax.xaxis.tick_top()
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    return _finish(fig, path, title)


# --------------------------------------------------------------------------- recall at k
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
    fig, ax = _target(ax, (6.0, 4.0))
    rows = list(table.index)
    for name, color in zip(rows, _colors(len(rows) + len(reference or {})), strict=False):
        ax.plot(
            ks,
            table.loc[name].to_numpy(float),
            marker="o",
            markersize=4,
            color=color,
            label=str(name),
        )
    ref_colors = _colors(len(rows) + len(reference or {}))[len(rows) :]
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
    _tidy(ax)
    ax.legend(frameon=False, fontsize=8)
    return _finish(fig, path, title)
