"""Figures per group (conversation, chat, persona, workspace): how much a lead depends on
the group it is measured on.

A mean over a dataset can hide a lead carried by one group. ``experiment_groups`` gives
each group's figure per system and the leader's lead in each (the leader's figure minus
the best other system's: negative where another system is ahead), ``sweep_groups`` each
group's figure at a sweep's chosen setting and at the base's own setting, the chosen one's
lead there, and the group's own best setting. ``memlab eval`` and ``memlab sweep`` print
both when a dataset has two groups or more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memlab.eval.metrics import exact_mean

if TYPE_CHECKING:
    from memlab.eval.experiment import ExperimentResult
    from memlab.eval.sweep import SweepResult

__all__ = ["experiment_groups", "group_table", "lead_summary", "sweep_groups"]


def group_table(
    per_query: pd.DataFrame, groups: Mapping[str, str], metric: str, systems: Sequence[str]
) -> pd.DataFrame:
    """Each group's mean of ``metric`` per system (rows groups in name order, columns
    ``n`` then ``systems``), from a long ``per_query`` frame (``system, qid, metric,
    value``); ``groups`` maps qid → group. NaN values (no evidence) are not counted."""
    d = per_query[(per_query["metric"] == metric) & per_query["value"].notna()].copy()
    d["group"] = d["qid"].map(groups)
    wide = d.pivot_table(index="group", columns="system", values="value", aggfunc=exact_mean)
    n = d[d["system"] == systems[0]].groupby("group")["qid"].nunique()
    out = wide.reindex(columns=list(systems))
    out.insert(0, "n", n.reindex(out.index).fillna(0).astype(int))
    return out.sort_index()


def lead_summary(leads: pd.Series, who: str) -> str:
    """One line: in how many groups ``who`` leads (lead > 0), the smallest and largest lead
    with their groups, and the spread (largest − smallest)."""
    lo, hi = leads.idxmin(), leads.idxmax()
    return (
        f"{who} leads in {int((leads > 0).sum())} of {len(leads)} groups; lead from"
        f" {leads[lo]:+.3f} ({lo}) to {leads[hi]:+.3f} ({hi}), spread {leads[hi] - leads[lo]:.3f}"
    )


def experiment_groups(
    res: ExperimentResult, groups: Mapping[str, str], metric: str, leader: str | None = None
) -> tuple[pd.DataFrame, str] | None:
    """Per group: each system's ``metric`` and the leader's lead over the best other system
    (column ``lead``); ``leader`` defaults to the system with the best overall mean. Returns
    (table, text) — the text is the table and ``lead_summary`` — or None with fewer than
    two groups or systems."""
    names = [s.name for s in res.systems]
    if len(set(groups.values())) < 2 or len(names) < 2:
        return None
    table = group_table(res.per_query, groups, metric, names)
    leader = leader or str(res.table[metric].astype(float).idxmax())
    others = [s for s in names if s != leader]
    table["lead"] = table[leader] - table[others].max(axis=1)
    head = (
        f"{metric} by group ({len(table)} groups); lead = {leader} − the best other system in"
        " that group"
    )
    text = "\n".join([head, table.round(3).to_string(), lead_summary(table["lead"], leader)])
    return table, text


def sweep_groups(
    sw: SweepResult, groups: Mapping[str, str], metric: str | None = None
) -> tuple[pd.DataFrame, str] | None:
    """Per group (over every scored query of the sweep, train and held-out): ``n``, the
    figure at the chosen setting (``chosen``) and at the base's own setting (``base``, when
    the grid has it, else the grid's first), ``lead`` = chosen − base, and the group's own
    best setting (``own best``: the first in grid order with the group's top mean) with
    its figure. None with fewer than two groups."""
    m = metric or sw.metrics[0]
    if len({groups.get(q) for q in sw.qids}) < 2:
        return None
    values = sw.per_query[m]
    curve = sw.curve(m)
    chosen = int(sw.best(m)["index"])
    base = _base_row(sw, curve)
    qgroups = np.array([groups.get(q, "") for q in sw.qids], dtype=object)
    rows = []
    for g in sorted(set(qgroups.tolist())):
        cols = np.flatnonzero((qgroups == g) & ~np.isnan(values[0]))
        if not len(cols):
            continue
        means = np.array([exact_mean(r) for r in values[:, cols]])
        own = int(np.argmax(means))
        rows.append(
            {
                "group": g,
                "n": len(cols),
                "chosen": means[chosen],
                "base": means[base],
                "lead": means[chosen] - means[base],
                "own best": _setting(sw, curve, own),
                "own best mean": means[own],
            }
        )
    table = pd.DataFrame(rows).set_index("group")
    head = (
        f"{m} by group ({len(table)} groups, every scored query): chosen {_setting(sw, curve, chosen)}"
        f" against the base's {_setting(sw, curve, base)}; lead = chosen − base"
    )
    text = "\n".join(
        [head, table.round(3).to_string(), lead_summary(table["lead"], "the chosen setting")]
    )
    return table, text


def _base_row(sw: SweepResult, curve: pd.DataFrame) -> int:
    """The row of the base pipeline's own setting (``SweepResult.own_rows``), else 0."""
    own = sw.own_rows(curve)
    return own[0] if own else 0


def _setting(sw: SweepResult, curve: pd.DataFrame, i: int) -> str:
    row = curve.iloc[i]
    return ", ".join(
        f"{p}={row[p]:g}" if isinstance(row[p], float) else f"{p}={row[p]}" for p in sw.params
    )
