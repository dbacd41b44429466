"""The lowest score a system can give, and the one rule for printing its threshold.

A ``min_score`` at or below every score the system can produce removes nothing: it is no
threshold, whatever its value (the presets spell "none" as −1, 0 or −10⁶ depending on their
scale). ``threshold_text`` prints such a setting as ``none`` and any other as its number,
everywhere a table or a message shows a system's threshold (``memlab eval``, the demo,
``memlab search``'s "no results" hint).

``score_floor`` is a sound lower bound, computed from the ranges of the leg scores
(cosine in [−1, 1]; keyword inputs ≥ 0), of each normalisation (``memlab.retrieval.fusion.normalize``:
z-scores ≥ −√(n − 1) for n ≤ depth candidates) and of each stage on the score's way
(decay multiplies by (0, 1], neighbour terms add ≥ 0, file context adds the weight times a
fused score, a best-line system scores by its line system, QMD's per-file RRF is ≥ 0, a
query-blind order scores
a random key in [0, 1) or a file's days since 1970, from year 1). A stage it cannot bound
(release multipliers, exact tiers, a registered stage) makes the floor −∞: the threshold is
then printed as its number — never called "none" without proof.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlab.stages.views import Params

__all__ = ["NO_THRESHOLD", "keeps_every_score", "score_floor", "threshold_text"]

NO_THRESHOLD = "none"
# Stages that never change a score (they remove candidates or re-order them).
_NEUTRAL = frozenset(
    {"legs", "normalize", "fusion", "headings"}
    | {"current_order", "tie_order", "mmr", "novel_lines", "selection"}  # the order stages
)
# rank_by="recency" scores days since 1970 of a dated file: year 1 at the earliest.
RECENCY_FLOOR = -719_163.0
# Normalisations whose values lie in [0, 1] whatever the input (memlab.retrieval.fusion.normalize).
_UNIT_NORMS = frozenset({"minmax", "theoretical", "rank", "sigmoid"})


def _leg_floor(norm: str, raw_floor: float, depth: int) -> float:
    """The lowest value of a leg after normalisation ``norm``, its raw input bounded below
    by ``raw_floor`` (cosine −1, keyword 0), over at most ``depth`` present values."""
    if norm == "none":
        return raw_floor
    if norm in _UNIT_NORMS:
        return 0.0
    if norm == "zscore":
        return -math.sqrt(max(depth, 1) - 1)
    # "max", "sum": x / max|x| or x / Σ|x|, in [−1, 1]; [0, 1] for non-negative input
    return -1.0 if raw_floor < 0 else 0.0


def score_floor(p: Params) -> float:
    """A lower bound of every final score ``p`` can give (−∞ when a stage it runs cannot
    be bounded; see the module docstring). Assumes both legs may run (hybrid mode), and
    the lower of a leg's floor and ``missing`` for a candidate that leg did not find (with
    ``text_unmatched="floor"``, the keyword floor: at most the matches' spread, at least
    one unit, below the lowest match)."""
    from memlab.config.vocab import WEIGHTED_FUSIONS

    vec = _leg_floor(p.vector_norm, -1.0, p.depth)
    text = _leg_floor(p.text_norm, 0.0, p.depth)
    if p.text_unmatched == "floor":  # memlab.retrieval.fusion.floor_value: clamped below the lowest
        spread = 2.0 * math.sqrt(max(p.depth, 1) - 1) if p.text_norm == "zscore" else 1.0
        text = min(text, text - max(spread, 1.0))
    if p.keyword and p.vector:
        if p.fusion == "rrf":
            floor = 0.0  # Σ w / (k + rank + 1) with w ≥ 0, plus a bonus ≥ 0
        elif p.fusion == "wsum":
            wv, wt = p.effective_weights()
            floor = wv * min(vec, p.missing) + wt * min(text, p.missing)
        elif p.fusion in WEIGHTED_FUSIONS:
            return -math.inf  # comb*: not bounded here
        else:
            floor = vec if p.fusion == "vector" else text
    else:
        floor = vec if p.vector else text  # a keyword-only boost adds ≥ 0
    for stage in p.active_stages():
        if stage in _NEUTRAL or stage == "neighbor":  # neighbour terms are max(…, 0)
            continue
        if stage == "lexical_boost":  # keyword inputs stay in [0, 1], re-fused
            continue
        if stage == "identifier_tier":  # + ids_held × (span + 1) ≥ 0
            continue
        if stage == "decay":  # × a multiplier in (0, 1]
            floor = min(floor, 0.0)
        elif stage == "file_context":  # + weight × a pre-neighbour score of the file
            floor = floor + p.file_context * min(floor, 0.0)
        elif stage == "best_line":  # the score of the chunk's best line
            floor = score_floor(p.line_system())
        elif stage == "qmd_documents":  # replaced by Σ 2·w / (k + rank + 1) + bonus ≥ 0
            floor = 0.0
        elif stage == "prior":  # the score is replaced by a query-blind order
            floor = 0.0 if p.rank_by == "random" else RECENCY_FLOOR
        else:
            return -math.inf
    return floor


def keeps_every_score(p: Params) -> bool:
    """Whether ``p.min_score`` removes nothing: at or below ``score_floor(p)``."""
    return p.min_score <= score_floor(p)


def threshold_text(p: Params) -> str:
    """How a table shows ``p``'s threshold: ``"none"`` when it removes nothing
    (``keeps_every_score``), else ``min_score`` as ``f"{:g}"`` (``0.35``)."""
    return NO_THRESHOLD if keeps_every_score(p) else f"{p.min_score:g}"
