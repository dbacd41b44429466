"""The realism curve (``memlab.eval.realism``): the plateau rule, the curve's prediction, the
judgement of a group, and points measured on a committed ladder (hashing embedder)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memlab.eval.realism import (
    CURVE_PRESETS,
    WEIGHTS,
    Point,
    judge,
    kendall_tau,
    place,
    plateau,
    predict,
)

W = [0.0, 0.25, 0.5, 0.75, 1.0]


@pytest.mark.parametrize(
    ("means", "tol", "want"),
    [
        ([0.1, 0.5, 0.5, 0.2, 0.5], 1e-12, (0.25, 0.25, 0.5)),  # ties not contiguous: one run
        ([0.1, 0.49, 0.5, 0.495, 0.2], 0.01, (0.5, 0.25, 0.75)),
        ([0.5, 0.5, 0.5, 0.5, 0.5], 0.01, (0.0, 0.0, 1.0)),  # flat: every weight
        ([math.nan, 0.3, 0.27, math.nan, 0.29], 0.05, (0.25, 0.25, 0.5)),  # NaN breaks a run
    ],
)
def test_plateau_is_the_run_of_near_best_weights_around_the_first_best(
    means: list[float], tol: float, want: tuple[float, float, float]
) -> None:
    assert plateau(W, means, tol) == want


def test_plateau_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="every value is NaN"):
        plateau(W, [math.nan] * 5)


def _point(name: str, overlap: float, low: float, high: float, figs: dict[str, float]) -> Point:
    return Point(name, "conversation", "recall@10", 10, overlap, 0.5, low, low, high, 1.0,
                 figures=figs)  # fmt: skip


def test_the_curve_interpolates_plateau_midpoints_and_figures() -> None:
    curve = [
        _point("a", 0.9, 0.0, 0.2, {"bm25": 0.9, "vector": 0.5}),
        _point("b", 0.5, 0.6, 1.0, {"bm25": 0.5, "vector": 0.7}),
    ]
    w, figs = predict(curve, 0.7)
    assert w == pytest.approx((0.1 + 0.8) / 2)
    assert figs == pytest.approx({"bm25": 0.7, "vector": 0.6})
    assert predict(curve, 0.1)[0] == pytest.approx(0.8)  # flat beyond the ends
    group = _point("g", 0.7, 0.4, 0.5, {"bm25": 0.6, "vector": 0.8})
    r = place(group, curve)
    assert r["predicted"] == pytest.approx(0.45) and r["inside"]
    assert r["tau"] == pytest.approx(-1.0)  # the group orders the two the other way
    assert r["best_preset"] == "vector" and r["predicted_best_preset"] == "bm25"
    assert not judge(group, 0.51, figs)["inside"]


def test_kendall_tau_is_scipy_s_tau_b_over_shared_presets() -> None:
    from scipy.stats import kendalltau

    a = {"x": 1.0, "y": 2.0, "z": 3.0, "only_a": 9.0}
    b = {"x": 1.0, "y": 3.0, "z": 2.0}
    assert kendall_tau(a, b) == pytest.approx(kendalltau([1, 2, 3], [1, 3, 2]).statistic)
    assert math.isnan(kendall_tau({"x": 1.0}, {"x": 2.0}))


def test_points_on_a_committed_ladder(tmp_path: object) -> None:
    """Two levels of the conversation ladder with the hashing embedder: each point's curve
    is the sweep's per-query means over its questions, its overlap its questions' own."""
    from memlab.datasets.base import load_folder
    from memlab.datasets.synthetic.ladder import LADDER_COLUMN, level_subset
    from memlab.eval.lab import Lab
    from memlab.eval.realism import committed_ladder, ladder_points
    from memlab.eval.stats import corpus_stats

    ds = load_folder(committed_ladder("conversation"))
    keep = ds.queries.loc[ds.queries[LADDER_COLUMN].isin([0.0, 1.0]), "qid"].tolist()
    lab = Lab(ds.subset(keep), embedder="hashing", unit="turn", index_dir=tmp_path)
    points = ladder_points(lab, "conversation", presets=("bm25", "vector"))
    assert [p.paraphrase for p in points] == [0.0, 1.0]
    for p in points:
        assert p.overlap == pytest.approx(
            corpus_stats(level_subset(ds, p.paraphrase))["term_overlap"]
        )
        assert len(p.curve) == len(WEIGHTS) and p.top == pytest.approx(max(p.curve))
        assert p.low <= p.best <= p.high and set(p.figures) == {"bm25", "vector"}
        tol = max(0.01, 1 / p.n)
        inside = [m for w, m in zip(WEIGHTS, p.curve, strict=True) if p.low <= w <= p.high]
        assert min(inside) >= p.top - tol - 1e-12
    assert points[0].overlap - points[1].overlap > 0.3
    # the presets compared by the curve are the retrieval ones, no query-blind baseline
    assert not {"recency", "random"} & set(CURVE_PRESETS)
    assert np.isfinite([p.figures["bm25"] for p in points]).all()
