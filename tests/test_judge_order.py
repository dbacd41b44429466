"""The judging order (minimal test collections): exact bounds of every pair's difference,
a pair decided only when no labelling can flip it, and on simulated qrels the ordered
pool deciding a preset pair with at most half the judgments a random order needs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.eval.judge.order import PairOrder, decide_count, rank_gains


@st.composite
def instances(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, str]:
    n = draw(st.integers(1, 8))
    s = draw(st.integers(2, 3))
    ranks = np.array(
        draw(st.lists(st.lists(st.integers(-1, 4), min_size=s, max_size=s), min_size=n, max_size=n))
    )
    labels = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, np.nan]), min_size=n, max_size=n)))
    return ranks, labels, draw(st.sampled_from(["precision", "dcg"]))


@settings(max_examples=150, deadline=None)
@given(instances())
def test_bounds_are_the_min_and_max_over_every_labelling(inst) -> None:
    ranks, labels, gain = inst
    order = PairOrder(ranks, gain)
    g = rank_gains(ranks, gain)
    lo, hi = order.bounds(labels)
    unknown = np.flatnonzero(np.isnan(labels))
    deltas = []
    for bits in itertools.product([0.0, 1.0], repeat=len(unknown)):
        full = labels.copy()
        full[unknown] = bits
        deltas.append([full @ (g[:, a] - g[:, b]) for a, b in order.pairs])
    d = np.array(deltas)
    assert np.allclose(lo, d.min(axis=0)) and np.allclose(hi, d.max(axis=0))
    # decided exactly when every labelling gives the same sign (or the same value)
    same = (d.min(axis=0) > 1e-9) | (d.max(axis=0) < -1e-9) | (np.ptp(d, axis=0) <= 1e-9)
    assert (order.undecided(labels) == ~same).all()
    nxt = order.next(labels)
    if nxt is None:
        # nothing left can move an undecided pair
        assert all(
            not order.undecided(labels)[p] or np.allclose(order.coef[unknown, p], 0)
            for p in range(len(order.pairs))
        )
    else:
        assert np.isnan(labels[nxt])
        assert any(order.undecided(labels) & (np.abs(order.coef[nxt]) > 0))


def _simulated(seed: int, queries: int = 30, candidates: int = 25, k: int = 10):
    """Two presets' top k over the same candidates per query: a shared noisy score plus
    each preset's own noise, the first a little better at putting relevant ones up (20 %
    of the candidates relevant); the pool is their union, the truth the relevance."""
    rng = np.random.default_rng(seed)
    ranks, truth = [], []
    for _ in range(queries):
        rel = rng.random(candidates) < 0.2
        base = rel + rng.normal(0, 0.8, candidates)
        a = np.argsort(-(base + 0.3 * rel + rng.normal(0, 0.5, candidates)))[:k].tolist()
        b = np.argsort(-(base + rng.normal(0, 0.5, candidates)))[:k].tolist()
        for d in sorted(set(a) | set(b)):
            ranks.append([a.index(d) if d in a else -1, b.index(d) if d in b else -1])
            truth.append(float(rel[d]))
    return np.array(ranks), np.array(truth)


@pytest.mark.parametrize("seed", range(6))
def test_the_ordered_pool_decides_a_pair_with_at_most_half_the_random_judgments(seed: int) -> None:
    ranks, truth = _simulated(seed)
    order = PairOrder(ranks, "precision")
    ordered = decide_count(order, truth)
    rng = np.random.default_rng(100 + seed)
    random = np.mean([decide_count(order, truth, rng.permutation(len(truth))) for _ in range(20)])
    assert not order.undecided(truth).any()  # fully judged, the pair is decided
    assert ordered <= 0.5 * random, (ordered, random)


def test_a_decided_pair_is_asked_nothing_more() -> None:
    # a relevant span only the first system returns decides it is better at once: every
    # other span either ranks alike in both (weight 0) or cannot flip the sign
    ranks = np.array([[0, -1], [1, 1], [2, 2]])
    order = PairOrder(ranks, "precision")
    labels = np.array([1.0, np.nan, np.nan])
    assert not order.undecided(labels).any()
    assert order.next(labels) is None and order.remaining(labels) == 0
    with pytest.raises(ValueError, match="gain must be one of"):
        PairOrder(ranks, "map")
