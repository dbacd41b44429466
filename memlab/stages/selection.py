"""The rank stages: MMR re-ordering and OpenClaw's selection rules.

One selection function, `select_rows`, serves `Pipeline.rank` (one row per
query) and the fast sweep (one row per setting × query,
``memlab.eval.fastsweep.rank_settings``), so the rules exist once:

- stable sort by score, ties in insertion order (vector hits, then keyword-only);
- ``min_score``, cut to ``max_results``;
- OpenClaw's relaxed keyword fallback: when nothing passes, keyword-leg hits
  with score ≥ min(minScore, textWeight) instead (hybrid mode);
- its later "keyword-only hits fill spare slots" rule (``fill_keyword_only``);
- keyword-only mode returns its top hits even when none passes (top-up).

``SELECTED_BY`` names the codes of ``Ranking.selected_by``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from memlab.retrieval.rerank import mmr_rerank, mmr_rerank_embeddings
from memlab.stages.current import current_mmr_perm

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = ["SELECTED_BY", "mmr_order", "select_rows"]

# Ranking.selected_by codes: 0 strict, 1 relaxed keyword fallback, 2 keyword fill,
# 3 keyword-only top-up (−1 = empty slot).
SELECTED_BY = np.array(["strict", "relaxed", "fill", "top-up"], dtype=object)


def mmr_order(
    p: Params, cs: CandidateSet, order: np.ndarray, valid: np.ndarray, final: np.ndarray
) -> np.ndarray:
    """``order`` [Q, C] with each query's valid prefix re-ordered by MMR (``p.mmr``:
    Jaccard over texts, the release's MMR (``"openclaw-current"``) or cosine over
    embeddings, λ = ``p.mmr_lambda``); MMR only
    re-orders, it never drops or adds a candidate."""
    out = order.copy()
    for qi in range(len(cs)):
        n = int(valid[qi].sum())
        if n <= 1:
            continue
        cols = order[qi, :n]
        sc = final[qi, cols]
        pos = cs.pos[qi, cols]
        if p.mmr == "jaccard":
            perm = mmr_rerank(sc.tolist(), cs.texts(pos), p.mmr_lambda)
        elif p.mmr == "openclaw-current":  # the release's tokenizer over 700-unit snippets
            perm = current_mmr_perm(sc.tolist(), cs.texts(pos), p.mmr_lambda)
        else:
            perm = mmr_rerank_embeddings(sc.tolist(), cs.vectors(pos), p.mmr_lambda)
        out[qi, :n] = cols[np.asarray(perm, dtype=np.int64)]
    return out


def select_rows(
    final: np.ndarray,
    valid: np.ndarray,
    has_text: np.ndarray,
    *,
    min_score: np.ndarray | float,
    max_results: int,
    relaxed_threshold: np.ndarray | float | None,
    fill_keyword_only: bool = False,
    top_up: bool = False,
    order: np.ndarray | None = None,
    fill_mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OpenClaw's selection (spec section 5, steps 6 and 8) for R independent rows.

    Per row: stable sort of the valid candidates by ``final`` descending (ties
    keep column order); keep those with ``final >= min_score``, cut to
    ``max_results``. If none passes and ``relaxed_threshold`` is given, take
    the keyword-leg candidates (``has_text``) with ``final >=
    relaxed_threshold`` instead (OpenClaw: threshold = min(minScore,
    textWeight)). With ``fill_keyword_only``, keyword-leg candidates not yet
    chosen fill the slots left, in ranked order, after the chosen ones. With
    ``top_up`` (keyword-only mode), a row where none passes takes its first
    ``max_results`` valid candidates. ``order`` [R, C]: the ranked order to use
    (e.g. after MMR; its valid candidates first) instead of the stable sort.
    ``fill_mask`` [R, C]: the candidates that may fill (default ``has_text``; OpenClaw
    2026.9.6: keyword hits without a vector hit).

    ``min_score`` and ``relaxed_threshold`` are scalars or per-row arrays [R].
    Returns ``(columns, scores, selected_by)``, each [R, max_results]: the
    chosen columns in result order (−1 = empty), their scores (NaN empty),
    and how each was chosen (0 strict, 1 relaxed, 2 fill, 3 top-up, −1 empty).
    """
    r, width = final.shape
    kmax = int(max_results)
    ms = np.broadcast_to(np.asarray(min_score, dtype=np.float64), (r,))
    thr = None
    if relaxed_threshold is not None:
        thr = np.broadcast_to(np.asarray(relaxed_threshold, dtype=np.float64), (r,))
    nan = np.isnan(final)
    odd = valid & nan  # never produced by Pipeline.scores; handled exactly anyway
    given = order is not None
    if order is None:
        key = -final
        key[~valid] = np.inf
        if odd.any():
            key[odd] = 0.0
        order = np.argsort(key, axis=1, kind="stable")
    cols = np.full((r, kmax), -1, dtype=np.int64)
    scores = np.full((r, kmax), np.nan)
    sel = np.full((r, kmax), -1, dtype=np.int64)
    # Strict rows: the passing candidates are a prefix of the order (valid ones
    # come first, by descending score), so only the first k positions matter.
    k = min(kmax, width)
    top = order[:, :k]
    flat = top + (np.arange(r) * width)[:, None]
    t_final = final.ravel()[flat]
    passes = valid.ravel()[flat] & (t_final >= ms[:, None])
    cols[:, :k] = np.where(passes, top, -1)
    scores[:, :k] = np.where(passes, t_final, np.nan)
    sel[:, :k] = np.where(passes, 0, -1)
    # A given order (MMR) need not put the passing candidates first, and the fill and
    # top-up rules read whole rows.
    if given or fill_keyword_only or top_up or odd.any() or fill_mask is not None:
        full = np.arange(r)
    elif thr is not None:
        full = np.flatnonzero(~passes[:, 0]) if k else np.arange(r)
    else:
        full = np.empty(0, dtype=np.int64)
    if full.size:
        c, sc, se = select_full_rows(
            final[full],
            valid[full],
            has_text[full],
            order[full],
            ms[full],
            None if thr is None else thr[full],
            kmax,
            fill_keyword_only,
            top_up,
            None if fill_mask is None else fill_mask[full],
        )
        cols[full], scores[full], sel[full] = c, sc, se
    return cols, scores, sel


def select_full_rows(
    final: np.ndarray,
    valid: np.ndarray,
    has_text: np.ndarray,
    order: np.ndarray,
    ms: np.ndarray,
    thr: np.ndarray | None,
    kmax: int,
    fill_keyword_only: bool,
    top_up: bool = False,
    fill_mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``select_rows`` over whole rows (relaxed fallback, keyword fill, top-up), given
    the ranked ``order`` [R, C]: the same arguments, per-row ``ms`` / ``thr`` arrays."""
    r, width = final.shape
    s_valid = np.take_along_axis(valid, order, axis=1)
    s_final = np.take_along_axis(np.where(np.isnan(final), -np.inf, final), order, axis=1)
    s_text = np.take_along_axis(has_text, order, axis=1)
    passes = s_valid & (s_final >= ms[:, None])
    how = np.zeros((r, width), dtype=np.int64)
    if thr is not None:
        none_pass = ~passes.any(axis=1, keepdims=True)
        relaxed = s_valid & s_text & (s_final >= thr[:, None])
        use = none_pass & relaxed.any(axis=1, keepdims=True)
        passes = np.where(use, relaxed, passes)
        how = np.where(use, 1, how)
    elif top_up:
        none_pass = ~passes.any(axis=1, keepdims=True)
        passes = np.where(none_pass, s_valid, passes)
        how = np.where(none_pass, 3, how)
    chosen = passes & (np.cumsum(passes, axis=1) <= kmax)
    # Slot of each selected position: chosen ones first in ranked order, then
    # fillers in ranked order (the same order a stable sort on (group, position) gives).
    slot = np.cumsum(chosen, axis=1) - 1
    pick = chosen
    if fill_keyword_only:
        n_chosen = chosen.sum(axis=1, keepdims=True)
        s_fill = s_text if fill_mask is None else np.take_along_axis(fill_mask, order, axis=1)
        fill = s_valid & s_fill & ~chosen
        fill &= np.cumsum(fill, axis=1) <= kmax - n_chosen
        how = np.where(fill, 2, how)
        slot = np.where(fill, n_chosen + np.cumsum(fill, axis=1) - 1, slot)
        pick = chosen | fill
    cols = np.full((r, kmax), -1, dtype=np.int64)
    scores = np.full((r, kmax), np.nan)
    sel = np.full((r, kmax), -1, dtype=np.int64)
    ri, pi = np.nonzero(pick)
    si = slot[ri, pi]
    cols[ri, si] = order[ri, pi]
    scores[ri, si] = s_final[ri, pi]
    sel[ri, si] = how[ri, pi]
    return cols, scores, sel
