"""A lab's candidates: `LabCandidates` (one merged ``CandidateSet`` over every question of
a dataset, with the evidence coverage of every candidate), scored per query at unit or
file level; `keyed_evidence` (the evidence under group-keyed paths) and `deep` (a system
asked for every candidate it scores, what file-level scoring ranks)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.chunking import estimate_chars
from memlab.eval.metrics import evaluate_hits, parse_metric
from memlab.eval.relevance import SpanTable, file_hits, hits_from_topk
from memlab.retrieval.candidates import CandidateSet

if TYPE_CHECKING:
    from memlab.datasets.base import Dataset
    from memlab.pipeline import Pipeline, Ranking

__all__ = ["GROUP_SEP", "LabCandidates", "deep", "keyed_evidence"]

# Joins group and path into one key (the path vocabulary of a lab's SpanTable): groups
# may share relative paths.
GROUP_SEP = "\x1f"


def keyed_evidence(dataset: Dataset) -> Any:
    """``dataset.evidence`` with ``path`` = group + `GROUP_SEP` + path (the group of the
    span's question): the path keys of a lab's `SpanTable`, under which two groups'
    equal relative paths stay two files."""
    q = dataset.queries
    ev = dataset.evidence
    group_of = dict(zip(q["qid"], q["group"], strict=True))
    return ev.assign(path=ev["qid"].map(group_of).astype(str) + GROUP_SEP + ev["path"])


@dataclass
class LabCandidates:
    """Candidates of every question of a dataset, with their evidence coverage.

    ``cs`` rows follow ``qids`` (the dataset's question order). ``covers``
    [Q, C, S] says which candidate covers which evidence span; ``spans`` is the
    padded evidence. ``groups`` names the workspace group of each segment of
    ``cs.table`` (``ChunkTable.segments``; one name when the table has no segments).
    ``tokens`` [N] is each chunk's snippet token estimate (filled on demand for budget
    metrics). ``cand_path`` [Q, C]: each candidate's file as an index into
    ``spans.paths`` (−1 = padding); ``level``: what `score` scores, ``"unit"`` (the ranked
    units) or ``"file"`` (their files: ``memlab.eval.relevance.file_hits``; see `rank`).
    """

    cs: CandidateSet
    qids: list[str]
    spans: SpanTable
    covers: np.ndarray
    categories: np.ndarray
    groups: tuple[str, ...] = ()
    _tokens: np.ndarray | None = field(default=None, repr=False)
    cand_path: np.ndarray | None = None
    level: str = "unit"

    def unit_groups(self) -> np.ndarray:
        """The workspace group of every chunk of ``cs.table``, by position (object [N]);
        ``"default"`` for every chunk of a table built without groups."""
        n = len(self.cs.table)
        seg = self.cs.table.segments
        names = np.array(self.groups or ("default",), dtype=object)
        if seg is None:
            return np.full(n, names[0], dtype=object)
        return names[np.asarray(seg, dtype=np.int64)] if n else np.empty(0, dtype=object)

    def chunk_tokens(self) -> np.ndarray:
        """Token estimate (weighted chars / 4, as OpenClaw's 4 chars per token) of each
        candidate chunk's 700-char snippet, by table position (NaN where never a candidate)."""
        if self._tokens is None:
            from memlab.retrieval.rerank import snippet

            tok = np.full(len(self.cs.table), np.nan)
            pos = np.unique(self.cs.pos[self.cs.pos >= 0])
            for p, t in zip(pos, self.cs.texts(pos), strict=True):
                tok[p] = estimate_chars(snippet(t)) / 4.0
            self._tokens = tok
        return self._tokens

    def subset(self, rows: Sequence[int] | np.ndarray) -> LabCandidates:
        r = np.asarray(rows, dtype=np.int64)
        sp = self.spans
        arrays = {
            f.name: getattr(sp, f.name)[r]
            for f in dataclasses.fields(sp)
            if isinstance(getattr(sp, f.name), np.ndarray)
        }
        spans = dataclasses.replace(sp, qids=[sp.qids[i] for i in r], **arrays)
        return LabCandidates(
            cs=self.cs.subset(r),
            qids=[self.qids[i] for i in r],
            spans=spans,
            covers=self.covers[r],
            categories=self.categories[r],
            groups=self.groups,
            _tokens=self._tokens,
            cand_path=None if self.cand_path is None else self.cand_path[r],
            level=self.level,
        )

    def rank(self, pipeline: Pipeline) -> Ranking:
        """``pipeline.rank(cs)`` at unit level. At file level the system ranks every
        candidate it scores (`deep`), so that its files are ranked to the depth its units
        allow: a file's rank is its best unit's, and k files need more than k units."""
        return (deep(pipeline, self.cs.width) if self.level == "file" else pipeline).rank(self.cs)

    def score(
        self,
        pipeline: Pipeline | None,
        metrics: Sequence[str],
        *,
        ranking: Ranking | None = None,
    ) -> dict[str, np.ndarray]:
        """Per-query metric values [Q] of one system (queries without evidence are NaN):
        of ``ranking`` when given (its columns index ``cs``; ``pipeline`` may then be None),
        else of `rank`. At file level (``level="file"``) the ranking's units are reduced to
        their files and scored against the evidence files (``file_hits``); a budget metric
        is refused there (a file has no token count of its own)."""
        if ranking is None:
            if pipeline is None:
                raise ValueError("score needs a pipeline or a ranking")
            ranking = self.rank(pipeline)
        specs = [parse_metric(m) for m in metrics]
        has = self.spans.has_evidence
        if self.level == "file":
            if any(s.kind == "budget_recall" for s in specs):
                raise ValueError("budget_recall reads units' token counts: not at level='file'")
            if self.cand_path is None:
                raise ValueError("file-level scoring needs cand_path (candidates from a Lab)")
            hf = file_hits(ranking.columns, self.cand_path, self.spans, include_no_evidence=True)
            return {k: np.where(has, v, np.nan) for k, v in evaluate_hits(hf, specs).items()}
        tokens = None
        if any(s.kind == "budget_recall" for s in specs):
            tok = self.chunk_tokens()
            safe = np.where(ranking.columns >= 0, ranking.columns, 0)
            pos = np.take_along_axis(self.cs.pos, safe, axis=1)
            tokens = np.where(ranking.columns >= 0, tok[pos], 0.0)
        h = hits_from_topk(
            self.covers, ranking.columns, self.spans, tokens=tokens, include_no_evidence=True
        )
        values = evaluate_hits(h, specs)
        return {k: np.where(has, v, np.nan) for k, v in values.items()}

    @property
    def has_evidence(self) -> np.ndarray:
        return self.spans.has_evidence


def deep(p: Pipeline, width: int) -> Pipeline:
    """``p`` asked to return every candidate it scores, at its own depth: ``max_results``
    raised to ``max(width, ceil(depth / candidate_multiplier))`` with ``max_candidates``
    pinned to its depth, so the candidates per leg stay ``p.depth`` (its selection rules —
    min_score, best-line validity — still apply). ``width``: the candidate set's columns.
    What file-level scoring ranks (`LabCandidates.rank`)."""
    d = p.depth
    wanted = max(int(width), math.ceil(d / p.candidate_multiplier), 1)
    if wanted <= p.max_results:
        return p
    return p.replace(max_results=wanted, max_candidates=d)
