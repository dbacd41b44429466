"""Paired significance tests, multiple-comparison corrections and bootstrap CIs.

All tests are paired over queries: ``a[i]`` and ``b[i]`` are two systems'
scores on the same query ``i``. Inputs must be finite 1-D arrays of equal
length (NaNs raise ``ValueError`` instead of silently propagating).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "bonferroni",
    "bootstrap_ci",
    "bootstrap_ci_many",
    "compare_to_baseline",
    "holm",
    "paired_p",
    "paired_ttest",
    "randomization_test",
    "win_tie_loss",
]

# Resampling is done in batches of about this many float64 cells (~32 MB).
_BATCH_CELLS = 4_000_000


def _paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    """``a - b`` after checking both are finite 1-D arrays of the same non-zero length."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"paired scores must be 1-D of equal length, got {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("paired scores are empty")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired scores must be finite (no NaN or inf)")
    return x - y


def _check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    return int(n_resamples)


def paired_ttest(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray
) -> tuple[float, float]:
    """Paired Student t-test of ``mean(a - b) = 0``, two-sided: ``(t, p)``.

    ``t = mean(d) / (sd(d) / sqrt(n))`` with ``d = a - b`` (scipy's
    ``ttest_rel``). Edge cases: all differences zero gives ``(0.0, 1.0)``
    rather than NaN (no evidence of a difference); a constant non-zero
    difference gives ``t = ±inf, p = 0``. Needs n >= 2.
    """
    d = _paired(a, b)
    if d.size < 2:
        raise ValueError(f"paired_ttest needs at least 2 pairs, got {d.size}")
    if not d.any():
        return 0.0, 1.0
    if (d == d[0]).all():
        # Zero variance: scipy gets the same answer but warns about precision loss.
        return float(np.copysign(np.inf, d[0])), 0.0
    from scipy import stats  # deferred: scipy.stats is slow to import and only needed here

    res = stats.ttest_rel(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return float(res.statistic), float(res.pvalue)


def randomization_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> float:
    """Fisher's paired randomization (sign-flip) test of the mean difference, two-sided.

    Under the null each pair's difference ``d_i = a_i - b_i`` is as likely to
    have the other sign. Draw ``n_resamples`` random sign vectors ``s`` and
    count ``c = #{ |mean(s · d)| >= |mean(d)| }`` (ties within rounding count
    as extreme); ``p = (c + 1) / (n_resamples + 1)`` (add-one, so p > 0 and the
    test is valid for a Monte Carlo sample). All differences zero gives 1.0.
    """
    d = _paired(a, b)
    n_resamples = _check_resamples(n_resamples)
    n = d.size
    observed = abs(d.mean())
    # Sign-flipped means equal to the observed one in exact arithmetic can
    # differ in the last bits; count them as extreme (the conservative side).
    tol = 1e-12 * float(np.abs(d).max())
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_CELLS // n)
    count = 0
    for start in range(0, n_resamples, batch):
        m = min(batch, n_resamples - start)
        flip = rng.random((m, n)) < 0.5
        means = np.where(flip, -d, d).mean(axis=1)
        count += int((np.abs(means) >= observed - tol).sum())
    return (count + 1) / (n_resamples + 1)


def paired_p(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    test: str = "ttest",
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> float:
    """The two-sided p-value of the paired difference ``a - b`` by ``test``: ``"ttest"``
    (`paired_ttest`'s p), anything else `randomization_test` (``n_resamples``, ``seed``).
    The one place a results table's ``test`` setting picks its test."""
    if test == "ttest":
        return paired_ttest(a, b)[1]
    return randomization_test(a, b, n_resamples=n_resamples, seed=seed)


def _check_pvalues(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError(f"pvalues must be in [0, 1] without NaN, got {p.tolist()}")
    return p


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values (same order as the input).

    With the m p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = max_{j <= i} min(1, (m - j + 1) · p_(j))``. The result is
    monotone in the input order and capped at 1; rejecting ``adj <= alpha``
    controls the family-wise error rate at alpha. Empty input gives an empty
    array.
    """
    p = _check_pvalues(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m, dtype=np.float64)
    out[order] = np.maximum.accumulate(scaled)
    return out


def bonferroni(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Bonferroni adjusted p-values: ``min(1, m · p)`` for m tests."""
    p = _check_pvalues(pvalues)
    return np.minimum(1.0, p * p.size)


def bootstrap_ci_many(
    matrix: np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> np.ndarray:
    """Percentile bootstrap CIs of the mean over queries for many settings at once.

    ``matrix`` is ``[settings, Q]``. Each of ``n_resamples`` resamples draws Q
    queries with replacement — the same draw for every setting, so the CIs are
    paired across settings — and takes each setting's mean. The interval is
    the ``(1 − confidence)/2`` and ``(1 + confidence)/2`` quantiles of those
    means (numpy's linear interpolation). Returns ``[settings, 2]``
    ``(low, high)``. One query gives a zero-width interval.
    """
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"matrix must be [settings, Q] with Q >= 1, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("bootstrap values must be finite (no NaN or inf)")
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n_resamples = _check_resamples(n_resamples)
    n = x.shape[1]
    rng = np.random.default_rng(seed)
    means = np.empty((x.shape[0], n_resamples), dtype=np.float64)
    batch = max(1, _BATCH_CELLS // n)
    for start in range(0, n_resamples, batch):
        m = min(batch, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        # Multiplicity of each query in each resample, so every setting's
        # resampled mean is one matrix product instead of a gather.
        flat = (idx + (np.arange(m) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=m * n).reshape(m, n).astype(np.float64)
        means[:, start : start + m] = x @ counts.T / n
    tail = (1.0 - confidence) / 2.0
    return np.quantile(means, [tail, 1.0 - tail], axis=1).T


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI ``(low, high)`` of the mean of per-query values.

    Same procedure as ``bootstrap_ci_many`` for one setting.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    low, high = bootstrap_ci_many(v[None, :], confidence, n_resamples, seed)[0]
    return float(low), float(high)


def win_tie_loss(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, tol: float = 1e-12
) -> tuple[int, int, int]:
    """Per-query comparison of a against b: ``(wins, ties, losses)``.

    A win is ``a_i − b_i > tol``, a loss ``a_i − b_i < −tol``, otherwise a tie.
    """
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    d = _paired(a, b)
    wins = int((d > tol).sum())
    losses = int((d < -tol).sum())
    return wins, d.size - wins - losses, losses


def compare_to_baseline(
    per_query: pd.DataFrame,
    baseline: str,
    *,
    test: str = "ttest",
    correction: str | None = "holm",
    alpha: float = 0.01,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Compare every system to a baseline on one metric, query by query.

    ``per_query``: index qid, one column of scores per system (e.g. one
    metric's column from several ``evaluate`` results, joined on qid).
    For each non-baseline system: ``mean``; ``delta = mean − mean(baseline)``;
    ``p`` from the paired ``test`` (``"ttest"`` or ``"randomization"``, see
    ``paired_ttest`` / ``randomization_test``); ``p_adj`` corrected over the
    family of non-baseline systems (``"holm"``, ``"bonferroni"`` or ``None`` for
    none); ``significant = p_adj <= alpha``; ``wins/ties/losses`` of the system
    against the baseline. Returns one row per system (index ``system``).
    A NaN anywhere raises ``ValueError`` (align the runs' queries first).
    """
    if baseline not in per_query.columns:
        raise ValueError(
            f"baseline {baseline!r} is not a column; columns: {list(per_query.columns)}"
        )
    if test not in ("ttest", "randomization"):
        raise ValueError(f"test must be 'ttest' or 'randomization', got {test!r}")
    if correction not in ("holm", "bonferroni", None):
        raise ValueError(f"correction must be 'holm', 'bonferroni' or None, got {correction!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    values = per_query.astype(np.float64)
    bad = [c for c in values.columns if not np.isfinite(values[c].to_numpy()).all()]
    if bad:
        raise ValueError(f"per-query scores contain NaN/inf in columns {bad}")
    base = values[baseline].to_numpy()
    systems = [c for c in values.columns if c != baseline]
    rows = []
    for name in systems:
        x = values[name].to_numpy()
        p = paired_p(x, base, test, n_resamples=n_resamples, seed=seed)
        wins, ties, losses = win_tie_loss(x, base)
        rows.append(
            {
                "system": name,
                "mean": float(x.mean()),
                "delta": float(x.mean() - base.mean()),
                "p": p,
                "wins": wins,
                "ties": ties,
                "losses": losses,
            }
        )
    out = pd.DataFrame(
        rows, columns=["system", "mean", "delta", "p", "wins", "ties", "losses"]
    ).set_index("system")
    p_all = out["p"].to_numpy(dtype=np.float64)
    if correction == "holm":
        p_adj = holm(p_all)
    elif correction == "bonferroni":
        p_adj = bonferroni(p_all)
    else:
        p_adj = p_all.copy()
    out.insert(3, "p_adj", p_adj)
    out.insert(4, "significant", p_adj <= alpha)
    return out
