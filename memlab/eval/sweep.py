"""Parameter sweeps and tuning over cached candidates.

A sweep re-scores one candidate set for every setting of a grid (any
``Pipeline`` parameter: vector_weight, rrf_k, candidate_multiplier, mmr_lambda,
half_life_days, min_score, ...) and reports each setting's metric mean with a
bootstrap confidence interval over queries. Tuning is done right: pick the best
setting on a train split, report it on the held-out rest (``split_queries``,
``kfold``), and say which numbers were tuned on what.

The hybrid mix is one quantity: sweeping ``vector_weight`` alone sets
``text_weight = 1 − vector_weight`` in every setting (and vice versa), and
every table shows the weights the fusion applies after OpenClaw's
clamp/renormalise. Ties are reported, not hidden: ``SweepResult.best`` names
the tied settings, the plateau around the choice, the curve's spread and the
rule that chose (``TIE_RULE``), and a ``SweepWarning`` says when a swept
parameter changed nothing.

Size: one module because ``sweep``, ``SweepResult.best`` and
``_sweep_warnings`` apply one set of rules: the coupled weights (``COUPLING``,
``_coupled_value``), equal values (``_same``) and the tie rule (``_choose``,
``_plateau``); ``split_queries`` and ``kfold`` could move out.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.config.vocab import WEIGHTED_FUSIONS
from memlab.eval.depth import metric_depth
from memlab.eval.fastsweep import sweep_values
from memlab.eval.metrics import exact_mean
from memlab.eval.significance import bootstrap_ci_many
from memlab.stages.best_line import carried_line_scores, line_keys

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


class SweepWarning(UserWarning):
    """A sweep whose outcome needs a second look: a swept parameter that changed no
    ranking, or a grid whose settings all tie (the choice is then the tie rule's)."""


# Train means closer than this are ties: equal up to float summation noise.
TIE_TOLERANCE = 1e-12
TIE_RULE = (
    "among settings whose train means tie (within 1e-12): the base pipeline's own setting "
    "if the grid has it, else the one nearest the base's values (grid steps, each "
    "parameter's range scaled to 1), then grid order"
)
# The hybrid mix is one quantity: sweeping one weight alone moves the other with it.
COUPLING = {"vector_weight": "text_weight", "text_weight": "vector_weight"}
# A parameter that only acts when another stage is on: (parameter(s), is off?, why).
_INERT_WHEN = (
    (("mmr_lambda",), lambda p: p.mmr == "off", "MMR is off (mmr='off')"),
    (
        ("half_life_days", "decay_weight", "decay_kind"),
        lambda p: p.decay == "off",
        "temporal decay is off (decay='off')",
    ),
    (("rrf_k", "rrf_top_bonus"), lambda p: p.fusion != "rrf", "the fusion is not RRF"),
)


@dataclass
class SweepResult:
    """A sweep's tidy results.

    ``table``: one row per (setting, metric): every parameter the setting sets
    (the swept ones in ``params``, then any ``coupled`` one), the effective
    weights ``vector_weight_eff`` / ``text_weight_eff`` (what the fusion
    applies, ``Pipeline.effective_weights``) when the base fusion reads
    weights, ``metric``, ``mean`` (train part, or all scored queries without a
    split), ``low``/``high`` (bootstrap CI of the mean), ``test_mean``
    (held-out part, NaN without a split). ``per_query``: {metric: [settings,
    Q]} values over ``qids`` (NaN for queries without evidence). ``coupled``:
    {parameter: formula} of parameters set from the swept ones
    (``{"text_weight": "1 - vector_weight"}``). ``warnings``: the
    ``SweepWarning`` messages the sweep emitted. ``best()`` picks on train
    (ties by ``TIE_RULE``) and reports on test.
    """

    table: pd.DataFrame
    params: list[str]
    metrics: list[str]
    base: Pipeline
    train: list[str] | None
    test: list[str] | None
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)
    per_query: dict[str, np.ndarray] = field(default_factory=dict)
    qids: list[str] = field(default_factory=list)
    coupled: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def setting_params(self) -> list[str]:
        """Every parameter a setting sets: the swept ones, then the coupled ones."""
        return [*self.params, *self.coupled]

    def best(self, metric: str | None = None) -> dict[str, Any]:
        """The chosen setting for ``metric`` (default: the first), with its evidence.

        The best train mean M = max over settings; settings with mean ≥ M − 1e-12
        tie (``tied``, in grid order). Among ties (``TIE_RULE``): the base
        pipeline's own setting if the grid contains it (no evidence to move the
        default); otherwise the tied setting nearest the base's values, with
        distance Σ_p |i_p(s) − i_p(base)| / (n_p − 1) where i_p is a value's
        (interpolated) index in parameter p's sorted grid of n_p values
        (non-numeric: 0 if equal, else 1); then grid order. Never silently the
        first. Returns ``setting`` (swept and coupled parameters, ready for
        ``Pipeline.replace``), ``metric``, ``train_mean`` (``mean`` without a
        split), ``low``/``high`` (its train CI), ``test_mean`` (held-out, None
        without a split), ``tuned_on``, ``tied`` (the tied settings),
        ``plateau`` (1-D sweeps: ``{"param", "low", "high", "n"}`` of the
        contiguous run of tied grid values that holds the chosen one; None for
        multi-D), ``spread`` (max − min train mean over the grid: how flat the
        curve is), ``rule`` (which step of the tie rule decided),
        ``effective_weights`` ({vector_weight, text_weight} as fused, or None
        when the base fusion reads no weights), ``index`` (the setting's grid
        position: its row of ``per_query[metric]``). ValueError for a metric the
        sweep did not score.
        """
        m = metric or self.metrics[0]
        if m not in self.metrics:
            raise ValueError(f"metric {m!r} is not in the sweep; it has {self.metrics}")
        d = self.curve(m)
        means = d["mean"].to_numpy(dtype=float)
        if np.isnan(means).all():
            raise ValueError(f"no scored query for {m!r}: every mean is NaN")
        top = float(np.nanmax(means))
        tied = np.flatnonzero(means >= top - TIE_TOLERANCE)
        i, rule = self._choose(d, tied)
        row = d.iloc[i]
        names = self.setting_params
        eff = None
        if "vector_weight_eff" in d.columns:
            eff = {
                "vector_weight": float(row["vector_weight_eff"]),
                "text_weight": float(row["text_weight_eff"]),
            }
        return {
            "setting": {p: _plain(row[p]) for p in names},
            "index": i,
            "metric": m,
            "train_mean" if self.train else "mean": float(row["mean"]),
            "low": float(row["low"]),
            "high": float(row["high"]),
            "test_mean": None if np.isnan(row["test_mean"]) else float(row["test_mean"]),
            "tuned_on": f"{len(self.train)} train queries"
            if self.train
            else "all queries (no split)",
            "tied": [{p: _plain(d.iloc[j][p]) for p in names} for j in tied],
            "plateau": self._plateau(d, i, tied),
            "spread": float(np.nanmax(means) - np.nanmin(means)),
            "rule": rule,
            "effective_weights": eff,
        }

    def own_rows(self, d: pd.DataFrame, rows: Any = None) -> list[int]:
        """The rows of a settings table ``d`` (among ``rows``, default all) that hold the
        base pipeline's own setting: every swept value equal to the base's (numbers within
        1e-12)."""
        names = self.setting_params
        rows = range(len(d)) if rows is None else rows
        return [
            int(j) for j in rows if all(_same(d.iloc[j][p], getattr(self.base, p)) for p in names)
        ]

    def _choose(self, d: pd.DataFrame, tied: np.ndarray) -> tuple[int, str]:
        """Row of ``d`` chosen among the ``tied`` rows, and the rule that chose it."""
        if len(tied) == 1:
            return int(tied[0]), "unique best"
        base = self.base
        own = self.own_rows(d, tied)
        if own:
            return int(own[0]), f"{len(tied)} tied: the base's own setting (no evidence to move it)"
        dist = np.zeros(len(tied))
        for p in self.params:
            col = d[p].to_numpy()
            ref = getattr(base, p)
            if _numeric(col) and _numeric(np.array([ref])):
                grid = np.unique(col.astype(float))
                steps = np.arange(len(grid), dtype=float)
                at = np.interp(col[tied].astype(float), grid, steps)
                dist += np.abs(at - np.interp(float(ref), grid, steps)) / max(len(grid) - 1, 1)
            else:
                dist += np.array([0.0 if _same(col[j], ref) else 1.0 for j in tied])
        near = np.flatnonzero(np.isclose(dist, dist.min(), rtol=0.0, atol=1e-12))
        where = ", ".join(f"{p}={_plain(getattr(base, p))!r}" for p in self.params)
        rule = f"{len(tied)} tied: the nearest to the base's {where}"
        if len(near) > 1:
            rule += f", then grid order ({len(near)} equally near)"
        return int(tied[near[0]]), rule

    def _plateau(self, d: pd.DataFrame, i: int, tied: np.ndarray) -> dict[str, Any] | None:
        """The contiguous run of tied values around row ``i`` (1-D sweeps only)."""
        if len(self.params) != 1:
            return None
        p = self.params[0]
        order = np.argsort(d[p].to_numpy(), kind="stable")
        lo, hi = tied_run(np.isin(order, tied), int(np.flatnonzero(order == i)[0]))
        return {
            "param": p,
            "low": _plain(d.iloc[order[lo]][p]),
            "high": _plain(d.iloc[order[hi]][p]),
            "n": hi - lo + 1,
        }

    def pipeline(self, metric: str | None = None, *, as_scored: bool = False) -> Pipeline:
        """The system of the chosen setting: ``base.replace(**best(metric)["setting"])``
        named ``f"{base.name}-tuned"`` (coupled weights included, so it is the system the
        sweep scored). ``as_scored`` also applies the depth the sweep scored at
        (``Pipeline.at_k`` of the deepest metric, unless the sweep was ``pinned``), as
        ``run_experiment`` does: that object's ``LabCandidates.score`` reproduces the
        sweep's per-query values exactly."""
        b = self.best(metric)
        p = self.base.replace(**b["setting"], name=f"{self.base.name}-tuned")
        k = self.info.get("scored_at_k")
        if as_scored and k and not self.info.get("pinned"):
            p = p.at_k(int(k))
        return p

    def curve(self, metric: str | None = None) -> pd.DataFrame:
        """The table's rows of one metric (default: the first), in grid order."""
        m = metric or self.metrics[0]
        return self.table[self.table["metric"] == m].reset_index(drop=True)


def tied_run(is_tied: np.ndarray, at: int) -> tuple[int, int]:
    """The plateau rule: the first and last position of the contiguous run of ``True`` in
    ``is_tied`` (settings in grid order) that holds position ``at``."""
    lo = hi = at
    while lo > 0 and is_tied[lo - 1]:
        lo -= 1
    while hi < len(is_tied) - 1 and is_tied[hi + 1]:
        hi += 1
    return lo, hi


def _plain(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def _numeric(a: np.ndarray) -> bool:
    return all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in a)


def _same(a: Any, b: Any) -> bool:
    """Equal settings values: numbers within 1e-12 (1 − 0.7 is 0.30000000000000004)."""
    if _numeric(np.array([a, b], dtype=object)):
        return abs(float(a) - float(b)) <= 1e-12
    return bool(a == b)


def _coerce(base: Pipeline, param: str, value: Any) -> Any:
    current = getattr(base, param)
    if isinstance(current, bool):
        return bool(value)
    if isinstance(current, int) and float(value).is_integer():
        return int(value)
    if isinstance(current, float):
        return float(value)
    return value


def query_means(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the queries in ``mask`` of each row of ``values`` [S, Q] → [S].

    Each mean is ``memlab.eval.metrics.exact_mean`` (fsum(v) / n), the rule every
    lab table uses, so scoring the tuned system again (``run_experiment``) gives
    the sweep's number exactly. An empty mask gives NaN.
    """
    cols = np.flatnonzero(mask)
    return np.array([exact_mean(row) for row in values[:, cols]], dtype=float)


def _coupled_value(v: float) -> float:
    # 12 decimals: 1 − 0.7 is 0.30000000000000004; the grid means 0.3.
    return round(1.0 - float(v), 12)


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
    couple: bool = True,
) -> SweepResult:
    """Score ``base`` at every point of ``grid`` (a product of parameter lists).

    The hybrid mix is one quantity: when the grid names ``vector_weight`` but
    not ``text_weight`` (and ``couple``), every setting also sets
    ``text_weight = 1 − vector_weight`` (symmetrically for ``text_weight``
    alone), so the swept value is the weight the fusion applies; a grid over
    both is an explicit 2-D grid, kept as given. ``couple=False`` keeps the
    other weight at the base's value (a wsum fusion then renormalises the pair:
    see the ``*_eff`` columns). Candidates are retrieved once, deep enough for
    the deepest setting (a ``Lab``), or given (``LabCandidates``; a best_line
    setting needs its line arrays among them, ``Lab.with_best_line``, else ValueError
    naming the missing ``memlab.stages.best_line.line_keys``; a ``Lab`` attaches each
    setting's). ``train``: a
    fraction (stratified random split by category with ``seed``) or a list of
    train qids; the rest is held out. Unless ``pinned``, each setting is asked
    for at least the deepest metric's k results (as in ``run_experiment``).

    Emits a ``SweepWarning`` (also kept in ``.warnings`` and ``info``) when a
    swept parameter changes no per-query value on the scored queries, naming
    the likely cause (e.g. an empty keyword leg under OpenClaw's AND query), or
    when every setting ties on a metric's train mean.
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
    coupled: dict[str, str] = {}
    sources: dict[str, str] = {}
    if couple and len(set(params) & set(COUPLING)) == 1:
        src = next(p for p in params if p in COUPLING)
        bad = [v for v in grid[src] if not 0.0 <= float(v) <= 1.0]
        if bad:
            raise ValueError(
                f"{src} values {bad} are outside [0, 1]: the sweep sets "
                f"{COUPLING[src]} = 1 - {src}; give both weights in the grid, or couple=False (memlab sweep --no-couple)"
            )
        coupled[COUPLING[src]] = f"1 - {src}"
        sources = {COUPLING[src]: src}
    k = metric_depth(metrics)
    settings = []
    for combo in itertools.product(*(grid[p] for p in params)):
        s = {p: _coerce(base, p, v) for p, v in zip(params, combo, strict=True)}
        for c, src_param in sources.items():
            s[c] = _coerce(base, c, _coupled_value(s[src_param]))
        settings.append(s)
    systems = [base.replace(**s) for s in settings]
    if not pinned:
        systems = [s.at_k(k) for s in systems]
    t0 = time.perf_counter()
    if isinstance(target, Lab):
        deepest = max(systems, key=lambda s: s.depth)
        lc = target.candidates_for([deepest])[deepest.name]
    else:
        lc = target
        # The line scores come with the candidates, one extra key per line setting: a set
        # serves exactly the settings whose scores it carries.
        missing = sorted({k for s in systems for k in line_keys(s)} - set(lc.cs.extra))
        if missing:
            carried = carried_line_scores(lc.cs)
            raise ValueError(
                f"these LabCandidates carry no line arrays for {', '.join(missing)} (they "
                f"carry {', '.join(carried) if carried else 'none'}): sweep on a Lab, which "
                "attaches each setting's line scores"
            )
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
    attach = target.with_best_line if isinstance(target, Lab) else None
    values, path, reason, shared = sweep_values(lc, systems, metrics, attach, bool(progress))
    t_score = time.perf_counter() - t1
    tr_mask = keep.copy() if train_ids is None else np.isin(qids, train_ids)
    te_mask = None if test_ids is None else np.isin(qids, test_ids)
    eff = None
    if base.fusion in WEIGHTED_FUSIONS:
        eff = [s.effective_weights() for s in systems]
    rows = []
    for m in metrics:
        v = values[m]
        ci = bootstrap_ci_many(v[:, tr_mask], confidence, n_resamples, seed)
        train_mean = query_means(v, tr_mask)
        test_mean = query_means(v, te_mask) if te_mask is not None else np.full(len(v), np.nan)
        for i, s in enumerate(settings):
            row: dict[str, Any] = dict(s)
            if eff is not None:
                row["vector_weight_eff"], row["text_weight_eff"] = eff[i]
            row.update(
                metric=m, mean=train_mean[i], low=ci[i, 0], high=ci[i, 1], test_mean=test_mean[i]
            )
            rows.append(row)
    table = pd.DataFrame(rows)
    messages = _sweep_warnings(lc, base, params, settings, values, keep, table)
    for msg in messages:
        warnings.warn(msg, SweepWarning, stacklevel=2)
    return SweepResult(
        table=table,
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
            "path": path,
            "fast_path_reason": reason,
            "shared_stages": list(shared),
            "coupled": dict(coupled),
            "scored_at_k": k,
            "pinned": bool(pinned),
            "tie_tolerance": TIE_TOLERANCE,
            "tie_rule": TIE_RULE,
            "warnings": list(messages),
        },
        per_query={m: values[m] for m in metrics},
        qids=[str(q) for q in qids],
        coupled=coupled,
        warnings=list(messages),
    )


def _weight_cause(lc: LabCandidates, base: Pipeline, keep: np.ndarray) -> str | None:
    """Why the hybrid weights cannot move a ranking here, when it is evident."""
    if base.fusion not in WEIGHTED_FUSIONS:
        return f"fusion {base.fusion!r} reads no weights"
    mode = base.mode(lc.cs)
    if mode != "hybrid":
        return f"only one leg runs ({mode}-only mode): the weights mix two legs"
    hits = ~np.isnan(lc.cs.text_raw[keep])
    with_hits = int(hits.any(axis=1).sum()) if hits.size else 0
    if with_hits == 0:
        if base.keyword_mode == "and":
            return (
                "the keyword leg found nothing: OpenClaw's AND query rarely matches a "
                "question; use keyword_mode='or'"
            )
        return "the keyword leg found nothing for any scored query"
    if base.keyword_mode == "and" and with_hits < int(keep.sum()):
        return (
            f"the keyword leg found hits for only {with_hits} of {int(keep.sum())} scored "
            "queries: OpenClaw's AND query rarely matches a question; try keyword_mode='or'"
        )
    return None


def _sweep_warnings(
    lc: LabCandidates,
    base: Pipeline,
    params: list[str],
    settings: list[dict[str, Any]],
    values: dict[str, np.ndarray],
    keep: np.ndarray,
    table: pd.DataFrame,
) -> list[str]:
    """``SweepWarning`` texts: parameters with no effect, and grids that tie throughout.

    Parameter p has no effect when, for every combination of the other swept
    parameters, all its values give identical per-query values (NaN = NaN) of
    every metric on the scored queries.
    """
    out: list[str] = []
    n = int(keep.sum())
    inert: list[str] = []
    for p in params:
        if len({repr(s[p]) for s in settings}) < 2:
            continue
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, s in enumerate(settings):
            groups.setdefault(tuple(repr(s[q]) for q in params if q != p), []).append(i)
        same = True
        for idx in groups.values():
            for v in values.values():
                block = v[idx][:, keep]
                ref = block[:1]
                if not ((block == ref) | (np.isnan(block) & np.isnan(ref))).all():
                    same = False
                    break
            if not same:
                break
        if not same:
            continue
        inert.append(p)
        cause = None
        if p in COUPLING:
            cause = _weight_cause(lc, base, keep)
        for names, off, why in _INERT_WHEN:
            if p in names and off(base):
                cause = why
        out.append(
            f"{p} has no effect: every value gives identical per-query {', '.join(values)} "
            f"on the {n} scored queries"
            + (f" — {cause}" if cause else " (no ranking changed which relevant chunks it holds)")
        )
    if len(settings) > 1 and not inert:
        for m in values:
            means = table.loc[table["metric"] == m, "mean"].to_numpy(dtype=float)
            if np.nanmax(means) - np.nanmin(means) <= TIE_TOLERANCE:
                cause = _weight_cause(lc, base, keep) if set(params) & set(COUPLING) else None
                out.append(
                    f"all {len(settings)} settings tie on {m} over the train queries (spread 0): "
                    "the chosen setting is the tie rule's, not the data's"
                    + (f" — {cause}" if cause else "")
                )
    return out
