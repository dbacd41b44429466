"""Evidence-span relevance: which retrieved line ranges cover which evidence spans.

Judgements are line spans of memory files (``qid, path, start_line, end_line,
grade, span_id`` and optionally ``subtopic``), not chunk ids, so one set of
judgements scores every chunker. A retrieved result ``(path, start, end)``
covers a span of the same query when the paths are equal (exact string match)
and the inclusive line ranges overlap: ``r.start <= s.end and s.start <= r.end``.

Everything is turned into padded arrays so metrics are plain numpy:

- ``SpanTable``: the evidence of a list of queries, ``[Q, S]`` (S = most spans
  of any query), built once per data set.
- ``candidate_coverage``: ``[Q, C, S]`` coverage of every candidate, computed
  once per candidate set; ``take_topk`` then picks a ranking's ``[Q, K, S]``
  slice for each setting of a sweep.
- ``SpanHits``: the ``[Q, K, S]`` coverage of a ranking plus the span arrays;
  what every metric in ``memlab.eval.metrics`` reads.
- ``relevant_results``: the same judgement for each row of a results frame
  (``memlab.viz.mark_relevant``'s ``relevant`` column).
- ``file_ranking`` / ``file_hits``: the same ranking and evidence one level up, with the
  file as the unit (a file = a session: RealMem's judgements are sessions): a file's rank
  is its best unit's rank, and a file is relevant when it holds evidence.

Conventions (also stated on the functions):

- Spans with ``grade < 1`` are not relevant and are dropped (ranx's
  ``rel_lvl = 1``).
- A query with evidence but no retrieved results scores zero on every metric.
- A query without evidence spans cannot be scored; it is left out of
  ``SpanHits`` (and so out of every mean) and listed in
  ``SpanHits.no_evidence_qids``. Pass ``include_no_evidence=True`` to keep it
  as a row that scores 0 everywhere (ranx's convention for empty qrels).

Modules: ``spans`` (`SpanTable`, `SpanHits`, `span_table`, ``NEVER``), ``coverage``
(`candidate_coverage`, `take_topk`, `hits_from_topk`, `span_coverage`,
`relevant_results`), ``files`` (`file_ranking`, `file_hits`).
"""

from __future__ import annotations

from memlab.eval.relevance.coverage import (
    candidate_coverage,
    hits_from_topk,
    relevant_results,
    span_coverage,
    take_topk,
)
from memlab.eval.relevance.files import file_hits, file_ranking
from memlab.eval.relevance.spans import NEVER, SpanHits, SpanTable, span_table

__all__ = [
    "NEVER",
    "SpanHits",
    "SpanTable",
    "candidate_coverage",
    "file_hits",
    "file_ranking",
    "hits_from_topk",
    "relevant_results",
    "span_coverage",
    "span_table",
    "take_topk",
]
