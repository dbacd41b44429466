"""Where a system puts the evidence: the rank of every evidence span (error analysis).

Recall@k says how much evidence is in the top k; it does not say whether the rest sits
just below the cut (a re-ranking could lift it), far down the system's ranking (its
scores are wrong), among candidates it never returns (a threshold or a stage dropped
them) or outside its candidates (no leg found it). ``evidence_ranks`` gives each
evidence span of each scored question its rank in a system's full ranking, and
``rank_shares`` bins those ranks by question category:

    rank(q, s) = 1 + min{ i : result i of q covers span s }   (NaN when none does)

so that, for any k up to the ranking's depth, a question's recall@k is the share of its
spans with rank ≤ k (``memlab.eval.metrics.recall``; tested). Lab layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.eval.relevance import NEVER, hits_from_topk

if TYPE_CHECKING:
    from memlab.eval.lab import LabCandidates
    from memlab.pipeline import Pipeline

__all__ = ["ALL_CATEGORIES", "RANK_EDGES", "evidence_ranks", "rank_shares"]

# Upper edges of the rank bins of ``rank_shares``: 1–5, 6–10, 11–20, 21–50, 51–200, then
# every rank further down.
RANK_EDGES: tuple[int, ...] = (5, 10, 20, 50, 200)
# The row label of the pooled row of ``rank_shares`` (parenthesised so that no category
# of a data set can take it).
ALL_CATEGORIES = "(all)"
# A span without a category (None / NaN in the data set).
NO_CATEGORY = "(none)"


def evidence_ranks(
    lc: LabCandidates, pipeline: Pipeline, results: int | None = None
) -> pd.DataFrame:
    """One row per evidence span of each question with evidence: ``qid``, ``category``,
    ``span`` (0-based, in evidence order), ``rank`` (1-based position of the first result
    covering it; NaN when no result does) and ``retrieved`` (True when a candidate covering
    it was found by one of the system's legs within its depth: the ``legs`` stage's
    ``vec_in`` / ``text_in``; a retrieved span without a rank was dropped by a later rule —
    ``min_score``, heading-only chunks, a best-line system's line cut).

    ``pipeline`` ranks ``lc``'s candidates with ``max_results`` raised to ``results``
    (default every candidate, ``lc.cs.width``) and its candidates per leg held at its own
    ``depth`` (``max_candidates`` set to it), so the ranks extend the ranking it returns
    rather than describe a deeper system (``results`` below its ``max_results``: its own
    ranking cut to ``results``). No candidates at all (width 0): every span unranked and
    not retrieved. Questions without evidence have no rows. ValueError when ``results``
    < 1.
    """
    if results is not None and int(results) < 1:
        raise ValueError(f"results must be >= 1, got {results!r}")
    valid = lc.spans.span_valid
    rows, spans = np.nonzero(valid)
    qids = np.asarray(lc.spans.qids, dtype=object)[rows]
    category = dict(zip(lc.qids, lc.categories.tolist(), strict=True))
    rank = np.full(len(rows), np.nan)
    retrieved = np.zeros(len(rows), dtype=bool)
    if lc.cs.width > 0:
        k = lc.cs.width if results is None else int(results)
        deep = pipeline
        if k > pipeline.max_results:
            deep = pipeline.replace(max_results=k, max_candidates=pipeline.depth)
        ranking = deep.rank(lc.cs)
        # Fewer results than the system returns: its own ranking, cut (not a shallower one).
        columns = ranking.columns[:, :k]
        h = hits_from_topk(lc.covers, columns, lc.spans, include_no_evidence=True)
        if list(h.qids) != list(lc.spans.qids):  # one question order, checked all the same
            raise ValueError("the ranking's questions are not the evidence's")
        pos = h.first_cover[rows, spans]
        rank = np.where(pos == NEVER, np.nan, pos + 1.0)
        found = np.isfinite(ranking.stage["vec_in"]) | np.isfinite(ranking.stage["text_in"])
        retrieved = (lc.covers & found[:, :, None])[rows, :, spans].any(axis=1)
    return pd.DataFrame(
        {
            "qid": qids,
            "category": [category[q] for q in qids],
            "span": spans.astype(np.int64),
            "rank": rank,
            "retrieved": retrieved,
        }
    )


def _sorted_categories(values: Sequence[Any]) -> list[Any]:
    # By value when the categories compare (1, 2, 10), else by their text.
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def rank_shares(ranks: pd.DataFrame, edges: Sequence[int] = RANK_EDGES) -> pd.DataFrame:
    """The share of evidence spans in each rank bin, by category, then pooled
    (``ALL_CATEGORIES``).

    Columns: ``spans`` (how many), one per bin (``1-5``, ``6-10``, …: ranks in (previous
    edge, edge]), ``>200`` (ranked below the last edge), ``dropped`` (no rank, but
    ``retrieved``) and ``not retrieved``, each a fraction of the row's spans; a row's
    fractions sum to 1 (NaN for a row without spans: an empty ``ranks`` gives only the
    pooled row, 0 spans). ``ranks``: `evidence_ranks` columns (``retrieved`` absent = no
    unranked span was retrieved). Categories missing (None / NaN) are ``(none)``; rows
    sorted by category. ``edges``: increasing positive integers (else ValueError). Spans
    are pooled, so a question with more evidence weighs more than in a mean of
    per-question recall.
    """
    e = [int(x) for x in edges]
    if not e or e[0] < 1 or any(b <= a for a, b in pairwise(e)):
        raise ValueError(f"edges must be increasing positive integers, got {list(edges)!r}")
    labels = [f"{lo + 1}-{hi}" for lo, hi in zip([0, *e[:-1]], e, strict=True)]
    labels += [f">{e[-1]}", "dropped", "not retrieved"]
    r = ranks["rank"].to_numpy(dtype=np.float64)
    got = (
        ranks["retrieved"].to_numpy(dtype=bool)
        if "retrieved" in ranks
        else np.zeros(len(r), dtype=bool)
    )
    # searchsorted(side="left"): a rank equal to an edge falls in the bin that edge closes.
    ranked_bin = np.searchsorted(np.asarray(e, dtype=np.float64), np.nan_to_num(r, nan=0.0))
    bin_of = np.where(np.isnan(r), np.where(got, len(e) + 1, len(e) + 2), ranked_bin)
    cats = ranks["category"].astype(object).where(ranks["category"].notna(), NO_CATEGORY)
    groups = [*_sorted_categories(list(pd.unique(cats))), ALL_CATEGORIES]
    out = []
    for g in groups:
        b = bin_of if g == ALL_CATEGORIES else bin_of[(cats == g).to_numpy()]
        counts = np.bincount(b.astype(np.int64), minlength=len(labels))
        shares = counts / len(b) if len(b) else np.full(len(labels), np.nan)
        out.append([len(b), *shares])
    index = pd.Index([str(g) for g in groups], name="category")
    return pd.DataFrame(out, index=index, columns=["spans", *labels])
