"""The dev-set protocol: which questions tune a preset and which only report it.

memlab's presets are chosen on one half of each dev set and reported on the other
(docs/studies/index.md, "Protocol"). The halves are fixed rules of this module, so a
benchmark, a notebook and a test that name a half all mean the same questions:

- **by question** (`question_halves`): the scored questions (those with evidence) split
  once by `memlab.eval.sweep.split_queries` — fraction 0.5, seed 0, stratified by
  category. `memlab-best` and `memlab-best-chunk` were tuned on LoCoMo's tune half.
  Both halves draw from every conversation, so the report half's conversations are
  not unseen (their other questions tuned the preset).
- **by conversation** (`conversation_halves`): the data set's groups (one per
  conversation) in natural order, even positions tune, odd positions report
  (`memlab.eval.ltr.conversation_split`). LoCoMo dev: conv-26, conv-41, conv-43 tune,
  conv-30, conv-42 report; BEAM 100K chats 1–10: odd chats tune, even chats report.

Only questions with at least one evidence span are in either half (an abstention
question has nothing to recall).
"""

from __future__ import annotations

from typing import Any

from memlab.eval.ltr import conversation_split
from memlab.eval.sweep import split_queries

__all__ = [
    "HALVES",
    "QUESTION_SPLIT_FRACTION",
    "QUESTION_SPLIT_SEED",
    "conversation_halves",
    "question_halves",
    "scored_questions",
    "small_groups",
]

QUESTION_SPLIT_FRACTION = 0.5
QUESTION_SPLIT_SEED = 0
# How each split is made, in words (benchmarks record it beside their figures).
HALVES = {
    "question": "question_halves: split_queries(scored qids, 0.5, seed=0, strata=category)",
    "conversation": "conversation_halves: groups in natural order, even positions tune, odd report",
}


def scored_questions(ds: Any) -> Any:
    """The rows of ``ds.queries`` whose qid has at least one evidence span, in the
    data set's order (an empty frame when no question has evidence)."""
    q = ds.queries
    return q[q["qid"].isin(set(ds.evidence["qid"]))]


def question_halves(ds: Any) -> tuple[list[str], list[str]]:
    """(tune, report) qids: ``split_queries(scored qids, 0.5, seed=0, strata=category)``.

    Each category contributes round(0.5 × its size) questions to tune (at least one to
    each side when it has two or more); deterministic. LoCoMo dev: 498 / 498.
    ``KeyError`` when the data set's questions have no ``category`` column.
    """
    q = scored_questions(ds)
    if "category" not in q.columns:
        raise KeyError("question_halves needs a 'category' column in the data set's queries")
    return split_queries(
        q["qid"].tolist(),
        QUESTION_SPLIT_FRACTION,
        seed=QUESTION_SPLIT_SEED,
        strata=q["category"].astype(str).tolist(),
    )


def conversation_halves(ds: Any) -> tuple[list[str], list[str]]:
    """(tune, report) qids by conversation: a question is in the half of its ``group``
    under `conversation_split` (groups in natural order, even positions tune, odd
    report). ``ValueError`` when the scored questions come from fewer than 2 groups
    (no conversation would be left to report on)."""
    q = scored_questions(ds)
    groups = q["group"].astype(str)
    tune_groups, report_groups = conversation_split(groups.tolist())
    if not report_groups:
        raise ValueError(
            f"conversation_halves needs questions from at least 2 groups, got {tune_groups}"
        )
    tune_set = set(tune_groups)
    in_tune = groups.isin(tune_set)
    return q["qid"][in_tune].tolist(), q["qid"][~in_tune].tolist()


def small_groups(ds: Any) -> list[str]:
    """The small configuration of a dev set: the first group of each conversation half
    (`conversation_split` over the groups with scored questions), so a run that must take
    seconds — the CI quality guard, a notebook at small size — still has one tuning and
    one reporting conversation. LoCoMo dev: conv-26, conv-30; BEAM 100K: chats 1 and 2.
    A data set with one such group gives that group alone; none raises ``ValueError``."""
    tune, report = conversation_split(scored_questions(ds)["group"].astype(str).tolist())
    if not tune:
        raise ValueError(f"{ds.name}: no question has evidence, so no group to keep")
    return tune[:1] + report[:1]
