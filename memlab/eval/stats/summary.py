"""The statistics of a set of questions, and the whole dataset's as ``memlab stats`` prints
them (formulas: ``memlab.eval.stats``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["format_stats", "mean_of", "shares", "summarise"]


def mean_of(values: Any) -> float | None:
    """The mean of the finite values, or None when there is none (JSON's null)."""
    a = np.asarray(values, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.mean()) if a.size else None


def shares(values: Any) -> dict[str, float]:
    """Each distinct value's share of ``values``, in order of first appearance."""
    s = pd.Series(list(values), dtype=object)
    if s.empty:
        return {}
    counts = s.value_counts(sort=False)
    return {str(k): float(v) / len(s) for k, v in counts.items()}


def summarise(rows: pd.DataFrame) -> dict[str, Any]:
    """One set of questions' statistics (rows of ``measure_queries``): ``queries``, the
    means ``term_overlap``, ``distractor_overlap``, ``sim_evidence``, ``sim_distractor``,
    ``span_lines``, ``span_tokens``, ``spans_per_query``; ``distractor_wins`` (the share of
    measured questions whose best other unit holds at least as many of their terms as their
    evidence); ``forms`` (each query form's share of the questions with evidence) and ``excluded`` (questions left out of
    the term statistics, by reason)."""
    both = rows.dropna(subset=["term_overlap", "distractor_overlap"])
    wins = float((both["distractor_overlap"] >= both["term_overlap"]).mean()) if len(both) else None
    excluded = rows["excluded"][rows["excluded"] != ""].value_counts()
    scored = rows[rows["spans"] > 0]
    return {
        "queries": len(rows),
        "term_overlap": mean_of(rows["term_overlap"]),
        "distractor_overlap": mean_of(rows["distractor_overlap"]),
        "distractor_wins": wins,
        "sim_evidence": mean_of(rows["sim_evidence"]),
        "sim_distractor": mean_of(rows["sim_distractor"]),
        "span_lines": mean_of(rows["span_lines"]),
        "span_tokens": mean_of(rows["span_tokens"]),
        "spans_per_query": mean_of(rows["spans"]),
        "forms": shares(scored["form"]),
        "excluded": {str(k): int(v) for k, v in excluded.items()},
    }


_COLUMNS = (
    ("n", "queries", "{:d}"),
    ("overlap", "term_overlap", "{:.3f}"),
    ("distractor", "distractor_overlap", "{:.3f}"),
    ("d>=e", "distractor_wins", "{:.2f}"),
    ("sim ev", "sim_evidence", "{:.3f}"),
    ("sim dis", "sim_distractor", "{:.3f}"),
    ("span lines", "span_lines", "{:.1f}"),
    ("span tokens", "span_tokens", "{:.1f}"),
    ("units", "units", "{:.0f}"),
)


def _cell(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return fmt.format(value)


def format_stats(stats: dict[str, Any]) -> str:
    """The text ``memlab stats`` prints: one table, the whole dataset then each category and
    each group, and under it the query forms, the style and what was left out."""
    lines = [
        f"{stats['dataset']}: {stats['queries']} questions, {stats['groups']} group{'' if stats['groups'] == 1 else 's'}, level"
        f" {stats['level']}, embeddings {stats['embedder'] or 'none'}"
    ]
    table = [("all", {**stats, "units": stats["units_per_workspace"]})]
    table += [(f"category {k}", v) for k, v in stats["by_category"].items()]
    table += [(f"group {k}", v) for k, v in stats["by_group"].items()]
    header = ["", *(c[0] for c in _COLUMNS)]
    body = [[name, *(_cell(s.get(key), fmt) for _, key, fmt in _COLUMNS)] for name, s in table]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    for r in [header, *body]:
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    forms = ", ".join(f"{k} {v:.0%}" for k, v in stats["forms"].items())
    lines.append(f"query forms: {forms}")
    lines.append(
        f"style: {stats['style']} ({stats['transcript_share']:.0%} of units are transcript"
        f" lines); units per workspace {stats['units_per_workspace']:.0f}"
    )
    if stats["excluded"]:
        left = ", ".join(f"{k} {v}" for k, v in stats["excluded"].items())
        lines.append(f"left out of the term statistics: {left}")
    lines.append(
        "overlap: share of a question's content terms in its evidence; distractor: the same"
        " for its best other unit (d>=e: share of questions where that is at least the"
        " evidence's); sim: cosine of the question to its best evidence line and best other"
        " line (docs/realism.md)"
    )
    return "\n".join(lines)
