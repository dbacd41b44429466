"""Which span to judge next: the one whose label can change the most undecided comparisons
(Carterette, Allan & Sitaraman, "Minimal test collections for retrieval evaluation",
SIGIR 2006).

Each system's score on a linear metric is a sum over the pool of ``rel(i) · g_s(i)``, where
``g_s(i)`` is the gain of the rank system ``s`` gives span ``i`` in its top K (0 when it does
not return it): precision@K weighs every rank alike, DCG@K rank r (0-based) by
``1 / log2(r + 2)`` (``vocab.JUDGE_GAINS``). The difference of a pair (a, b) summed over the
questions is then ``Δ = Σ_i rel(i) · c_i`` with ``c_i = g_a(i) − g_b(i)``: its sign is the
comparison. With some labels known, Δ lies in ``[lo, hi]``: ``lo`` = the known part plus
every negative ``c_i`` of an unknown span, ``hi`` = the known part plus every positive one.
The pair is decided when the interval excludes 0 (or has shrunk to a point: a tie).

Only a span with ``c_i ≠ 0`` for an undecided pair can change a sign (spans both systems
rank alike weigh nothing and are never asked for it). Among those, a span's weight is what
its label is expected to bring toward deciding: a pair leaning a > b (``lo + hi ≥ 0``) is
decided when ``lo`` passes 0, and a span raises ``lo`` by ``c_i`` when ``c_i > 0`` and it is
relevant, by ``|c_i|`` when ``c_i < 0`` and it is not; symmetrically for a pair leaning b > a
and ``hi``. With ``p`` the share of relevant answers so far (add-one: ``(r + 1) / (n + 2)``),
the weight is ``Σ`` over undecided pairs of ``p · c⁺ + (1 − p) · c⁻`` (leaning a > b) or
``(1 − p) · c⁺ + p · c⁻`` (leaning b > a): MTC's weight ``|c_i|`` scaled by the chance that
the label moves the bound the evidence points to. The next span is the heaviest (ties: the
best rank any system gives it, then pool order); when every pair is decided, or no open
span can change one, the pool is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from memlab.config.vocab import JUDGE_GAINS

__all__ = ["TOLERANCE", "PairOrder", "decide_count", "rank_gains"]

# Sums of gains closer than this are equal (float noise of 1/log2 terms).
TOLERANCE = 1e-9


def rank_gains(ranks: np.ndarray, gain: str = "precision") -> np.ndarray:
    """The gain of every (span, system) from its 0-based rank (−1: not returned → 0):
    ``precision``: 1; ``dcg``: ``1 / log2(rank + 2)``. Unknown ``gain`` raises
    ``ValueError``."""
    r = np.asarray(ranks, dtype=np.float64)
    if gain == "precision":
        g = np.ones_like(r)
    elif gain == "dcg":
        g = 1.0 / np.log2(np.maximum(r, 0.0) + 2.0)
    else:
        raise ValueError(f"gain must be one of {', '.join(JUDGE_GAINS)}; got {gain!r}")
    return np.where(r >= 0, g, 0.0)


class PairOrder:
    """The judging order over a pool: ``ranks`` [N spans, S systems] (0-based rank of the
    span in the system's top K, −1 when it does not return it), every pair of the S
    systems compared on the linear ``gain`` (module docstring). Labels are float [N]:
    1 relevant, 0 not, NaN unknown."""

    def __init__(self, ranks: np.ndarray, gain: str = "precision") -> None:
        r = np.asarray(ranks, dtype=np.int64)
        if r.ndim != 2:
            raise ValueError(f"ranks must be [spans, systems], got shape {r.shape}")
        self.ranks = r
        self.pairs = list(combinations(range(r.shape[1]), 2))
        g = rank_gains(r, gain)
        a = [i for i, _ in self.pairs]
        b = [j for _, j in self.pairs]
        self.coef = g[:, a] - g[:, b]  # [N, P]
        present = np.where(r >= 0, r, np.iinfo(np.int64).max)
        self.best_rank = present.min(axis=1) if r.shape[1] else np.zeros(len(r), np.int64)

    def bounds(self, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lo [P], hi [P]): the range of each pair's Δ over every labelling of the
        unknown spans."""
        lab = np.asarray(labels, dtype=np.float64)
        unknown = np.isnan(lab)
        known = np.where(unknown, 0.0, lab) @ self.coef
        c = self.coef[unknown]
        return known + np.minimum(c, 0.0).sum(axis=0), known + np.maximum(c, 0.0).sum(axis=0)

    def undecided(self, labels: np.ndarray) -> np.ndarray:
        """bool [P]: the pairs whose sign the unknown labels can still change."""
        return _open_pairs(*self.bounds(labels))

    def weights(self, labels: np.ndarray, blocked: np.ndarray | None = None) -> np.ndarray:
        """float [N]: each unknown, not ``blocked`` (e.g. skipped) span's expected progress
        toward deciding the undecided pairs (module docstring); 0 for the others."""
        lab = np.asarray(labels, dtype=np.float64)
        unknown = np.isnan(lab)
        open_ = unknown if blocked is None else unknown & ~np.asarray(blocked)
        lo, hi = self.bounds(lab)
        und = _open_pairs(lo, hi)
        if not und.any():
            return np.zeros(len(lab))
        p = (float(lab[~unknown].sum()) + 1.0) / (float((~unknown).sum()) + 2.0)
        c = self.coef[:, und]
        pos, neg = np.maximum(c, 0.0), np.maximum(-c, 0.0)
        leans_a = (lo + hi)[und] >= 0.0
        gain = np.where(leans_a, p * pos + (1.0 - p) * neg, (1.0 - p) * pos + p * neg)
        return np.where(open_, gain.sum(axis=1), 0.0)

    def next(self, labels: np.ndarray, blocked: np.ndarray | None = None) -> int | None:
        """The span to ask next (the heaviest; ties by best rank, then pool order), or
        None when no open span can change an undecided pair."""
        w = self.weights(labels, blocked)
        if not (w > TOLERANCE).any():
            return None
        top = np.flatnonzero(w >= w.max() - TOLERANCE)
        return int(top[np.lexsort((top, self.best_rank[top]))[0]])

    def remaining(self, labels: np.ndarray, blocked: np.ndarray | None = None) -> int:
        """How many open spans can still change an undecided pair."""
        return int((self.weights(labels, blocked) > TOLERANCE).sum())


def decide_count(order: PairOrder, truth: np.ndarray, sequence: Sequence[int] | None = None) -> int:
    """How many judgments decide every pair when the true labels are ``truth`` (0/1 [N]):
    following `PairOrder.next` (``sequence`` None), or judging the spans in the fixed
    ``sequence`` (a random order, the baseline). 0 when every pair is decided already."""
    labels = np.full(len(truth), np.nan)
    asked = 0
    if sequence is None:
        while (i := order.next(labels)) is not None:
            labels[i] = truth[i]
            asked += 1
        return asked
    for i in sequence:
        if not order.undecided(labels).any():
            break
        labels[i] = truth[i]
        asked += 1
    return asked


def _open_pairs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """bool [P]: the pairs whose difference bounds ``[lo, hi]`` still allow either sign
    (neither bound clear of 0 by ``TOLERANCE``, and the interval wider than it)."""
    return ~((lo > TOLERANCE) | (hi < -TOLERANCE) | (hi - lo <= TOLERANCE))
