"""Score distributions: every candidate a pipeline scores with its stage scores
(`score_frame`), and histograms per leg and stage (`plot_score_distributions`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.viz.style import COLUMN_LABELS, finish_figure, new_figure, series_colors, tidy_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from memlab.eval.lab import LabCandidates
    from memlab.pipeline import Pipeline
    from memlab.retrieval.candidates import CandidateSet

__all__ = ["plot_score_distributions", "score_frame"]

# Score columns on which a threshold line (minScore) is drawn.
_THRESHOLD_COLUMNS = ("fused", "final", "score")


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
    from memlab.retrieval.candidates import CandidateSet

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
    fig, axes = new_figure(nrows, ncols, figsize=(3.3 * ncols + 0.6, 2.4 * nrows + 0.4))
    if side_by_side:
        axes = axes.T
    colors = series_colors(len(columns))
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
            tidy_axes(ax)
    return finish_figure(fig, path, title)
