"""A guard for CI: fail a run whose metric is below a floor, or that dropped significantly
against a saved run (``memlab eval --fail-below``, ``--against RUN_DIR
--fail-on-regression``; exit code 3, ``memlab.errors.EXIT_REGRESSION``).

A drop counts as a regression when it is larger than a margin and significant: each system
and metric present in both runs is compared question by question (the experiment's paired
test), the p-values Holm-corrected over every (system, metric) compared, and a drop whose
corrected p is at most the experiment's alpha and whose size exceeds the margin fails. A
saved run on another dataset (its fingerprint differs: other questions, labels or memory
files) is not comparable: ``GuardError`` (a usage error, exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.config.vocab import DEFAULT_REGRESSION_MARGIN
from memlab.eval.metrics import parse_metric
from memlab.eval.significance import holm, paired_p

if TYPE_CHECKING:
    from memlab.eval.experiment import ExperimentResult

__all__ = [
    "DEFAULT_MARGIN",
    "GuardError",
    "SavedRun",
    "below_floor",
    "compare_to_saved",
    "load_saved_run",
    "parse_floors",
    "regressions",
]

DEFAULT_MARGIN = DEFAULT_REGRESSION_MARGIN


class GuardError(ValueError):
    """A guard that cannot run as asked (a usage error: the message says why)."""


@dataclass
class SavedRun:
    """A run ``memlab eval --save`` wrote: its folder, ``experiment.json`` and the
    per-question values of ``per_query.csv`` (``system, qid, category, metric, value``)."""

    folder: Path
    info: dict[str, Any]
    per_query: pd.DataFrame


def parse_floors(items: Sequence[str], metrics: Sequence[str]) -> dict[str, float]:
    """``--fail-below METRIC=VALUE`` options as {metric: floor}. METRIC is written as
    ``--metrics`` takes it and must be one of the run's ``metrics``; VALUE a number.
    Anything else raises ``GuardError`` naming the option."""
    out: dict[str, float] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise GuardError(f"--fail-below {item!r}: write METRIC=VALUE, e.g. recall@6=0.8")
        try:
            parse_metric(name)
            floor = float(value)
        except ValueError as exc:
            raise GuardError(f"--fail-below {item!r}: {exc}") from None
        if name not in metrics:
            raise GuardError(
                f"--fail-below {item!r}: {name} is not among the run's metrics"
                f" ({', '.join(metrics)}); add it to --metrics"
            )
        out[name] = floor
    return out


def below_floor(res: ExperimentResult, floors: Mapping[str, float]) -> list[str]:
    """One message per (system, metric) whose mean is below its floor:
    ``"SYSTEM METRIC 0.712 is below 0.800"``; [] when every mean reaches its floor."""
    out = []
    for name in res.table.index:
        for m, floor in floors.items():
            v = float(res.table.loc[name, m])
            if not v >= floor:
                out.append(f"{name} {m} {v:.3f} is below {floor:g}")
    return out


def load_saved_run(folder: str | Path) -> SavedRun:
    """The run ``memlab eval --save`` wrote in ``folder``; ``GuardError`` naming the file
    when ``experiment.json`` or ``per_query.csv`` is missing or unreadable."""
    root = Path(folder).expanduser()
    exp, pq = root / "experiment.json", root / "per_query.csv"
    for f in (exp, pq):
        if not f.is_file():
            raise GuardError(f"--against {root}: no {f.name} (a folder memlab eval --save wrote)")
    try:
        info = json.loads(exp.read_text(encoding="utf-8"))
        per_query = pd.read_csv(pq, dtype={"qid": str, "system": str, "metric": str})
    except (OSError, ValueError) as exc:
        raise GuardError(f"--against {root}: cannot read it ({exc})") from exc
    return SavedRun(root, info, per_query)


def compare_to_saved(
    res: ExperimentResult, saved: SavedRun, margin: float = DEFAULT_MARGIN
) -> pd.DataFrame:
    """Every (system, metric) in both runs: ``system, metric, n`` (questions in both),
    ``saved``, ``now`` (means over those questions), ``delta = now − saved``, ``p`` (the
    experiment's paired test; 1 when fewer than 2 questions or no difference), ``p_adj``
    (Holm over all rows) and ``regression`` (``delta < −margin`` and ``p_adj ≤ alpha``).
    A saved run on another dataset fingerprint raises ``GuardError``."""
    mine, theirs = res.info.get("dataset_fingerprint"), saved.info.get("dataset_fingerprint")
    if mine != theirs:
        raise GuardError(
            f"--against {saved.folder}: saved on another dataset (fingerprint"
            f" {str(theirs)[:12]}, this run's {str(mine)[:12]}: other questions, labels or"
            " memory files); compare runs on one frozen folder (memlab harvest --snapshot)"
        )
    test = res.info.get("test", "ttest")
    alpha = float(res.info.get("alpha", 0.01))
    old = saved.per_query
    rows = []
    for system in res.table.index:
        for m in res.metrics:
            a = old[(old["system"] == system) & (old["metric"] == m)].set_index("qid")["value"]
            if a.empty:
                continue
            b = res.wide(m)[system]
            both = a.index.intersection(b.index)
            x, y = b.loc[both].to_numpy(np.float64), a.loc[both].to_numpy(np.float64)
            p = 1.0
            if len(both) >= 2 and (x != y).any():
                p = paired_p(x, y, test)
            rows.append(
                {
                    "system": system,
                    "metric": m,
                    "n": len(both),
                    "saved": float(np.mean(y)) if len(y) else np.nan,
                    "now": float(np.mean(x)) if len(x) else np.nan,
                    "p": p,
                }
            )
    out = pd.DataFrame(rows, columns=["system", "metric", "n", "saved", "now", "p"])
    out["delta"] = out["now"] - out["saved"]
    out["p_adj"] = holm(out["p"].to_numpy(np.float64)) if len(out) else []
    out["regression"] = (out["delta"] < -margin) & (out["p_adj"] <= alpha)
    return out[["system", "metric", "n", "saved", "now", "delta", "p", "p_adj", "regression"]]


def regressions(cmp: pd.DataFrame, margin: float, alpha: float) -> list[str]:
    """One message per regression row of `compare_to_saved`:
    ``"SYSTEM METRIC 0.800 -> 0.700 (-0.100 > margin 0.02, p_adj 0.003 <= 0.01)"``."""
    return [
        f"{r.system} {r.metric} {r.saved:.3f} -> {r.now:.3f} ({r.delta:+.3f}, a drop larger"
        f" than the margin {margin:g}; p_adj {r.p_adj:.3g} <= {alpha:g})"
        for r in cmp[cmp["regression"]].itertuples(index=False)
    ]
