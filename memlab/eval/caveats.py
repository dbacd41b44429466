"""What a table needs said beside it to be read right: rows whose labels are mostly
missing (judged@k below 0.9), and metrics that cannot tell the systems apart because they
are at their ceiling (k at or above the units a question can see).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.eval.judged import JUDGED_WARNING, judged_columns
from memlab.eval.metrics import parse_metric

if TYPE_CHECKING:
    from memlab.eval.experiment import ExperimentResult

__all__ = ["CEILING_TOLERANCE", "ceiling_warnings", "judged_warnings", "visible_units"]

# A mean this close to 1 is at the ceiling (float sums of 1.0 are exact; this is margin).
CEILING_TOLERANCE = 1e-9
# Metrics whose best value is not 1 whatever the evidence (precision@k: #relevant / k).
_NO_FIXED_CEILING = ("precision",)


def judged_warnings(res: ExperimentResult) -> list[str]:
    """One warning naming the systems whose judged@k (``memlab.eval.judged``) is below
    ``JUDGED_WARNING`` (0.9), saying what that does to their scores; [] when the table has
    no judged@k column or every system is above."""
    cols = judged_columns(res.table)
    if not cols:
        return []
    col = cols[0]
    low = res.table[col][res.table[col] < JUDGED_WARNING].dropna()
    if low.empty:
        return []
    names = ", ".join(f"{n} {v:.2f}" for n, v in low.items())
    return [
        f"{col} below {JUDGED_WARNING}: {names}. A result nobody judged counts as not"
        " relevant, so these rows are lower bounds (a system that finds what the deployed"
        " ranker never showed is scored down): judge the pool with memlab judge, then"
        " compare again"
    ]


def visible_units(lab: Any) -> np.ndarray:
    """The units each question of ``lab``'s dataset can see (int [Q], dataset order): its
    workspace group's units in the lab's index (unit and memory-file rule of the lab),
    those older than the question's cut-off when the lab answers as of it
    (``memlab.store.asof.visible_rows``)."""
    from memlab.store.asof import unit_times, visible_rows

    q = lab.dataset.queries
    cut = lab.cutoffs()
    times = {g: unit_times(lab.index(g).table) for g in lab.dataset.workspaces}
    out = np.empty(len(q), dtype=np.int64)
    for i, group in enumerate(q["group"]):
        c = float("nan") if cut is None else float(cut[i])
        out[i] = int(visible_rows(times[group], c).sum())
    return out


def ceiling_warnings(res: ExperimentResult, units: np.ndarray | None = None) -> list[str]:
    """A warning per metric that cannot separate the systems: its mean is at its ceiling
    (1, within 1e-9; ``precision`` has no fixed ceiling and is skipped) for more than half
    of the systems, or its k is at least the units the median scored question can see
    (``units``, per question of the scored ones: `visible_units` restricted to them; every
    system then returns the same units). Each says how many systems, the k and the units."""
    out = []
    n_sys = len(res.table)
    median = None if units is None or not len(units) else float(np.median(units))
    for m in res.metrics:
        spec = parse_metric(m)
        if spec.kind in _NO_FIXED_CEILING:
            continue
        means = res.table[m].to_numpy(dtype=np.float64)
        top = int((means >= 1.0 - CEILING_TOLERANCE).sum())
        k = spec.k if spec.kind != "budget_recall" else None
        few = k is not None and median is not None and k >= median
        if not (2 * top > n_sys or few):
            continue
        why = []
        if 2 * top > n_sys:
            why.append(f"{m} is at its ceiling (1.000) for {top} of {n_sys} systems")
        if few:
            why.append(
                f"k = {k} is at least the {median:g} units the median question can see"
                f" (of {int(np.max(units))} at most)"  # type: ignore[arg-type]
            )
        out.append(
            "; ".join(why) + f": {m} cannot tell these systems apart here; read a metric"
            " with a smaller k (recall@1, mrr) or a larger memory"
        )
    return out
