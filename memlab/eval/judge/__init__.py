"""Judging a folder's questions by hand, most decisive first (``memlab judge``; the notebook's
``memlab.widgets.Judge``).

- ``pool``: the spans to judge, the top K of each preset and the hits the agent saw, each
  question as of its cut-off, one per line span;
- ``order``: which span to ask next, so the presets' comparison is decided with the fewest
  answers (Carterette, Allan & Sitaraman 2006, minimal test collections);
- ``store``: the answers, appended to ``judgments.jsonl`` at once (flushed and fsynced;
  undo is a retraction row);
- ``session``: the pool, the order and the store together (what to ask, an answer, undo,
  how many remain);
- ``card``: a span as it is shown: the question, the lines with its terms marked, file
  and date;
- ``terminal``: the command line's loop, one key press at a terminal, one line per answer
  otherwise.
"""

from __future__ import annotations

from memlab.eval.judge.order import PairOrder, decide_count
from memlab.eval.judge.pool import Pool, PoolItem, build_pool
from memlab.eval.judge.session import JudgeSession, judge_folder
from memlab.eval.judge.store import JudgmentStore

__all__ = [
    "JudgeSession",
    "JudgmentStore",
    "PairOrder",
    "Pool",
    "PoolItem",
    "build_pool",
    "decide_count",
    "judge_folder",
]
