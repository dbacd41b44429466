"""Parameter sweeps and tuning over cached candidates.

A sweep re-scores one candidate set for every setting of a grid (any
``Pipeline`` parameter: vector_weight, rrf_k, candidate_multiplier, mmr_lambda,
half_life_days, min_score, ...) and reports each setting's metric mean with a
bootstrap confidence interval over queries. Tuning is done right: pick the best
setting on a train split, report it on the held-out rest (``split_queries``,
``kfold``), and say which numbers were tuned on what.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.eval.experiment import metric_depth
from memlab.eval.fastsweep import fast_path_reason, score_settings
from memlab.eval.significance import bootstrap_ci_many

if TYPE_CHECKING:
    from memlab.eval.lab import Lab, LabCandidates
    from memlab.pipeline import Pipeline


def parse_range(spec: str) -> list[float]:
    """``"0:1:0.05"`` → [0, 0.05, …, 1] (inclusive, rounded to 10 decimals);
    ``"10,20,60"`` → [10, 20, 60]; a single number → [x]. Bad specs raise ValueError."""
    spec = spec.strip()
    try:
        if ":" in spec:
            parts = [float(x) for x in spec.split(":")]
            if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
                raise ValueError
            start, stop, step = parts
            n = int(np.floor((stop - start) / step + 1e-9)) + 1
            return [round(start + i * step, 10) for i in range(n)]
        return [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"bad range {spec!r}: use START:STOP:STEP or a comma list") from None


def split_queries(
    qids: Sequence[str],
    train_fraction: float,
    *,
    seed: int = 0,
    strata: Sequence[str] | None = None,
) -> tuple[list[str], list[str]]:
    """Random train/test split of query ids, stratified by ``strata`` (e.g. category).

    Each stratum contributes round(fraction × size) queries to train (at least
    one to each side when it has two or more). Deterministic for a seed.
    """
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")
    qids = [str(q) for q in qids]
    strata = list(strata) if strata is not None else [""] * len(qids)
    rng = np.random.default_rng(seed)
    train: list[str] = []
    for s in dict.fromkeys(strata):
        members = [q for q, t in zip(qids, strata, strict=True) if t == s]
        order = rng.permutation(len(members))
        n = round(train_fraction * len(members))
        if len(members) >= 2:
            n = min(max(n, 1), len(members) - 1)
        train.extend(members[i] for i in order[:n])
    tr = set(train)
    return [q for q in qids if q in tr], [q for q in qids if q not in tr]


def kfold(qids: Sequence[str], k: int = 5, *, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    """k (train, test) splits by query, every query in exactly one test fold."""
    if k < 2 or k > len(qids):
        raise ValueError(f"k must be in [2, {len(qids)}], got {k}")
    order = np.random.default_rng(seed).permutation(len(qids))
    folds = np.array_split(order, k)
    q = [str(x) for x in qids]
    out = []
    for f in folds:
        test = set(f.tolist())
        out.append(([q[i] for i in range(len(q)) if i not in test], [q[i] for i in sorted(test)]))
    return out


@dataclass
class SweepResult:
    """A sweep's tidy results.

    ``table``: one row per (setting, metric): the swept parameters, ``metric``,
    ``mean`` (train part, or all queries without a split), ``low``/``high``
    (bootstrap CI of the mean), ``test_mean`` (held-out part, NaN without a
    split). ``per_query``: [settings, Q] values of the first metric over all
    queries. ``best()`` picks on train and reports on test.
    """

    table: pd.DataFrame
    params: list[str]
    metrics: list[str]
    base: Pipeline
    train: list[str] | None
    test: list[str] | None
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)

    def best(self, metric: str | None = None) -> dict[str, Any]:
        """The setting with the highest train mean (ties → first in grid order), with its
        train CI and held-out score; ``tuned_on`` says which queries chose it."""
        m = metric or self.metrics[0]
        d = self.table[self.table["metric"] == m].reset_index(drop=True)
        i = int(d["mean"].to_numpy().argmax())
        row = d.iloc[i]
        return {
            "setting": {p: _plain(row[p]) for p in self.params},
            "metric": m,
            "train_mean" if self.train else "mean": float(row["mean"]),
            "low": float(row["low"]),
            "high": float(row["high"]),
            "test_mean": None if np.isnan(row["test_mean"]) else float(row["test_mean"]),
            "tuned_on": f"{len(self.train)} train queries"
            if self.train
            else "all queries (no split)",
        }

    def pipeline(self, metric: str | None = None) -> Pipeline:
        """The base pipeline with the best setting applied."""
        b = self.best(metric)
        return self.base.replace(**b["setting"], name=f"{self.base.name}-tuned")

    def curve(self, metric: str | None = None) -> pd.DataFrame:
        m = metric or self.metrics[0]
        return self.table[self.table["metric"] == m].reset_index(drop=True)


def _plain(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def _coerce(base: Pipeline, param: str, value: Any) -> Any:
    current = getattr(base, param)
    if isinstance(current, bool):
        return bool(value)
    if isinstance(current, int) and float(value).is_integer():
        return int(value)
    if isinstance(current, float):
        return float(value)
    return value


def sweep(
    target: Lab | LabCandidates,
    base: Pipeline,
    grid: Mapping[str, Sequence[Any]],
    metrics: Sequence[str] = ("recall@6",),
    *,
    train: float | Sequence[str] | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    pinned: bool = False,
    progress: bool = False,
) -> SweepResult:
    """Score ``base`` at every point of ``grid`` (a product of parameter lists).

    Candidates are retrieved once, deep enough for the deepest setting (a
    ``Lab``), or given (``LabCandidates``). ``train``: a fraction (stratified
    random split by category with ``seed``) or a list of train qids; the rest
    is held out. Unless ``pinned``, each setting is asked for at least the
    deepest metric's k results (see ``run_experiment``).
    """
    from memlab.eval.lab import Lab

    if not grid:
        raise ValueError("grid is empty: give at least one parameter and its values")
    params = list(grid)
    for p in params:
        if p not in base.get_params():
            raise ValueError(f"unknown pipeline parameter {p!r}")
        if len(grid[p]) == 0:
            raise ValueError(f"no values for {p!r}")
    k = metric_depth(metrics)
    settings = [
        {p: _coerce(base, p, v) for p, v in zip(params, combo, strict=True)}
        for combo in itertools.product(*(grid[p] for p in params))
    ]
    systems = [base.replace(**s) for s in settings]
    if not pinned:
        systems = [s.at_k(k) for s in systems]
    t0 = time.perf_counter()
    if isinstance(target, Lab):
        deepest = max(systems, key=lambda s: s.depth)
        lc = target.candidates_for([deepest])[deepest.name]
    else:
        lc = target
    keep = lc.has_evidence
    qids = np.asarray(lc.qids, dtype=object)
    train_ids: list[str] | None = None
    test_ids: list[str] | None = None
    if train is not None:
        scored = qids[keep].tolist()
        if isinstance(train, float):
            train_ids, test_ids = split_queries(
                scored, train, seed=seed, strata=lc.categories[keep].tolist()
            )
        else:
            tr = set(map(str, train))
            train_ids = [q for q in scored if q in tr]
            test_ids = [q for q in scored if q not in tr]
        if not train_ids or not test_ids:
            raise ValueError("the train/test split left one side empty")
    t1 = time.perf_counter()
    # Settings that differ only in weights / RRF k / threshold are ranked and
    # scored together (identical values, see memlab.eval.fastsweep); others one by one.
    reason = fast_path_reason(lc.cs, systems)
    if reason is None:
        values, _ = score_settings(lc, systems, metrics)
    else:
        values = {m: np.empty((len(systems), len(qids))) for m in metrics}
        iterator: Any = systems
        if progress:
            from tqdm.auto import tqdm

            iterator = tqdm(systems, desc="sweep", unit="setting")
        for i, s in enumerate(iterator):
            out = lc.score(s, metrics)
            for m in metrics:
                values[m][i] = out[m]
    t_score = time.perf_counter() - t1
    tr_mask = keep.copy() if train_ids is None else np.isin(qids, train_ids)
    te_mask = None if test_ids is None else np.isin(qids, test_ids)
    rows = []
    for m in metrics:
        v = values[m]
        ci = bootstrap_ci_many(v[:, tr_mask], confidence, n_resamples, seed)
        train_mean = v[:, tr_mask].mean(axis=1)
        test_mean = (
            v[:, te_mask].mean(axis=1) if te_mask is not None else np.full(len(systems), np.nan)
        )
        for i, s in enumerate(settings):
            rows.append(
                {
                    **s,
                    "metric": m,
                    "mean": train_mean[i],
                    "low": ci[i, 0],
                    "high": ci[i, 1],
                    "test_mean": test_mean[i],
                }
            )
    return SweepResult(
        table=pd.DataFrame(rows),
        params=params,
        metrics=list(metrics),
        base=base,
        train=train_ids,
        test=test_ids,
        seconds=time.perf_counter() - t0,
        info={
            "score_seconds": t_score,
            "settings": len(systems),
            "queries": int(keep.sum()),
            "path": "fast" if reason is None else "loop",
            "fast_path_reason": reason,
        },
    )
