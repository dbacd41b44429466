"""Score maps, normalisations and fusion kernels: spec values, properties, ranx."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memlab.retrieval.fusion import (
    FUSIONS,
    NORMALIZATIONS,
    bm25_rank_to_score,
    bm25_rank_to_score_array,
    clamp_weights,
    comb_max,
    comb_min,
    comb_mnz,
    comb_sum,
    fuse,
    normalize,
    rrf,
    scores_to_ranks,
    weighted_sum,
)

NAN = np.nan

# ------------------------------------------------------------------------ bm25 map


@pytest.mark.parametrize(
    ("rank", "score"),
    [(-1.0, 0.5), (-3.0, 0.75), (0.0, 1.0), (1.0, 0.5), (3.0, 0.25), (-0.0, 1.0)],
)
def test_bm25_rank_to_score_spec_values(rank: float, score: float) -> None:
    assert bm25_rank_to_score(rank) == pytest.approx(score, abs=1e-15)


@pytest.mark.parametrize("rank", [math.nan, math.inf, -math.inf])
def test_bm25_rank_to_score_non_finite(rank: float) -> None:
    assert bm25_rank_to_score(rank) == 0.001


def test_bm25_array_keeps_absent_nan() -> None:
    got = bm25_rank_to_score_array([[-1.0, 0.0, NAN], [np.inf, -np.inf, 4.0]])
    np.testing.assert_array_equal(got, [[0.5, 1.0, NAN], [0.001, 0.001, 0.2]])
    np.testing.assert_array_equal(bm25_rank_to_score_array([NAN], nan_is_absent=False), [0.001])


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_bm25_array_matches_scalar(r: float) -> None:
    got = float(bm25_rank_to_score_array([r], nan_is_absent=False)[0])
    assert got == bm25_rank_to_score(r)
    assert 0.0 < got <= 1.0


# ------------------------------------------------------------------------- weights


@pytest.mark.parametrize(
    ("given_", "expected"),
    [
        ((0.7, 0.3), (0.7, 0.3)),
        ((2.0, 1.0), (0.5, 0.5)),
        ((1.0, 0.0), (1.0, 0.0)),
        ((0.0, 0.0), (0.7, 0.3)),
        ((-1.0, -5.0), (0.7, 0.3)),
        ((0.2, 0.2), (0.5, 0.5)),
        ((math.nan, 0.4), (0.0, 1.0)),
    ],
)
def test_clamp_weights(given_: tuple[float, float], expected: tuple[float, float]) -> None:
    assert clamp_weights(*given_) == pytest.approx(expected)


# ----------------------------------------------------------------- weighted sum


def test_weighted_sum_spec_examples() -> None:
    got = weighted_sum([0.9, NAN, 0.2, NAN], [NAN, 1.0, 1.0, NAN])
    np.testing.assert_allclose(got[:3], [0.63, 0.30, 0.7 * 0.2 + 0.3], rtol=0, atol=1e-12)
    assert np.isnan(got[3])
    assert weighted_sum([0.2], [1.0], 0.5, 0.5)[0] == pytest.approx(0.6, abs=1e-12)


def test_weighted_sum_clamps_weights_and_masks_padding() -> None:
    # 1.3 is clamped to 1, then (1, 0.3) renormalised to (1/1.3, 0.3/1.3).
    got = weighted_sum([[0.5, 0.1]], [[1.0, 0.2]], 1.3, 0.3, valid=[[True, False]])
    assert got[0, 0] == pytest.approx((0.5 + 0.3) / 1.3)
    assert np.isnan(got[0, 1])


def test_weighted_sum_missing_value() -> None:
    got = weighted_sum([0.9], [NAN], missing=0.5)
    assert got[0] == pytest.approx(0.7 * 0.9 + 0.3 * 0.5)
    with pytest.raises(ValueError, match="missing must be finite"):
        weighted_sum([0.9], [NAN], missing=math.nan)
    with pytest.raises(ValueError, match="shapes differ"):
        weighted_sum([0.9, 0.1], [NAN])


def _leg_pair(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    shape = draw(st.tuples(st.integers(1, 4), st.integers(1, 8)))
    elems = st.one_of(st.just(NAN), st.floats(-1, 1))
    vec = draw(hnp.arrays(np.float64, shape, elements=elems))
    text = draw(hnp.arrays(np.float64, shape, elements=elems))
    return vec, text


legs = st.composite(_leg_pair)()


@given(legs)
def test_weighted_sum_at_weight_one_is_the_single_leg(pair: tuple[np.ndarray, np.ndarray]) -> None:
    vec, text = pair
    only_vec = weighted_sum(vec, text, 1.0, 0.0)
    only_text = weighted_sum(vec, text, 0.0, 1.0)
    np.testing.assert_array_equal(only_vec[~np.isnan(vec)], vec[~np.isnan(vec)])
    np.testing.assert_array_equal(only_text[~np.isnan(text)], text[~np.isnan(text)])
    both_absent = np.isnan(vec) & np.isnan(text)
    np.testing.assert_array_equal(np.isnan(only_vec), both_absent)


# ------------------------------------------------------------------ normalisations

ROW = np.array([3.0, 1.0, NAN, 2.0, 2.0])


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("none", [3.0, 1.0, NAN, 2.0, 2.0]),
        ("minmax", [1.0, 0.0, NAN, 0.5, 0.5]),
        ("zscore", [math.sqrt(2), -math.sqrt(2), NAN, 0.0, 0.0]),
        ("rank", [1.0, 0.25, NAN, 0.75, 0.75]),
        (
            "sigmoid",
            [1 / (1 + math.exp(-3)), 1 / (1 + math.exp(-1)), NAN] + [1 / (1 + math.exp(-2))] * 2,
        ),
        ("max", [1.0, 1 / 3, NAN, 2 / 3, 2 / 3]),
        ("sum", [3 / 8, 1 / 8, NAN, 2 / 8, 2 / 8]),
    ],
)
def test_normalize_values(method: str, expected: list[float]) -> None:
    np.testing.assert_allclose(normalize(ROW, method), expected, rtol=0, atol=1e-12)


def test_normalize_theoretical_uses_the_lower_bound() -> None:
    cos = np.array([0.5, 0.0, -0.5, NAN])
    np.testing.assert_allclose(
        normalize(cos, "theoretical", lower=-1.0), [1.0, 2 / 3, 1 / 3, NAN], atol=1e-12
    )
    # minmax would map the lowest observed value to 0; theoretical does not.
    assert normalize(cos, "minmax")[2] == 0.0
    # Values below the bound clamp to 0; every value at the bound → 0.
    np.testing.assert_allclose(normalize([-2.0, 1.0], "theoretical", lower=-1.0), [0.0, 1.0])
    np.testing.assert_array_equal(normalize([0.0, 0.0], "theoretical", lower=0.0), [0.0, 0.0])


@pytest.mark.parametrize(
    ("method", "one", "equal"),
    [
        ("none", 0.4, 0.4),
        ("minmax", 1.0, 1.0),
        ("theoretical", 1.0, 1.0),
        ("zscore", 0.0, 0.0),
        ("rank", 1.0, 1.0),
        ("sigmoid", 1 / (1 + math.exp(-0.4)), 1 / (1 + math.exp(-0.4))),
        ("max", 1.0, 1.0),
        ("sum", 1.0, 1 / 3),
    ],
)
def test_normalize_edge_rows(method: str, one: float, equal: float) -> None:
    x = np.array(
        [
            [NAN, NAN, NAN],  # empty
            [NAN, 0.4, NAN],  # one item
            [0.4, 0.4, 0.4],  # all equal (0.1+0.1+0.1 style rounding must not leak)
        ]
    )
    got = normalize(x, method, lower=0.0)
    assert np.isnan(got[0]).all()
    assert np.isnan(got[1, [0, 2]]).all()
    assert got[1, 1] == pytest.approx(one, abs=1e-12)
    np.testing.assert_allclose(got[2], [equal] * 3, atol=1e-12)


def test_normalize_all_zero_rows_for_scale_methods() -> None:
    np.testing.assert_array_equal(normalize([0.0, 0.0], "max"), [0.0, 0.0])
    np.testing.assert_array_equal(normalize([0.0, 0.0], "sum"), [0.0, 0.0])


def test_normalize_valid_mask_and_input_untouched() -> None:
    x = np.array([[0.2, 0.8, 0.5]])
    got = normalize(x, "minmax", valid=[[True, True, False]])
    np.testing.assert_array_equal(got, [[0.0, 1.0, NAN]])
    np.testing.assert_array_equal(x, [[0.2, 0.8, 0.5]])


def test_normalize_errors() -> None:
    with pytest.raises(ValueError, match="unknown normalization 'l2'"):
        normalize([1.0], "l2")
    with pytest.raises(ValueError, match="finite lower bound"):
        normalize([1.0], "theoretical")
    with pytest.raises(ValueError, match="finite or NaN"):
        normalize([1.0, np.inf], "minmax")
    with pytest.raises(ValueError, match="at least one dimension"):
        normalize(1.0, "minmax")


RANGES = {
    "minmax": (0.0, 1.0),
    "theoretical": (0.0, 1.0),
    "rank": (0.0, 1.0),
    "sigmoid": (0.0, 1.0),
    "max": (-1.0, 1.0),
    "sum": (-1.0, 1.0),
}

score_rows = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 5), st.integers(1, 12)),
    elements=st.one_of(st.just(NAN), st.floats(-1e6, 1e6), st.sampled_from([0.0, 0.5, 1.0])),
)


@pytest.mark.parametrize("method", NORMALIZATIONS)
@given(x=score_rows)
# deviations whose squares are subnormal: the z-score bound once failed here
@example(x=np.array([[5.43826656e-160, 0.0, 0.0]]))
def test_normalize_properties(method: str, x: np.ndarray) -> None:
    lower = -1e6
    got = normalize(x, method, lower=lower)
    present = ~np.isnan(x)
    # Absent stays absent, present never becomes NaN.
    np.testing.assert_array_equal(np.isnan(got), ~present)
    lo, hi = RANGES.get(method, (-np.inf, np.inf))
    assert np.all((got[present] >= lo) & (got[present] <= hi))
    if method == "zscore":
        n = present.sum(axis=1, keepdims=True)
        bound = np.sqrt(np.maximum(n - 1, 0)) + 1e-9
        assert np.all(np.abs(np.where(present, got, 0.0)) <= bound)
    if method == "rank":
        assert np.all(got[present] > 0)
    # Order preserved (non-strictly) within each row; equal inputs stay equal.
    for row_x, row_g in zip(x, got, strict=True):
        xs, gs = row_x[~np.isnan(row_x)], row_g[~np.isnan(row_x)]
        order = np.argsort(xs, kind="stable")
        assert np.all(np.diff(gs[order]) >= -1e-12)
        for i in range(len(xs)):
            for j in range(len(xs)):
                if xs[i] == xs[j]:
                    assert gs[i] == gs[j]
    # Row-wise: each row normalised alone gives the same values.
    for q in range(x.shape[0]):
        np.testing.assert_array_equal(normalize(x[q], method, lower=lower), got[q])


# --------------------------------------------------------------------------- ranks


def test_scores_to_ranks() -> None:
    np.testing.assert_array_equal(scores_to_ranks([0.2, NAN, 0.9, 0.2]), [1, -1, 0, 2])
    np.testing.assert_array_equal(
        scores_to_ranks([[0.1, 0.5], [0.7, 0.3]], valid=[[True, True], [False, True]]),
        [[1, 0], [-1, 0]],
    )


# ----------------------------------------------------------------------------- RRF


def test_rrf_formula_and_absent() -> None:
    got = rrf([np.array([0, 1, -1, -1]), np.array([2, -1, 0, -1])])
    np.testing.assert_allclose(got[:3], [1 / 61 + 1 / 63, 1 / 62, 1 / 61], rtol=0, atol=1e-15)
    assert np.isnan(got[3])


def test_rrf_weights_and_k() -> None:
    got = rrf([np.array([0]), np.array([1])], weights=[2.0, 1.0], k=10)
    assert got[0] == pytest.approx(2 / 11 + 1 / 12)


def test_rrf_top_bonus_once_per_doc_for_its_best_rank() -> None:
    a = np.array([0, 1, 2, 3, 0, -1])
    b = np.array([0, 5, 9, -1, 1, 2])
    plain = rrf([a, b])
    bonus = rrf([a, b], top_bonus=True) - plain
    np.testing.assert_allclose(bonus, [0.05, 0.02, 0.02, 0.0, 0.05, 0.02], atol=1e-15)


def test_rrf_errors() -> None:
    for k in (0, -5, math.nan, "60"):
        with pytest.raises(ValueError, match="k must be"):
            rrf([np.array([0])], k=k)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ranks must be integers"):
        rrf([np.array([-2])])
    with pytest.raises(ValueError, match="ranks must be integers"):
        rrf([np.array([0.5])])
    with pytest.raises(ValueError, match="expected 2 weights"):
        rrf([np.array([0]), np.array([0])], weights=[1.0])
    with pytest.raises(ValueError, match="weights must be finite and >= 0"):
        rrf([np.array([0]), np.array([0])], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="differ in shape"):
        rrf([np.array([0]), np.array([0, 1])])
    with pytest.raises(ValueError, match="at least one"):
        rrf([])


@st.composite
def rank_legs(draw: st.DrawFn) -> tuple[list[np.ndarray], list[float]]:
    n_legs = draw(st.integers(1, 4))
    q, c = draw(st.integers(1, 3)), draw(st.integers(1, 8))
    ranks = [
        draw(hnp.arrays(np.int64, (q, c), elements=st.integers(-1, 20))) for _ in range(n_legs)
    ]
    weights = draw(st.lists(st.floats(0, 3), min_size=n_legs, max_size=n_legs))
    return ranks, weights


@given(rank_legs(), st.randoms(use_true_random=False), st.booleans())
def test_rrf_invariant_to_leg_order(legs_: tuple, rnd, bonus: bool) -> None:
    ranks, weights = legs_
    perm = list(range(len(ranks)))
    rnd.shuffle(perm)
    a = rrf(ranks, weights, top_bonus=bonus)
    b = rrf([ranks[i] for i in perm], [weights[i] for i in perm], top_bonus=bonus)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(np.isnan(a), ~np.any([r >= 0 for r in ranks], axis=0))


# ------------------------------------------------------------------------ Comb*


def test_comb_family_values() -> None:
    v = np.array([0.8, 0.2, NAN, NAN])
    t = np.array([0.4, NAN, 0.6, NAN])
    np.testing.assert_allclose(comb_sum([v, t])[:3], [1.2, 0.2, 0.6])
    np.testing.assert_allclose(comb_mnz([v, t])[:3], [2.4, 0.2, 0.6])
    np.testing.assert_allclose(comb_max([v, t])[:3], [0.8, 0.2, 0.6])
    np.testing.assert_allclose(comb_min([v, t])[:3], [0.4, 0.2, 0.6])
    np.testing.assert_allclose(comb_sum([v, t], weights=[0.5, 2.0])[:3], [1.2, 0.1, 1.2])
    for f in (comb_sum, comb_mnz, comb_max, comb_min):
        assert np.isnan(f([v, t])[3])
        assert np.isnan(f([v, t], valid=[False, True, True, True])[0])


# ---------------------------------------------------------------------- dispatcher


def test_fuse_dispatches_to_kernels() -> None:
    v = np.array([[0.9, NAN, 0.5]])
    t = np.array([[NAN, 1.0, 0.2]])
    np.testing.assert_array_equal(fuse("wsum", vec=v, text=t), weighted_sum(v, t))
    np.testing.assert_array_equal(
        fuse("wsum", vec=v, text=t, params={"vector_weight": 0.5, "text_weight": 0.5}),
        weighted_sum(v, t, 0.5, 0.5),
    )
    vr, tr = scores_to_ranks(v), scores_to_ranks(t)
    np.testing.assert_array_equal(fuse("rrf", vec=v, text=t), rrf([vr, tr]))
    np.testing.assert_array_equal(
        fuse("rrf", vec_rank=vr, text_rank=tr, params={"k": 10, "top_bonus": True}),
        rrf([vr, tr], k=10, top_bonus=True),
    )
    np.testing.assert_array_equal(
        fuse("rrf", vec_rank=vr, text_rank=tr, params={"vector_weight": 2, "text_weight": 1}),
        rrf([vr, tr], weights=[2, 1]),
    )
    np.testing.assert_array_equal(fuse("combmnz", vec=v, text=t), comb_mnz([v, t]))
    np.testing.assert_array_equal(
        fuse("combsum", vec=v, text=t, params={"weights": [1, 3]}), comb_sum([v, t], [1, 3])
    )
    np.testing.assert_array_equal(fuse("combmax", vec=v, text=t), comb_max([v, t]))
    np.testing.assert_array_equal(fuse("vector", vec=v), v)
    np.testing.assert_array_equal(
        fuse("keyword", text=t, valid=[[True, False, True]]), [[NAN, NAN, 0.2]]
    )
    assert {"wsum", "rrf", "combsum", "combmnz", "combmax", "vector", "keyword"} <= set(FUSIONS)


def test_fuse_errors() -> None:
    v = np.array([0.5])
    with pytest.raises(ValueError, match="unknown fusion method 'borda'"):
        fuse("borda", vec=v, text=v)
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['vector_wieght'\]"):
        fuse("wsum", vec=v, text=v, params={"vector_wieght": 0.5})
    with pytest.raises(ValueError, match="needs both vec and text"):
        fuse("combsum", vec=v)
    with pytest.raises(ValueError, match="needs the text scores"):
        fuse("keyword", vec=v)
    with pytest.raises(ValueError, match="rrf needs"):
        fuse("rrf", vec=v)
    with pytest.raises(ValueError, match="k must be > 0"):
        fuse("rrf", vec=v, text=v, params={"k": 0})


# ------------------------------------------------------------ ranx differential


def _random_runs(seed: int, n_queries: int = 25, n_docs: int = 30) -> tuple[list, list]:
    """Two runs as dicts {qid: {docid: score}} with >= 2 distinct scores per query."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(2):
        run = {}
        for q in range(n_queries):
            k = int(rng.integers(2, n_docs))
            docs = rng.choice(n_docs, size=k, replace=False)
            scores = rng.uniform(-5, 5, size=k)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs[0], runs[1]


def _to_arrays(
    run_a: dict, run_b: dict
) -> tuple[list[str], list[list[str]], np.ndarray, np.ndarray]:
    qids = sorted(run_a)
    docs = [sorted(set(run_a[q]) | set(run_b[q])) for q in qids]
    width = max(len(d) for d in docs)
    a = np.full((len(qids), width), NAN)
    b = np.full((len(qids), width), NAN)
    for i, q in enumerate(qids):
        for j, d in enumerate(docs[i]):
            a[i, j] = run_a[q].get(d, NAN)
            b[i, j] = run_b[q].get(d, NAN)
    return qids, docs, a, b


def _compare(ours: np.ndarray, theirs, qids: list[str], docs: list[list[str]]) -> None:
    expected = np.full(ours.shape, NAN)
    for i, q in enumerate(qids):
        for j, d in enumerate(docs[i]):
            expected[i, j] = theirs.run[q].get(d, NAN)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9)


@pytest.fixture(scope="module")
def ranx_mod():
    ranx = pytest.importorskip("ranx")
    # Tiny calls up front pay numba's compile time (~40 s cold) once for the module.
    small = {"q0": {"d10": 1.0, "d11": 0.5}}  # same id widths as the test runs
    for norm, method in (("min-max", "sum"), ("min-max", "mnz"), (None, "rrf")):
        ranx.fuse([ranx.Run(small), ranx.Run(small)], norm=norm, method=method)
    return ranx


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rrf_matches_ranx(ranx_mod, seed: int) -> None:
    run_a, run_b = _random_runs(seed)
    qids, docs, a, b = _to_arrays(run_a, run_b)
    ours = rrf([scores_to_ranks(a), scores_to_ranks(b)], k=60)
    theirs = ranx_mod.fuse([ranx_mod.Run(run_a), ranx_mod.Run(run_b)], norm=None, method="rrf")
    _compare(ours, theirs, qids, docs)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["sum", "mnz"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_comb_over_minmax_matches_ranx(ranx_mod, method: str, seed: int) -> None:
    run_a, run_b = _random_runs(seed)
    qids, docs, a, b = _to_arrays(run_a, run_b)
    legs_ = [normalize(a, "minmax"), normalize(b, "minmax")]
    ours = comb_sum(legs_) if method == "sum" else comb_mnz(legs_)
    theirs = ranx_mod.fuse(
        [ranx_mod.Run(run_a), ranx_mod.Run(run_b)], norm="min-max", method=method
    )
    _compare(ours, theirs, qids, docs)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ours_name", "ranx_name"), [("minmax", "min-max"), ("zscore", "zmuv"), ("rank", "rank")]
)
def test_normalizations_match_ranx(ranx_mod, ours_name: str, ranx_name: str) -> None:
    run_a, run_b = _random_runs(3)
    qids, docs, a, _ = _to_arrays(run_a, run_b)
    theirs = ranx_mod.normalize(ranx_mod.Run(run_a), ranx_name)
    _compare(normalize(a, ours_name), theirs, qids, docs)


@pytest.mark.slow
def test_max_normalization_matches_ranx_on_positive_scores(ranx_mod) -> None:
    run_a, run_b = _random_runs(4)
    run_a = {q: {d: abs(s) + 0.01 for d, s in docs.items()} for q, docs in run_a.items()}
    qids, docs, a, _ = _to_arrays(run_a, run_b)
    theirs = ranx_mod.normalize(ranx_mod.Run(run_a), "max")
    _compare(normalize(a, "max"), theirs, qids, docs)


def test_rank_normalization_ties_share_best_rank() -> None:
    # ranx breaks ties by position; memlab keeps equal scores equal (documented).
    np.testing.assert_allclose(normalize([0.5, 0.5, 0.1, 0.9], "rank"), [0.75, 0.75, 0.25, 1.0])


@given(st.lists(st.floats(-10, 10), min_size=2, max_size=10, unique=True))
def test_comb_mnz_with_an_absent_leg_is_the_other_leg(xs: list[float]) -> None:
    assume(max(xs) > min(xs))
    x = np.array(xs)
    got = comb_mnz([normalize(x, "minmax"), np.full_like(x, NAN)])
    assert not np.isnan(got).any()
    assert got.min() == 0.0 and got.max() == 1.0
