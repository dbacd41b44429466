"""The first three stages: each leg's input score, its normalisation, and their fusion.

- ``legs``: a candidate counts for a leg only within this system's depth (its
  rank in that leg below ``Pipeline.depth``) and only if the system uses the
  leg; vector input = cosine, keyword input = OpenClaw's |r|/(1+|r|)
  (``text_source="bm25map"``) or |bm25| (``"bm25"``), NaN where absent.
- ``normalize``: ``memlab.fusion.normalize`` per leg (lower bounds −1 for a
  cosine, 0 for a keyword score, for the "theoretical" normalisation).
- ``fusion``: hybrid mode fuses the legs (``fuse_legs``); vector-only mode
  keeps the vector leg; keyword-only mode boosts each hit by
  ``memlab.textquery.keyword_only_score`` (or not, ``keyword_boost=False``). A
  candidate the fusion cannot score (NaN) is no longer ``valid``.

Weighted sum and RRF are computed in two steps, ``fusion_operands`` (what
does not depend on the weights or k) and ``FusionOperands.fuse``, so that the
fast sweep prepares the operands once and fuses many settings with the very
same float operations as `Pipeline.scores` (and as ``memlab.fusion.weighted_sum``
/ ``rrf``: tested bit-identical in tests/test_stages.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from memlab.fusion import (
    RRF_BONUS_FIRST,
    RRF_BONUS_TOP3,
    bm25_rank_to_score_array,
    clamp_weights,
    fuse,
    normalize,
)
from memlab.textquery import keyword_only_score

if TYPE_CHECKING:
    from memlab.candidates import CandidateSet
    from memlab.pipeline import Pipeline

# Lower bounds of each leg's input score, for the "theoretical" normalisation.
VECTOR_LOWER = -1.0
TEXT_LOWER = 0.0


def legs_stage(
    p: Pipeline, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
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
    p: Pipeline, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``vec_norm`` / ``text_norm``: each leg's input under its normalisation."""
    return {
        "vec_norm": normalize(st["vec_in"], p.vector_norm, lower=VECTOR_LOWER),
        "text_norm": normalize(st["text_in"], p.text_norm, lower=TEXT_LOWER),
    }


def fusion_stage(
    p: Pipeline, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``fused`` (and ``final`` = fused, the score later stages change); ``valid`` loses
    the candidates the fusion cannot score (e.g. a vector-only hit under keyword fusion)."""
    mode = p.mode(cs)
    vec_n, text_n, has_v, has_t = st["vec_norm"], st["text_norm"], st["has_vec"], st["has_text"]
    valid = st["valid"]
    if mode == "hybrid":
        fused = fuse_legs(p, vec_n, text_n, has_v, has_t, cs.vec_rank, cs.text_rank, valid)
    elif mode == "vector":
        fused = np.where(has_v, vec_n, np.nan)
    else:
        fused = keyword_only_scores(p, cs, text_n, has_t)
    valid = valid & ~np.isnan(fused)
    fused = np.where(valid, fused, np.nan)
    return {"valid": valid, "fused": fused, "final": fused}


@dataclass(frozen=True)
class FusionOperands:
    """The operands of a weighted-sum or RRF fusion that the weights and k do not change.

    ``wsum``: ``vec``/``text`` are the normalised legs with ``missing`` where a
    leg did not find the candidate; ``rrf``: each leg's 0-based rank as float
    (−1 = absent) and ``bonus`` QMD's top-rank bonus (None = off). ``valid``:
    the candidates the fusion scores (at least one leg found them).
    """

    method: str
    valid: np.ndarray
    vec: np.ndarray
    text: np.ndarray
    bonus: np.ndarray | None = None

    def fuse(
        self, vector_weight: float, text_weight: float, rrf_k: float = 60.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """(fused, valid). ``wsum``: ``wv·vec + wt·text`` with OpenClaw's
        ``clamp_weights``; ``rrf``: ``wv/(k + rank_v + 1) + wt/(k + rank_t + 1)``
        (an absent leg adds 0; rank 0 adds w/61 at k = 60) plus the bonus. Values
        where not ``valid`` are meaningless (the caller masks them)."""
        if self.method == "wsum":
            wv, wt = clamp_weights(vector_weight, text_weight)
            return wv * self.vec + wt * self.text, self.valid
        wv, wt = float(vector_weight), float(text_weight)
        fused = np.where(self.vec >= 0, wv / (rrf_k + self.vec + 1.0), 0.0) + np.where(
            self.text >= 0, wt / (rrf_k + self.text + 1.0), 0.0
        )
        if self.bonus is not None:
            fused = fused + self.bonus
        return fused, self.valid


def fusion_operands(
    p: Pipeline,
    vec_n: np.ndarray,
    text_n: np.ndarray,
    has_v: np.ndarray,
    has_t: np.ndarray,
    vec_rank: np.ndarray,
    text_rank: np.ndarray,
    valid: np.ndarray,
) -> FusionOperands:
    """The `FusionOperands` of ``p.fusion`` (``wsum`` or ``rrf``) over [Q, C] legs."""
    if p.fusion == "wsum":
        v_absent, t_absent = np.isnan(vec_n), np.isnan(text_n)
        return FusionOperands(
            "wsum",
            valid & ~(v_absent & t_absent),
            np.where(v_absent, p.missing, vec_n),
            np.where(t_absent, p.missing, text_n),
        )
    if p.fusion != "rrf":
        raise ValueError(f"fusion_operands covers wsum and rrf, not {p.fusion!r}")
    r_vec = np.where(has_v, vec_rank, -1).astype(np.float64)
    r_text = np.where(has_t, text_rank, -1).astype(np.float64)
    f_vec, f_text = r_vec >= 0, r_text >= 0
    bonus = None
    if p.rrf_top_bonus:
        best = np.minimum(np.where(f_vec, r_vec, np.inf), np.where(f_text, r_text, np.inf))
        bonus = np.where(best == 0, RRF_BONUS_FIRST, np.where(best <= 2, RRF_BONUS_TOP3, 0.0))
    return FusionOperands("rrf", valid & (f_vec | f_text), r_vec, r_text, bonus)


def fuse_legs(
    p: Pipeline,
    vec_n: np.ndarray,
    text_n: np.ndarray,
    has_v: np.ndarray,
    has_t: np.ndarray,
    vec_rank: np.ndarray,
    text_rank: np.ndarray,
    valid: np.ndarray,
) -> np.ndarray:
    """The hybrid fusion ``p.fusion`` of the normalised legs: [Q, C], NaN = not scored.

    ``wsum``/``rrf`` through `fusion_operands` (weights from ``p``); ``vector``/
    ``keyword`` one leg alone; ``comb*`` ``memlab.fusion.fuse`` with the weights
    as given.
    """
    m = p.fusion
    if m == "vector":
        return np.where(has_v, vec_n, np.nan)
    if m == "keyword":
        return np.where(has_t, text_n, np.nan)
    if m in ("wsum", "rrf"):
        ops = fusion_operands(p, vec_n, text_n, has_v, has_t, vec_rank, text_rank, valid)
        fused, ok = ops.fuse(p.vector_weight, p.text_weight, p.rrf_k)
        return np.where(ok, fused, np.nan)
    params = {"vector_weight": p.vector_weight, "text_weight": p.text_weight}
    return fuse(m, vec=vec_n, text=text_n, params=params, valid=valid)


def keyword_only_scores(
    p: Pipeline, cs: CandidateSet, text_n: np.ndarray, has_t: np.ndarray
) -> np.ndarray:
    """Keyword-only mode (no vectors): each keyword hit's normalised score, boosted by
    ``keyword_only_score`` (query words in the text and path) unless ``keyword_boost``
    is off; NaN where the keyword leg did not find the candidate."""
    if not p.keyword_boost:
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
