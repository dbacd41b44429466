"""Score maps, normalisations and fusion kernels over candidate arrays (pure numpy).

Spec section 5 (OpenClaw's merge) and the peers' alternatives (RRF, CombSUM/MNZ/MAX,
normalisations as in ranx). Arrays are ``[C]`` (one query) or ``[Q, C]`` (Q queries
× C padded candidates); every operation works row-wise along the last axis with no
Python loop over queries.

Conventions:
- scores are float64; an absent leg score is ``NaN``; ``valid`` (bool, broadcastable
  to the scores) masks padding slots, which come out as ``NaN``;
- ranks are 0-based int arrays with ``-1`` for absent; RRF is ``w / (k + rank + 1)``
  with k = 60, so rank 0 contributes 1/61, as in ranx and QMD;
- fused outputs are ``NaN`` where no leg has the candidate (or it is invalid).

Size: two halves over the conventions above: normalisations (``normalize``,
``floor_value``, ``scores_to_ranks``) and fusion kernels (``weighted_sum``, ``rrf``,
``comb_*``, ``fuse``). They could split; they stay together as ``fuse`` ranks RRF's
legs with ``scores_to_ranks`` and ``memlab.stages.legs`` uses both.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from memlab.config.vocab import NORMALIZATIONS, SINGLE_LEG_FUSIONS

__all__ = [
    "FUSIONS",
    "NORMALIZATIONS",
    "bm25_rank_to_score",
    "bm25_rank_to_score_array",
    "clamp_weights",
    "comb_max",
    "comb_min",
    "comb_mnz",
    "comb_sum",
    "floor_value",
    "fuse",
    "normalize",
    "rrf",
    "scores_to_ranks",
    "weighted_sum",
]

DEFAULT_VECTOR_WEIGHT = 0.7
DEFAULT_TEXT_WEIGHT = 0.3
RRF_K = 60
# QMD: a document ranked #1 in any list gets +0.05, #2-3 +0.02 (best bonus only).
RRF_BONUS_FIRST = 0.05
RRF_BONUS_TOP3 = 0.02


# --------------------------------------------------------------------------- bm25


def bm25_rank_to_score(rank: float) -> float:
    """OpenClaw's map from an FTS5 ``bm25()`` value r to a keyword score in (0, 1].

    r < 0 → |r|/(1+|r|); r ≥ 0 → 1/(1+r); non-finite (NaN, ±inf) → 0.001.
    Examples: −1 → 0.5, −3 → 0.75, 0 → 1.0, 1 → 0.5.
    """
    r = float(rank)
    if not math.isfinite(r):
        return 0.001
    if r < 0:
        return -r / (1.0 - r)
    return 1.0 / (1.0 + r)


def bm25_rank_to_score_array(ranks: Any, *, nan_is_absent: bool = True) -> np.ndarray:
    """Vectorised :func:`bm25_rank_to_score` over an array of bm25 values.

    Same map, except that ``NaN`` means "the keyword leg did not find this
    candidate" and stays ``NaN`` (``nan_is_absent=True``, the pipeline's
    convention); ±inf → 0.001. With ``nan_is_absent=False`` NaN → 0.001 exactly
    as the scalar function.
    """
    r = np.asarray(ranks, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(r < 0, -r / (1.0 - r), 1.0 / (1.0 + r))
    out = np.where(np.isinf(r), 0.001, out)
    return np.where(np.isnan(r), np.nan if nan_is_absent else 0.001, out)


def clamp_weights(vector_weight: float, text_weight: float) -> tuple[float, float]:
    """OpenClaw's hybrid weights: each clamped to [0, 1], then renormalised to sum 1.

    Both 0 after clamping → (0.7, 0.3). A NaN weight counts as 0 (a missing
    setting must not poison every score). Examples: (0.7, 0.3) → (0.7, 0.3);
    (2, 1) → (0.5, 0.5); (1, 0) → (1, 0); (0, 0) → (0.7, 0.3).
    """
    v = 0.0 if math.isnan(vector_weight) else min(1.0, max(0.0, float(vector_weight)))
    t = 0.0 if math.isnan(text_weight) else min(1.0, max(0.0, float(text_weight)))
    total = v + t
    if total <= 0:
        return DEFAULT_VECTOR_WEIGHT, DEFAULT_TEXT_WEIGHT
    return v / total, t / total


# ----------------------------------------------------------------- normalisations


def _present(x: np.ndarray, valid: Any) -> np.ndarray:
    present = ~np.isnan(x)
    if valid is not None:
        present &= np.broadcast_to(np.asarray(valid, dtype=bool), x.shape)
    return present


def _as_scores(scores: Any) -> np.ndarray:
    x = np.array(scores, dtype=np.float64)  # a copy: callers' arrays are never written
    if x.ndim == 0:
        raise ValueError("scores must be an array with at least one dimension")
    if np.isinf(x).any():
        raise ValueError("scores must be finite or NaN (absent), got ±inf")
    return x


def _row_min_max(x: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # ``initial``: a query with no candidate (an empty workspace) is a row of width 0,
    # whose min/max numpy cannot reduce without one; such a row has no present value.
    lo = np.where(present, x, np.inf).min(axis=-1, keepdims=True, initial=np.inf)
    hi = np.where(present, x, -np.inf).max(axis=-1, keepdims=True, initial=-np.inf)
    return lo, hi


def _competition_rank(x: np.ndarray, present: np.ndarray) -> np.ndarray:
    """0-based rank by descending value; ties share the best rank (1, 2, 2, 4 style)."""
    key = np.where(present, -x, np.inf)
    order = np.argsort(key, axis=-1, kind="stable")
    s = np.take_along_axis(key, order, axis=-1)
    idx = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    is_new = np.ones(x.shape, dtype=bool)
    is_new[..., 1:] = s[..., 1:] != s[..., :-1]
    first = np.maximum.accumulate(np.where(is_new, idx, 0), axis=-1)
    ranks = np.empty(x.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, first.astype(np.float64), axis=-1)
    return ranks


def normalize(
    scores: Any,
    method: str,
    *,
    valid: Any = None,
    lower: float | None = None,
) -> np.ndarray:
    """Normalise each row (last axis) over its present values; absent stays NaN.

    Present = not NaN and ``valid``. All statistics are per row over present values
    only. Methods, with their edge cases (empty row → all NaN for every method):

    - ``"none"``: x unchanged (raw cosine, or the bm25 map already in (0, 1]).
    - ``"minmax"``: (x − min)/(max − min), range [0, 1]; all equal or one item → 1.
    - ``"theoretical"``: (max(x, lower) − lower)/(max − lower) with ``lower`` a known
      lower bound of the score (−1 for cosine, 0 for BM25; Bruch et al.), not the
      observed min; range [0, 1]; values below ``lower`` clamp to 0; max ≤ lower
      (every value at the bound) → 0, since a score at its floor carries no evidence.
    - ``"zscore"``: (x − mean)/std (population std, as ranx "zmuv"); all equal or one
      item → 0; range |z| ≤ sqrt(n − 1).
    - ``"rank"``: 1 − r/n, r = 0-based rank by descending score, n = number present
      (ranx "rank"); ties share the best rank so equal scores stay equal; range
      (0, 1], top → 1; one item → 1.
    - ``"sigmoid"``: 1/(1 + exp(−x)) element-wise, range [0, 1] (0 and 1 only by
      float saturation); for raw FTS5 bm25 pass |r|.
    - ``"max"``: x / max|x| (ranx "max" for non-negative scores), range [−1, 1]
      ([0, 1] for non-negative scores); all zero → 0.
    - ``"sum"``: x / Σ|x| (sum-to-one for non-negative scores; ranx's "sum" also
      subtracts the min first), range [−1, 1]; all zero → 0.

    Every method preserves the order of present values (non-strictly). Accepts
    ``[C]`` or ``[Q, C]``; returns a new float64 array. ±inf scores, an unknown
    method, or ``"theoretical"`` without a finite ``lower`` raise ValueError.
    """
    if method not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {method!r}; expected one of {NORMALIZATIONS}")
    x = _as_scores(scores)
    present = _present(x, valid)
    out = _normalize_present(x, present, method, lower)
    return np.where(present, out, np.nan)


def _normalize_present(
    x: np.ndarray, present: np.ndarray, method: str, lower: float | None
) -> np.ndarray:
    # Absent slots are computed on a placeholder and masked by the caller.
    xp = np.where(present, x, 0.0)
    n = present.sum(axis=-1, keepdims=True)
    if method == "none":
        return xp
    if method == "sigmoid":
        from scipy.special import expit  # imported here: scipy.special costs ~1 s at start-up

        return expit(xp)
    if method in ("minmax", "zscore"):
        lo, hi = _row_min_max(x, present)
        same = hi <= lo
        if method == "minmax":
            span = np.where(same, 1.0, hi - lo)
            return np.where(same, 1.0, (xp - lo) / span)
        _, dev, std = _row_spread(xp, present, n)
        # Equal values can leave a rounding-size std, so "all equal" is tested on min/max.
        return np.where(same, 0.0, dev / np.where(same | (std == 0), 1.0, std))
    if method == "theoretical":
        if lower is None or not math.isfinite(lower):
            raise ValueError(f"theoretical normalization needs a finite lower bound, got {lower}")
        _, hi = _row_min_max(x, present)
        above = hi > lower
        span = np.where(above, hi - lower, 1.0)
        return np.where(above, (np.maximum(xp, lower) - lower) / span, 0.0)
    if method == "rank":
        return 1.0 - _competition_rank(x, present) / np.maximum(n, 1)
    if method == "max":
        denom = np.abs(xp).max(axis=-1, keepdims=True, initial=0.0)
    else:  # "sum"
        denom = np.abs(xp).sum(axis=-1, keepdims=True)
    return np.where(denom > 0, xp / np.where(denom > 0, denom, 1.0), 0.0)


# A row whose squared deviations sum below this has its largest squares near the subnormal
# range (< 2**-1022), where they lose digits; every other row's std is computed directly.
_TINY_SQUARES = 2.0**-900


def _row_spread(
    xp: np.ndarray, present: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the mean of the present values, their deviations from it (0 where absent)
    and the population std sqrt(Σ dev² / n). A row whose squares sum below
    ``_TINY_SQUARES`` (deviations near 1e-160, whose subnormal squares would push a
    z-score past its bound sqrt(n − 1)) is squared after dividing by a power of two near
    its largest deviation, which is exact; ordinary rows take the direct formula."""
    mean = xp.sum(axis=-1, keepdims=True) / np.maximum(n, 1)
    dev = np.where(present, xp - mean, 0.0)
    ss = (dev**2).sum(axis=-1, keepdims=True)
    std = np.sqrt(ss / np.maximum(n, 1))
    flat_ss, flat_std = ss.reshape(-1), std.reshape(-1)
    rows = np.flatnonzero(flat_ss < _TINY_SQUARES)
    if rows.size:
        sub = dev.reshape(flat_ss.size, dev.shape[-1])[rows]
        big = np.abs(sub).max(axis=-1, initial=0.0)
        scale = np.where(big > 0, np.ldexp(1.0, np.frexp(big)[1]), 1.0)
        count = np.maximum(n, 1).reshape(-1)[rows] if np.ndim(n) else np.maximum(n, 1)
        flat_std[rows] = np.sqrt(((sub / scale[:, None]) ** 2).sum(axis=-1) / count) * scale
    return mean, dev, flat_std.reshape(std.shape)


def floor_value(scores: Any, method: str, lower: float, *, valid: Any = None) -> np.ndarray:
    """The image of a leg's lower bound ``lower`` under the normalisation ``normalize``
    applies to each row: the value a candidate the leg did not find scores, so that it
    sits below every candidate the leg found. Returns ``[..., 1]`` (one value per row).

    Statistics are those of :func:`normalize` (present values only). Per method:

    - ``"none"``: ``lower``; ``"theoretical"``, ``"rank"``: 0 (below every present value:
      ``rank`` gives present values 1 − r/n ≥ 1/n);
    - ``"minmax"``: max((lower − min)/(max − min), −1); a row whose present values are
      all equal maps them to 1 and the floor to 0;
    - ``"zscore"``: max((lower − mean)/std, z_min − max(z_max − z_min, 1)); a row whose
      present values are all equal (or a single value) maps them to 0 and the floor to −1
      (one unit below, as no spread is known);

    The clamps keep the floor below every present value but no further below the lowest
    than the present values' own spread (at least one unit): matches bunched far from
    the bound (bm25 scores 10.0 and 10.001) would otherwise put a non-match at −10⁴ and
    let the keyword leg alone decide every fused score.
    - ``"sigmoid"``: 1/(1 + exp(−lower));
    - ``"max"`` / ``"sum"``: lower / max|x| (Σ|x|); 0 when the row is all zero;
    - a row with no present value: the value of an empty row's floor under the same
      rules (``lower`` for none, 0 otherwise, −1 for zscore).

    For a keyword leg (``lower`` = 0, present scores > 0) every method but ``sigmoid`` of a
    score at the bound puts the floor strictly below each present value. ``lower`` must be
    finite (ValueError).
    """
    if method not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {method!r}; expected one of {NORMALIZATIONS}")
    if not math.isfinite(lower):
        raise ValueError(f"lower must be finite, got {lower}")
    x = _as_scores(scores)
    present = _present(x, valid)
    shape = (*x.shape[:-1], 1)
    if method == "none":
        return np.full(shape, float(lower))
    if method in ("theoretical", "rank"):
        return np.zeros(shape)
    if method == "sigmoid":
        from scipy.special import expit

        return np.full(shape, float(expit(lower)))
    xp = np.where(present, x, 0.0)
    n = present.sum(axis=-1, keepdims=True)
    if method in ("minmax", "zscore"):
        lo, hi = _row_min_max(x, present)
        same = hi <= lo
        if method == "minmax":
            span = np.where(same, 1.0, hi - lo)
            image = np.where(same, 0.0, (lower - np.where(same, 0.0, lo)) / span)
            return np.maximum(image, -1.0)  # present values span [0, 1]: at most 1 below
        mean, _, std = _row_spread(xp, present, n)
        flat = same | (std == 0)
        safe = np.where(flat, 1.0, std)
        image = np.where(flat, -1.0, (lower - mean) / safe)
        z_lo, z_hi = (lo - mean) / safe, (hi - mean) / safe
        gap = np.maximum(z_hi - z_lo, 1.0)  # the matches' own spread, at least one unit
        return np.where(flat, -1.0, np.maximum(image, z_lo - gap))
    if method == "max":
        denom = np.abs(xp).max(axis=-1, keepdims=True)
    else:  # "sum"
        denom = np.abs(xp).sum(axis=-1, keepdims=True)
    return np.where(denom > 0, lower / np.where(denom > 0, denom, 1.0), 0.0)


def scores_to_ranks(scores: Any, *, valid: Any = None) -> np.ndarray:
    """0-based ranks by descending score per row; absent (NaN or not valid) → −1.

    Ties keep column order (a stable sort), as a leg's list keeps its row order.
    ``[0.2, NaN, 0.9, 0.2]`` → ``[1, -1, 0, 2]``.
    """
    x = _as_scores(scores)
    present = _present(x, valid)
    order = np.argsort(np.where(present, -x, np.inf), axis=-1, kind="stable")
    ranks = np.empty(x.shape, dtype=np.int64)
    idx = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    np.put_along_axis(ranks, order, idx, axis=-1)
    return np.where(present, ranks, -1)


# -------------------------------------------------------------------- fusion kernels


def _mask(out: np.ndarray, valid: Any) -> np.ndarray:
    if valid is None:
        return out
    return np.where(np.broadcast_to(np.asarray(valid, dtype=bool), out.shape), out, np.nan)


def weighted_sum(
    vec: Any,
    text: Any,
    vector_weight: float = DEFAULT_VECTOR_WEIGHT,
    text_weight: float = DEFAULT_TEXT_WEIGHT,
    *,
    missing: float = 0.0,
    valid: Any = None,
) -> np.ndarray:
    """OpenClaw's merge: wv·vec + wt·text with the weights of :func:`clamp_weights`.

    Out-of-range weights are clamped, not rejected (OpenClaw's behaviour). A leg
    that did not find a candidate (NaN) contributes ``missing`` (default 0, as
    OpenClaw); NaN where neither leg found it or it is not ``valid``. Examples:
    vector-only 0.9 → 0.63; keyword-only 1.0 → 0.30; weights 0.5/0.5 with vector
    0.2 and text 1.0 → 0.6.
    """
    if not math.isfinite(missing):
        raise ValueError(f"missing must be finite, got {missing}")
    wv, wt = clamp_weights(vector_weight, text_weight)
    v = np.asarray(vec, dtype=np.float64)
    t = np.asarray(text, dtype=np.float64)
    if v.shape != t.shape:
        raise ValueError(f"vec and text shapes differ: {v.shape} vs {t.shape}")
    v_absent, t_absent = np.isnan(v), np.isnan(t)
    out = wsum_kernel(np.where(v_absent, missing, v), np.where(t_absent, missing, t), wv, wt)
    return _mask(np.where(v_absent & t_absent, np.nan, out), valid)


def wsum_kernel(vec: np.ndarray, text: np.ndarray, wv: float, wt: float) -> np.ndarray:
    """``wv·vec + wt·text`` elementwise, the weights as given (the one weighted-sum
    formula: `weighted_sum` and the pipeline's fusion stage both compute through it;
    absent legs must already hold their fill value)."""
    return wv * vec + wt * text


def rrf_kernel(ranks: np.ndarray, weights: np.ndarray, k: float) -> np.ndarray:
    """``Σ_i w_i / (k + rank_i + 1)`` over axis 0 of ``ranks`` [L, …] (0-based, −1 =
    absent: adds 0), ``weights`` [L]; no validation (the one RRF formula: `rrf` and the
    pipeline's fusion stage both compute through it)."""
    w = np.asarray(weights, dtype=np.float64).reshape((-1,) + (1,) * (ranks.ndim - 1))
    return np.where(ranks >= 0, w / (k + ranks + 1.0), 0.0).sum(axis=0)


def rrf_top_bonus(ranks: np.ndarray) -> np.ndarray:
    """QMD's top-rank bonus per document from ``ranks`` [L, …] (−1 = absent): +0.05 when
    its best rank over the legs is 0, +0.02 when it is 1 or 2, else 0 (and 0 when no
    leg found it)."""
    best = np.where(ranks >= 0, ranks, np.inf).min(axis=0)
    return np.where(best == 0, RRF_BONUS_FIRST, np.where(best <= 2, RRF_BONUS_TOP3, 0.0))


def _check_weights(weights: Sequence[float] | None, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"expected {n} weights (one per leg), got {len(w)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be finite and >= 0, got {list(w)}")
    return w


def _stack(arrays: Sequence[Any], dtype: Any, what: str) -> np.ndarray:
    if len(arrays) == 0:
        raise ValueError(f"need at least one {what} array")
    stacked = [np.asarray(a, dtype=dtype) for a in arrays]
    if any(a.shape != stacked[0].shape for a in stacked):
        raise ValueError(f"{what} arrays differ in shape: {[a.shape for a in stacked]}")
    return np.stack(stacked)


def rrf(
    ranks: Sequence[Any],
    weights: Sequence[float] | None = None,
    *,
    k: float = RRF_K,
    top_bonus: bool = False,
    valid: Any = None,
) -> np.ndarray:
    """Reciprocal rank fusion: Σ_i w_i / (k + rank_i + 1) over legs that found the doc.

    ``ranks``: one 0-based int array per leg, −1 = absent. Unweighted (w = 1) with
    k = 60 this is ranx's ``rrf`` (rank 0 → 1/61). ``top_bonus`` adds QMD's bonus
    once per document, for its best rank over all legs: +0.05 if ranked first in
    any leg, else +0.02 if its best rank is 2nd or 3rd. NaN where no leg found it.
    k must be > 0 and weights finite ≥ 0 (ValueError otherwise).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (math.isfinite(k) and k > 0):
        raise ValueError(f"k must be > 0, got {k!r}")
    r = _stack(ranks, np.float64, "rank")
    if np.isnan(r).any() or np.any(r < -1) or np.any(r != np.floor(r)):
        raise ValueError("ranks must be integers >= 0, or -1 for absent")
    out = rrf_kernel(r, _check_weights(weights, r.shape[0]), k)
    if top_bonus:
        out = out + rrf_top_bonus(r)
    return _mask(np.where((r >= 0).any(axis=0), out, np.nan), valid)


def _comb(scores_list: Sequence[Any], weights: Sequence[float] | None) -> tuple[np.ndarray, ...]:
    s = _stack(scores_list, np.float64, "score")
    w = _check_weights(weights, s.shape[0]).reshape((-1,) + (1,) * (s.ndim - 1))
    found = ~np.isnan(s)
    return w * np.where(found, s, 0.0), found, found.any(axis=0)


def comb_sum(
    scores_list: Sequence[Any], weights: Sequence[float] | None = None, *, valid: Any = None
) -> np.ndarray:
    """CombSUM: Σ_i w_i·s_i over the legs that found the doc (absent legs add nothing).

    Meant for already-normalised leg scores. Equals ranx ``comb_sum`` (w = 1) and
    ``wsum`` (weights). NaN where no leg found the doc.
    """
    ws, _, any_found = _comb(scores_list, weights)
    return _mask(np.where(any_found, ws.sum(axis=0), np.nan), valid)


def comb_mnz(
    scores_list: Sequence[Any], weights: Sequence[float] | None = None, *, valid: Any = None
) -> np.ndarray:
    """CombMNZ: (Σ_i w_i·s_i) × (number of legs that found the doc), as ranx ``comb_mnz``.

    NaN where no leg found the doc.
    """
    ws, found, any_found = _comb(scores_list, weights)
    return _mask(np.where(any_found, ws.sum(axis=0) * found.sum(axis=0), np.nan), valid)


def comb_max(
    scores_list: Sequence[Any], weights: Sequence[float] | None = None, *, valid: Any = None
) -> np.ndarray:
    """CombMAX: max_i w_i·s_i over the legs that found the doc; NaN if none did."""
    ws, found, any_found = _comb(scores_list, weights)
    best = np.where(found, ws, -np.inf).max(axis=0)
    return _mask(np.where(any_found, best, np.nan), valid)


def comb_min(
    scores_list: Sequence[Any], weights: Sequence[float] | None = None, *, valid: Any = None
) -> np.ndarray:
    """CombMIN: min_i w_i·s_i over the legs that found the doc; NaN if none did."""
    ws, found, any_found = _comb(scores_list, weights)
    worst = np.where(found, ws, np.inf).min(axis=0)
    return _mask(np.where(any_found, worst, np.nan), valid)


# ---------------------------------------------------------------------- dispatcher


def _single_leg(scores: Any, valid: Any) -> np.ndarray:
    return _mask(np.array(scores, dtype=np.float64), valid)


def _leg_weights(params: Mapping[str, Any]) -> list[float] | None:
    if "weights" in params:
        return params["weights"]
    if "vector_weight" in params or "text_weight" in params:
        return [
            params.get("vector_weight", DEFAULT_VECTOR_WEIGHT),
            params.get("text_weight", DEFAULT_TEXT_WEIGHT),
        ]
    return None


FUSIONS: dict[str, Callable[..., np.ndarray]] = {
    "wsum": weighted_sum,
    "rrf": rrf,
    "combsum": comb_sum,
    "combmnz": comb_mnz,
    "combmax": comb_max,
    "combmin": comb_min,
    "vector": _single_leg,
    "keyword": _single_leg,
}
"""Fusion kernels by name; :func:`fuse` maps the two legs onto their arguments."""

_PARAMS: dict[str, frozenset[str]] = {
    "wsum": frozenset({"vector_weight", "text_weight", "missing"}),
    "rrf": frozenset({"k", "top_bonus", "weights", "vector_weight", "text_weight"}),
    "combsum": frozenset({"weights", "vector_weight", "text_weight"}),
    "combmnz": frozenset({"weights", "vector_weight", "text_weight"}),
    "combmax": frozenset({"weights", "vector_weight", "text_weight"}),
    "combmin": frozenset({"weights", "vector_weight", "text_weight"}),
    "vector": frozenset(),
    "keyword": frozenset(),
}


def fuse(
    method: str,
    *,
    vec: Any = None,
    text: Any = None,
    vec_rank: Any = None,
    text_rank: Any = None,
    params: Mapping[str, Any] | None = None,
    valid: Any = None,
) -> np.ndarray:
    """Fuse the vector and keyword legs with the named method; returns float64 scores.

    ``vec``/``text`` are (normalised) leg scores with NaN for absent; ``vec_rank``/
    ``text_rank`` 0-based ranks with −1 for absent, needed by ``"rrf"`` (derived from
    the scores with :func:`scores_to_ranks` when omitted). ``params`` are the
    method's keyword arguments: ``"wsum"``: vector_weight, text_weight, missing;
    ``"rrf"``: k, top_bonus, weights or vector_weight/text_weight (RRF weights are
    not renormalised; default unweighted); ``"comb*"``: weights or
    vector_weight/text_weight (default unweighted). ``"vector"``/``"keyword"``
    return one leg alone. Unknown methods or parameters raise ValueError.
    """
    if method not in FUSIONS:
        raise ValueError(f"unknown fusion method {method!r}; expected one of {tuple(FUSIONS)}")
    p = dict(params or {})
    unknown = set(p) - _PARAMS[method]
    if unknown:
        allowed = sorted(_PARAMS[method])
        raise ValueError(
            f"unknown parameter(s) {sorted(unknown)} for {method!r}; allowed {allowed}"
        )
    if method in SINGLE_LEG_FUSIONS:
        name = "vec" if method == "vector" else "text"
        leg = vec if method == "vector" else text
        if leg is None:
            raise ValueError(f"fusion {method!r} needs the {name} scores")
        return _single_leg(leg, valid)
    if method == "rrf":
        if vec_rank is None or text_rank is None:
            if vec is None or text is None:
                raise ValueError("rrf needs vec_rank and text_rank (or vec and text scores)")
            vec_rank = scores_to_ranks(vec) if vec_rank is None else vec_rank
            text_rank = scores_to_ranks(text) if text_rank is None else text_rank
        return rrf(
            [vec_rank, text_rank],
            _leg_weights(p),
            k=p.get("k", RRF_K),
            top_bonus=p.get("top_bonus", False),
            valid=valid,
        )
    if vec is None or text is None:
        raise ValueError(f"fusion {method!r} needs both vec and text scores")
    if method == "wsum":
        return weighted_sum(vec, text, valid=valid, **p)
    return FUSIONS[method]([vec, text], _leg_weights(p), valid=valid)
