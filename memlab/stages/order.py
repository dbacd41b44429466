"""The ordering stages: how the scored candidates become a ranked list, then results.

They run after the score stages, in ``Pipeline.rank``, and pass the list on as the stage
array ``order`` [Q, C] (candidate columns in rank order, each query's valid ones first).
While no stage has written ``order`` the list is the stable sort by ``final`` (ties in
insertion order: vector hits, then keyword-only hits; `ranked_order`), which
``select_rows`` computes itself, so a plain system never materialises it.

- ``current_order``: OpenClaw 2026.9.6's order (``selection_rule="openclaw-current"``):
  exact tiers first, ties by path and lines (``memlab.stages.current.current_order``);
- ``tie_order``: equal scores by a stage's ``tie_break`` key (the best-line stage);
- ``mmr``: MMR over each query's valid prefix (``memlab.stages.selection.mmr_order``;
  the release's MMR within each tier under its selection rule);
- ``novel_lines``: chunks placed by the best line none above holds
  (``memlab.stages.best_line.novel_line_order``);
- ``selection``: ``min_score``, ``max_results`` and the fallback and fill rules
  (``select_rows``), writing the results (``columns``, ``scores``, ``selected_by``
  [Q, K]) and ``mmr_position``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from memlab.retrieval.fusion import clamp_weights
from memlab.stages.best_line import carried_line_array, line_held_key, novel_line_order
from memlab.stages.current import current_mmr_order, current_order
from memlab.stages.selection import mmr_order, select_rows

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = [
    "RESULT_KEYS",
    "current_order_stage",
    "mmr_stage",
    "novel_lines_stage",
    "ranked_order",
    "selection_stage",
    "tie_order_stage",
]

# The selection stage's outputs [Q, K], taken out of the stage arrays into `Ranking`.
RESULT_KEYS = ("columns", "scores", "selected_by")


def ranked_order(st: Mapping[str, np.ndarray]) -> np.ndarray:
    """The list so far [Q, C]: ``st["order"]`` when an ordering stage wrote it, else the
    stable sort of ``−final`` (NaN counts as 0; invalid candidates last, in column
    order) — the order ``select_rows`` computes when given none."""
    if "order" in st:
        return st["order"]
    key = np.where(st["valid"], -np.nan_to_num(st["final"], nan=0.0), np.inf)
    return np.argsort(key, axis=1, kind="stable")


def current_order_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``order`` = OpenClaw 2026.9.6's order (``current_order``)."""
    return {"order": current_order(p, cs, st)}


def tie_order_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``order`` = lexsort by (−final, ``tie_break``): equal scores by the key the
    best-line stage wrote (ascending), then insertion order; invalid candidates last."""
    key = np.where(st["valid"], -np.nan_to_num(st["final"], nan=0.0), np.inf)
    return {"order": np.lexsort((st["tie_break"], key), axis=-1)}


def mmr_stage(p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``order`` re-ordered by MMR (it never adds or drops a candidate): the release's
    MMR per exact tier under its own selection rule (``current_mmr_order``), else
    ``mmr_order`` over each query's valid prefix with ``final`` as relevance."""
    order = ranked_order(st)
    if p.mmr == "openclaw-current" and p.selection_rule == "openclaw-current":
        return {"order": current_mmr_order(p, cs, st, order)}
    return {"order": mmr_order(p, cs, order, st["valid"], st["final"])}


def novel_lines_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``order`` re-ordered greedily by new lines (``novel_line_order``, the lines each
    chunk holds from ``cs.extra[line_held_key(p)]``); only the first ``max_results``
    places need the greedy, since selection keeps no more."""
    held = carried_line_array(
        cs, line_held_key(p), "best_line_order='novel' needs the lines each chunk holds"
    )
    order = novel_line_order(ranked_order(st), st["valid"], held, p.best_line_depth, p.max_results)
    return {"order": order}


def selection_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The results: ``select_rows`` over the list (``min_score``, ``max_results``; in
    hybrid mode OpenClaw's relaxed keyword fallback at min(min_score, text weight) and
    the keyword fill, in keyword-only mode the top-up). Under
    ``selection_rule="openclaw-current"`` a hybrid search where nothing passes keeps
    keyword hits ≥ 0 and only keyword hits without a vector hit fill.
    ``mmr_position``: each valid candidate's place in the list (−1: invalid, or MMR
    off)."""
    mode = p.mode(cs)
    valid, final = st["valid"], st["final"]
    given = st.get("order")
    nq, width = final.shape
    if p.mmr != "off":
        order = ranked_order(st) if given is None else given
        pos = np.full((nq, width), -1, dtype=np.int64)
        np.put_along_axis(pos, order, np.broadcast_to(np.arange(width), (nq, width)), axis=1)
        mmr_pos = np.where(valid, pos, -1)
    else:
        mmr_pos = np.full((nq, width), -1)
    hybrid = mode == "hybrid"
    current = p.selection_rule == "openclaw-current"
    thr = None
    if hybrid and p.relaxed_fallback:
        thr = min(p.min_score, clamp_weights(p.vector_weight, p.text_weight)[1])
    if hybrid and current:
        thr = 0.0
    cols, scores, sel = select_rows(
        final,
        valid,
        st["has_text"],
        min_score=p.min_score,
        max_results=p.max_results,
        relaxed_threshold=thr,
        fill_keyword_only=hybrid and p.fill_keyword_only,
        top_up=mode == "keyword",
        order=given,
        fill_mask=st["has_text"] & ~st["has_vec"] if current else None,
    )
    return {"columns": cols, "scores": scores, "selected_by": sel, "mmr_position": mmr_pos}
