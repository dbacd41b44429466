"""The first three stages: each leg's input score, its normalisation, and their fusion.

- ``legs``: a candidate counts for a leg only within this system's depth (its
  rank in that leg below ``Pipeline.depth``) and only if the system uses the
  leg; vector input = cosine, keyword input = OpenClaw's |r|/(1+|r|)
  (``text_source="bm25map"``) or |bm25| (``"bm25"``), NaN where absent.
- ``normalize``: ``memlab.retrieval.fusion.normalize`` per leg (lower bounds −1 for a
  cosine, 0 for a keyword score, for the "theoretical" normalisation), and
  ``text_floor``: what a candidate the keyword query did not match scores on the
  keyword leg (``text_unmatched``, below).
- ``fusion``: hybrid mode fuses the legs (``fuse_legs``); vector-only mode
  keeps the vector leg; keyword-only mode boosts each hit by
  ``memlab.retrieval.textquery.keyword_only_score`` (or not, ``keyword_boost=False``). A
  candidate the fusion cannot score (NaN) is no longer ``valid``.

Weighted sum and RRF are computed in two steps, ``fusion_operands`` (what
does not depend on the weights or k) and ``FusionOperands.fuse``, so that the
fast sweep prepares the operands once and fuses many settings with the very
same float operations as `Pipeline.scores` (and as ``memlab.retrieval.fusion.weighted_sum``
/ ``rrf``: tested bit-identical in tests/test_stages.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from memlab.retrieval.fusion import (
    bm25_rank_to_score_array,
    clamp_weights,
    floor_value,
    fuse,
    normalize,
    rrf_kernel,
    rrf_top_bonus,
    wsum_kernel,
)
from memlab.retrieval.textquery import keyword_only_score

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

# Lower bounds of each leg's input score, for the "theoretical" normalisation.
VECTOR_LOWER = -1.0
TEXT_LOWER = 0.0


def legs_stage(p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``has_vec``/``has_text`` (found within depth by a leg the system uses), ``valid``
    (either), and the leg inputs ``vec_in`` (cosine) / ``text_in`` (NaN where absent)."""
    mode = p.mode(cs)
    d = p.depth
    none = np.zeros_like(cs.valid)
    has_v = cs.has_vec & (cs.vec_rank < d) if mode != "keyword" else none
    has_t = cs.has_text & (cs.text_rank < d) if mode != "vector" and p.keyword else none
    vec_in = np.where(has_v, cs.vec_score, np.nan)
    if p.text_source == "bm25map":
        text_in = np.where(has_t, bm25_rank_to_score_array(cs.text_raw), np.nan)
    else:
        text_in = np.where(has_t, np.abs(cs.text_raw), np.nan)
    return {
        "valid": has_v | has_t,
        "has_vec": has_v,
        "has_text": has_t,
        "vec_in": vec_in,
        "text_in": text_in,
    }


def normalize_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``vec_norm`` / ``text_norm``: each leg's input under its normalisation (NaN where
    the leg did not find the candidate), and ``text_floor``: the keyword-leg value of a
    candidate the keyword query did not match, by ``text_unmatched``:

    - ``"missing"``: the fusion's ``missing`` (OpenClaw: 0, whatever the normalisation —
      under a z-score 0 is the matched hits' mean, so a lone match scores like no match);
    - ``"floor"``: ``memlab.retrieval.fusion.floor_value`` of the keyword floor (a score of 0)
      under the normalisation of the matched hits, so every match stays above every
      non-match (z-score: (0 − mean)/std, one hit or equal hits → −1);
    - ``"pooled"``: the keyword leg is normalised over every candidate the system scores
      (``valid``), a non-match entering at the floor: for a z-score the spread of the
      whole candidate list, so a query whose few matches stand out from many
      non-matches (a rare identifier) gives them large scores (one match among n
      candidates: sqrt(n − 1), the non-matches −1/sqrt(n − 1)).

    ``text_floor`` is [Q, C], equal along each row.
    """
    text_in = st["text_in"]
    if p.text_unmatched == "pooled":
        unmatched = st["valid"] & np.isnan(text_in)
        pooled = np.where(unmatched, TEXT_LOWER, text_in)
        both = normalize(pooled, p.text_norm, valid=st["valid"], lower=TEXT_LOWER)
        text_norm = np.where(np.isnan(text_in), np.nan, both)
        floor = floor_value(pooled, p.text_norm, TEXT_LOWER, valid=st["valid"])
        # floor_value's row statistics are normalize's, over the pooled row
    else:
        text_norm = normalize(text_in, p.text_norm, lower=TEXT_LOWER)
        if p.text_unmatched == "floor":
            floor = floor_value(text_in, p.text_norm, TEXT_LOWER)
        else:
            floor = np.full((*text_in.shape[:-1], 1), float(p.missing))
    return {
        "vec_norm": normalize(st["vec_in"], p.vector_norm, lower=VECTOR_LOWER),
        "text_norm": text_norm,
        "text_floor": np.broadcast_to(floor, text_in.shape).copy(),
    }


def fusion_stage(
    p: Params,
    cs: CandidateSet,
    st: Mapping[str, np.ndarray],
    keyword_boost: bool | None = None,
) -> dict[str, np.ndarray]:
    """``fused`` (and ``final`` = fused, the score later stages change); ``valid`` loses
    the candidates the fusion cannot score (e.g. a vector-only hit under keyword fusion).
    ``keyword_boost``: keyword-only mode's boost on or off (None: ``p.keyword_boost``)."""
    mode = p.mode(cs)
    vec_n, text_n, has_v, has_t = st["vec_norm"], st["text_norm"], st["has_vec"], st["has_text"]
    valid = st["valid"]
    if mode == "hybrid":
        fused = fuse_legs(
            p, vec_n, text_n, has_v, has_t, cs.vec_rank, cs.text_rank, valid, st.get("text_floor")
        )
    elif mode == "vector":
        fused = np.where(has_v, vec_n, np.nan)
    else:
        boost = p.keyword_boost if keyword_boost is None else keyword_boost
        fused = keyword_only_scores(cs, text_n, has_t, boost)
    valid = valid & ~np.isnan(fused)
    fused = np.where(valid, fused, np.nan)
    return {"valid": valid, "fused": fused, "final": fused}


@dataclass(frozen=True)
class FusionOperands:
    """The operands of a weighted-sum or RRF fusion that the weights and k do not change.

    ``wsum``: ``vec``/``text`` are the normalised legs with each leg's absent value
    where it did not find the candidate (``missing`` for the vector leg, ``text_floor``
    for the keyword leg: ``normalize_stage``); ``rrf``: each leg's 0-based rank as float
    (−1 = absent) and ``bonus`` QMD's top-rank bonus (None = off). ``valid``:
    the candidates the fusion scores (at least one leg found them).
    """

    method: str
    valid: np.ndarray
    vec: np.ndarray
    text: np.ndarray
    bonus: np.ndarray | None = None

    @functools.cached_property
    def ranks(self) -> np.ndarray:
        """``rrf``: the legs' ranks stacked [2, Q, C] (built once, reused by every `fuse`)."""
        return np.stack([self.vec, self.text])

    def fuse(
        self, vector_weight: float, text_weight: float, rrf_k: float = 60.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """(fused, valid). ``wsum``: ``wv·vec + wt·text`` with OpenClaw's
        ``clamp_weights``; ``rrf``: ``wv/(k + rank_v + 1) + wt/(k + rank_t + 1)``
        (an absent leg adds 0; rank 0 adds w/61 at k = 60) plus the bonus. Values
        where not ``valid`` are meaningless (the caller masks them)."""
        if self.method == "wsum":
            wv, wt = clamp_weights(vector_weight, text_weight)
            return wsum_kernel(self.vec, self.text, wv, wt), self.valid
        weights = np.array([float(vector_weight), float(text_weight)])
        fused = rrf_kernel(self.ranks, weights, rrf_k)
        if self.bonus is not None:
            fused = fused + self.bonus
        return fused, self.valid


def fusion_operands(
    p: Params,
    vec_n: np.ndarray,
    text_n: np.ndarray,
    has_v: np.ndarray,
    has_t: np.ndarray,
    vec_rank: np.ndarray,
    text_rank: np.ndarray,
    valid: np.ndarray,
    text_floor: np.ndarray | None = None,
) -> FusionOperands:
    """The `FusionOperands` of ``p.fusion`` (``wsum`` or ``rrf``) over [Q, C] legs;
    ``text_floor`` [Q, C]: the keyword leg's value where it did not find a candidate
    (``normalize_stage``; None = ``p.missing``)."""
    if p.fusion == "wsum":
        v_absent, t_absent = np.isnan(vec_n), np.isnan(text_n)
        return FusionOperands(
            "wsum",
            valid & ~(v_absent & t_absent),
            np.where(v_absent, p.missing, vec_n),
            np.where(t_absent, p.missing if text_floor is None else text_floor, text_n),
        )
    if p.fusion != "rrf":
        raise ValueError(f"fusion_operands covers wsum and rrf, not {p.fusion!r}")
    r_vec = np.where(has_v, vec_rank, -1).astype(np.float64)
    r_text = np.where(has_t, text_rank, -1).astype(np.float64)
    f_vec, f_text = r_vec >= 0, r_text >= 0
    bonus = rrf_top_bonus(np.stack([r_vec, r_text])) if p.rrf_top_bonus else None
    return FusionOperands("rrf", valid & (f_vec | f_text), r_vec, r_text, bonus)


def fuse_legs(
    p: Params,
    vec_n: np.ndarray,
    text_n: np.ndarray,
    has_v: np.ndarray,
    has_t: np.ndarray,
    vec_rank: np.ndarray,
    text_rank: np.ndarray,
    valid: np.ndarray,
    text_floor: np.ndarray | None = None,
) -> np.ndarray:
    """The hybrid fusion ``p.fusion`` of the normalised legs: [Q, C], NaN = not scored.

    ``wsum``/``rrf`` through `fusion_operands` (weights from ``p``; ``text_floor`` the
    keyword leg's value for a candidate it did not find, None = ``p.missing``);
    ``vector``/``keyword`` one leg alone; ``comb*`` ``memlab.retrieval.fusion.fuse`` with the
    weights as given (an absent leg adds nothing, as in ranx).
    """
    m = p.fusion
    if m == "vector":
        return np.where(has_v, vec_n, np.nan)
    if m == "keyword":
        return np.where(has_t, text_n, np.nan)
    if m in ("wsum", "rrf"):
        ops = fusion_operands(
            p, vec_n, text_n, has_v, has_t, vec_rank, text_rank, valid, text_floor
        )
        fused, ok = ops.fuse(p.vector_weight, p.text_weight, p.rrf_k)
        return np.where(ok, fused, np.nan)
    params = {"vector_weight": p.vector_weight, "text_weight": p.text_weight}
    return fuse(m, vec=vec_n, text=text_n, params=params, valid=valid)


def leg_values(p: Params, st: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each leg's value per candidate in a weighted sum, [Q, C]: the normalised score
    where the leg found the candidate, else its absent value (vector leg: ``p.missing``;
    keyword leg: ``text_floor``, ``normalize_stage``). What ``fusion_operands`` weighs,
    what explain prints as the two terms and what the fast sweep prunes by."""
    return (
        np.where(st["has_vec"], st["vec_norm"], p.missing),
        np.where(st["has_text"], st["text_norm"], st["text_floor"]),
    )


def keyword_only_scores(
    cs: CandidateSet, text_n: np.ndarray, has_t: np.ndarray, boost: bool
) -> np.ndarray:
    """Keyword-only mode (no vectors): each keyword hit's normalised score, boosted by
    ``keyword_only_score`` (query words in the text and path) when ``boost`` (the
    pipeline's ``keyword_boost``); NaN where the keyword leg did not find the candidate."""
    if not boost:
        return np.where(has_t, text_n, np.nan)
    out = np.full(text_n.shape, np.nan)
    for qi in range(len(cs)):
        cols = np.nonzero(has_t[qi])[0]
        if cols.size == 0:
            continue
        pos = cs.pos[qi, cols]
        texts = cs.texts(pos)
        for c, ps, t in zip(cols, pos, texts, strict=True):
            out[qi, c] = keyword_only_score(
                float(text_n[qi, c]), cs.queries[qi], t, str(cs.table.paths[ps])
            )
    return out
