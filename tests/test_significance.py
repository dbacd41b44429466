"""Significance tests, corrections and bootstrap CIs against scipy and hand-worked values."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from memlab.eval import (
    bonferroni,
    bootstrap_ci,
    bootstrap_ci_many,
    compare_to_baseline,
    holm,
    paired_ttest,
    randomization_test,
    win_tie_loss,
)

A = np.array([0.9, 0.4, 0.75, 0.3, 0.6, 0.55, 0.8, 0.2, 0.65, 0.5])
B = np.array([0.7, 0.45, 0.5, 0.3, 0.4, 0.6, 0.55, 0.1, 0.6, 0.35])


def test_paired_ttest_equals_scipy() -> None:
    t, p = paired_ttest(A, B)
    ref = stats.ttest_rel(A, B)
    assert t == pytest.approx(ref.statistic, rel=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-12)
    # By hand: t = mean(d) / (sd(d) / sqrt(n)).
    d = A - B
    assert t == pytest.approx(d.mean() / (d.std(ddof=1) / np.sqrt(d.size)), rel=1e-12)
    t_rev, p_rev = paired_ttest(B, A)
    assert (t_rev, p_rev) == pytest.approx((-t, p), rel=1e-12)


def test_paired_ttest_edge_cases() -> None:
    assert paired_ttest(A, A) == (0.0, 1.0)
    ints = np.arange(6, dtype=float)
    assert paired_ttest(ints + 1, ints) == (np.inf, 0.0)  # constant difference
    assert paired_ttest(ints, ints + 1) == (-np.inf, 0.0)
    with pytest.raises(ValueError, match="at least 2"):
        paired_ttest([1.0], [0.0])
    with pytest.raises(ValueError, match="equal length"):
        paired_ttest([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="finite"):
        paired_ttest([1.0, np.nan], [0.0, 0.0])


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def test_randomization_matches_scipy_exact() -> None:
    # n = 10: scipy enumerates all 2^10 sign patterns (exact p); ours is Monte Carlo.
    n_res = 20_000
    ours = randomization_test(A, B, n_resamples=n_res, seed=1)
    ref = stats.permutation_test(
        (A, B), _mean_diff, permutation_type="samples", vectorized=True,
        alternative="two-sided", n_resamples=np.inf,
    ).pvalue  # fmt: skip
    assert 0.005 < ref < 0.5  # a p-value where the comparison means something
    mc_sd = np.sqrt(ref * (1 - ref) / n_res)
    assert abs(ours - ref) < 4 * mc_sd + 1 / n_res


def test_randomization_matches_scipy_monte_carlo() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(0.5, 0.2, 60)
    b = a - rng.normal(0.04, 0.2, 60)
    n_res = 20_000
    ours = randomization_test(a, b, n_resamples=n_res, seed=3)
    ref = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True,
        alternative="two-sided", n_resamples=n_res, random_state=11,
    ).pvalue  # fmt: skip
    assert 0.01 < ref < 0.9
    # Two independent Monte Carlo estimates of the same p.
    assert abs(ours - ref) < 4 * np.sqrt(2 * ref * (1 - ref) / n_res) + 2 / n_res


def test_randomization_edge_cases() -> None:
    assert randomization_test(A, A) == 1.0
    # Add-one smoothing: never below 1 / (n + 1).
    big = np.arange(40, dtype=float)
    assert randomization_test(big + 1, big, n_resamples=999) == pytest.approx(1 / 1000)
    assert randomization_test(A, B, seed=5) == randomization_test(A, B, seed=5)
    with pytest.raises(ValueError, match="n_resamples must be >= 1"):
        randomization_test(A, B, n_resamples=0)


def test_holm_hand_worked() -> None:
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    # Sorted 0.01, 0.02, 0.03 -> 0.03, 0.04, 0.03 -> monotone 0.03, 0.04, 0.04.
    np.testing.assert_allclose(holm([0.03, 0.01, 0.02]), [0.04, 0.03, 0.04])
    np.testing.assert_allclose(holm([0.5, 0.6]), [1.0, 1.0])  # capped at 1
    np.testing.assert_allclose(holm([0.2]), [0.2])
    assert holm([]).shape == (0,)
    np.testing.assert_allclose(bonferroni([0.01, 0.3, 0.04]), [0.03, 0.9, 0.12])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, 1.2])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_properties(p: list[float]) -> None:
    adj = holm(p)
    raw = np.asarray(p)
    order = np.argsort(raw, kind="stable")
    assert (np.diff(adj[order]) >= 0).all()  # monotone in the raw order
    assert (adj >= raw).all() and (adj <= 1.0).all()
    assert (adj <= bonferroni(p) + 1e-15).all()  # never stricter than Bonferroni
    m = len(p)
    np.testing.assert_allclose(adj[order[0]], min(1.0, m * raw[order[0]]))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("statsmodels") is None, reason="needs statsmodels")
def test_holm_matches_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(0).uniform(0, 0.2, 25)
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], atol=1e-12)


def test_bootstrap_ci_contains_the_mean_and_narrows() -> None:
    rng = np.random.default_rng(0)
    small = rng.uniform(0, 1, 40)
    large = rng.uniform(0, 1, 2000)
    lo_s, hi_s = bootstrap_ci(small)
    lo_l, hi_l = bootstrap_ci(large)
    assert lo_s < small.mean() < hi_s
    assert lo_l < large.mean() < hi_l
    assert (hi_l - lo_l) < (hi_s - lo_s) / 3  # ~ 1/sqrt(n): sqrt(2000/40) ~ 7
    lo90, hi90 = bootstrap_ci(small, confidence=0.9)
    assert lo_s <= lo90 and hi90 <= hi_s
    assert bootstrap_ci(small, seed=3) == bootstrap_ci(small, seed=3)
    assert bootstrap_ci([0.4]) == (0.4, 0.4)


def test_bootstrap_ci_agrees_with_scipy() -> None:
    x = np.random.default_rng(2).beta(2, 5, 300)
    ours = np.array(bootstrap_ci(x, n_resamples=4000))
    ref = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=4000, random_state=0)
    ci = np.array([ref.confidence_interval.low, ref.confidence_interval.high])
    # Same estimator, different random draws: agree to a small part of the width.
    assert np.abs(ours - ci).max() < 0.1 * (ci[1] - ci[0])


def test_bootstrap_ci_many_matches_one_at_a_time() -> None:
    m = np.random.default_rng(4).uniform(0, 1, (5, 80))
    many = bootstrap_ci_many(m, n_resamples=500, seed=9)
    assert many.shape == (5, 2)
    for i in range(5):
        assert tuple(many[i]) == pytest.approx(bootstrap_ci(m[i], n_resamples=500, seed=9))
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci_many(np.array([[0.1, np.nan]]))
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\), got 1.0"):
        bootstrap_ci(m[0], confidence=1.0)


def test_win_tie_loss() -> None:
    a = [0.5, 0.2, 0.3, 0.9, 0.1 + 0.2]
    b = [0.4, 0.2, 0.5, 0.1, 0.3]
    assert win_tie_loss(a, b) == (2, 2, 1)  # 0.1 + 0.2 vs 0.3 is a tie within tol
    assert win_tie_loss(b, a) == (1, 2, 2)
    assert win_tie_loss(a, b, tol=0.15) == (1, 3, 1)


def test_compare_to_baseline() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.8, 50)
    frame = pd.DataFrame(
        {
            "bm25": base,
            "hybrid": base + 0.1 + rng.normal(0, 0.02, 50),
            "same": base.copy(),
            "noisy": base + rng.normal(0, 0.2, 50),
        },
        index=pd.Index([f"q{i}" for i in range(50)], name="qid"),
    )
    out = compare_to_baseline(frame, "bm25")
    assert list(out.index) == ["hybrid", "same", "noisy"]
    assert list(out.columns) == [
        "mean", "delta", "p", "p_adj", "significant", "wins", "ties", "losses",
    ]  # fmt: skip
    assert out.loc["hybrid", "delta"] == pytest.approx(frame["hybrid"].mean() - base.mean())
    assert out.loc["hybrid", "significant"] and out.loc["hybrid", "wins"] == 50
    assert out.loc["same", "p"] == 1.0 and out.loc["same", "ties"] == 50
    assert not out.loc["same", "significant"]
    np.testing.assert_allclose(out["p_adj"], holm(out["p"].to_numpy()))
    assert out.loc["noisy", "p"] == pytest.approx(
        stats.ttest_rel(frame["noisy"], base).pvalue, rel=1e-12
    )
    bonf = compare_to_baseline(frame, "bm25", correction="bonferroni")
    np.testing.assert_allclose(bonf["p_adj"], np.minimum(1, 3 * bonf["p"]))
    raw = compare_to_baseline(frame, "bm25", correction=None, test="randomization")
    np.testing.assert_array_equal(raw["p_adj"], raw["p"])
    assert raw.loc["hybrid", "p"] == pytest.approx(1 / 10_001)
    with pytest.raises(ValueError, match="baseline 'dense' is not a column"):
        compare_to_baseline(frame, "dense")
    with pytest.raises(ValueError, match="test must be"):
        compare_to_baseline(frame, "bm25", test="wilcoxon")
    with pytest.raises(ValueError, match="NaN"):
        compare_to_baseline(frame.assign(same=np.nan), "bm25")


def test_paired_p_is_the_chosen_tests_p() -> None:
    from memlab.eval.significance import paired_p, paired_ttest, randomization_test

    rng = np.random.default_rng(3)
    a, b = rng.random(30), rng.random(30)
    assert paired_p(a, b) == paired_ttest(a, b)[1]
    assert paired_p(a, b, "randomization", n_resamples=999, seed=2) == randomization_test(
        a, b, n_resamples=999, seed=2
    )
