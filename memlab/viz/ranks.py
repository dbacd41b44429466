"""Rank changes: which results are relevant (`mark_relevant`) and how one question's
top k moves between two systems (`plot_rank_changes`, a bump chart)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

from memlab.eval.relevance import relevant_results
from memlab.viz.style import figure_axes, finish_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["mark_relevant", "plot_rank_changes"]


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
    fig, ax = figure_axes(ax, (9.0, 0.34 * (n + 2) + 0.8))
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
    return finish_figure(fig, path, title)
