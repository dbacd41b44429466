"""How deep the metrics read, and rankings compared only that deep.

Every metric of an experiment reads at most the top k of a ranking (``metric_depth``):
two systems that return the same units in the same order there are one system as
measured, whatever they return below it (``identical_rankings``). At file level the
metrics read the first k distinct files of the ranked units (``top_files``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memlab.eval.metrics import parse_metric


def metric_depth(metrics: Sequence[str]) -> int:
    """The deepest rank any metric reads (k of ``x@k``; 10 for ``mrr`` without k;
    budget metrics read up to 50 results)."""
    depth = 1
    for m in metrics:
        spec = parse_metric(m)
        depth = max(depth, 50 if spec.kind == "budget_recall" else (spec.k or 10))
    return depth


def top_files(units: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` distinct files of each row of ``units`` (file ids of ranked units,
    ``""`` = empty slot), in the order of their best unit: ``[Q, k]``, ``""`` padding."""
    out = np.full((units.shape[0], k), "", dtype=object)
    for i, row in enumerate(units.tolist()):
        seen = list(dict.fromkeys(f for f in row if f))[:k]
        out[i, : len(seen)] = seen
    return out


def identical_rankings(rankings: dict[str, tuple[list[str], np.ndarray]]) -> list[list[str]]:
    """Groups of systems (in input order, 2 or more each) whose results are the same units
    in the same order on every scored question: {name: (scored qids, unit ids [Q, K])}."""
    groups: dict[Any, list[str]] = {}
    for name, (qids, docs) in rankings.items():
        # "" pads a list shorter than the widest: the same results, however padded.
        key = (tuple(qids), tuple(tuple(d for d in row if d) for row in docs.tolist()))
        groups.setdefault(key, []).append(name)
    return [g for g in groups.values() if len(g) > 1]
