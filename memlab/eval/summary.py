"""An experiment's table: per system its metric means, their bootstrap confidence intervals
and the paired tests against the baseline (``run_experiment`` builds it; ``ExperimentResult``
formats it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memlab.eval.metrics import exact_mean
from memlab.eval.significance import bootstrap_ci_many, compare_to_baseline

__all__ = ["CI_CONFIDENCE", "CI_RESAMPLES", "ci_cell", "summary_table"]

# Every table row's interval: a 95 % percentile bootstrap over the questions, as the sweeps.
CI_CONFIDENCE = 0.95
CI_RESAMPLES = 2000


def summary_table(
    per_query: pd.DataFrame,
    names: list[str],
    metrics: list[str],
    baseline: str | None,
    test: str,
    correction: str | None,
    alpha: float,
) -> pd.DataFrame:
    """One row per system (index ``system``, in ``names`` order): ``n`` questions scored;
    per metric its mean (``metrics.exact_mean``, as the sweeps: one system scored here or
    in a sweep gives one number), ``{m} low`` / ``{m} high`` (the 95 % percentile bootstrap
    CI of the mean, ``significance.bootstrap_ci_many``: one draw of questions for every
    system, seed 0, 2000 resamples) and, against ``baseline`` when given, ``{m} p``,
    ``p_adj``, ``sig``, ``wins``, ``ties``, ``losses`` (``compare_to_baseline``)."""
    means = per_query.groupby(["system", "metric"], sort=False)["value"].agg(exact_mean).unstack()
    counts = per_query[per_query["metric"] == metrics[0]].groupby("system")["qid"].count()
    table = means.reindex(index=names, columns=metrics)
    table.insert(0, "n", counts.reindex(names).to_numpy())
    table.index.name = "system"
    wides = {
        m: per_query[per_query["metric"] == m].pivot(index="qid", columns="system", values="value")
        for m in metrics
    }
    for m in metrics:
        values = wides[m][names].to_numpy(dtype=np.float64).T  # [systems, Q]
        if values.shape[1] == 0:
            table[f"{m} low"] = table[f"{m} high"] = np.nan
            continue
        ci = bootstrap_ci_many(values, CI_CONFIDENCE, CI_RESAMPLES, seed=0)
        table[f"{m} low"], table[f"{m} high"] = ci[:, 0], ci[:, 1]
    if baseline is None or len(names) < 2:
        return table
    for m in metrics:
        cmp = compare_to_baseline(
            wides[m][names], baseline, test=test, correction=correction, alpha=alpha
        )
        for col, src in (("p", "p"), ("p_adj", "p_adj"), ("sig", "significant")):
            table[f"{m} {col}"] = cmp[src].reindex(names)
        for col in ("wins", "ties", "losses"):
            table[f"{m} {col}"] = cmp[col].reindex(names)
    return table


def ci_cell(row: pd.Series, metric: str, digits: int = 2) -> str:
    """`` [low, high]`` of a table row's metric CI (``""`` when the row has none)."""
    low, high = row.get(f"{metric} low"), row.get(f"{metric} high")
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return ""
    return f" [{low:.{digits}f}, {high:.{digits}f}]"
