"""The pool a judging session asks about: for every question, the top K results of each
preset, each question answered as of its cut-off (the lab's as-of view, ``Lab(as_of=True)``),
and the hits the agent saw (``shown.trec``, the "deployed" system), one item per line span.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.config.vocab import DEPLOYED
from memlab.datasets.judgments import SpanKey

if TYPE_CHECKING:
    from memlab.eval.lab import Lab
    from memlab.pipeline import Pipeline

__all__ = [
    "DEPLOYED",
    "Pool",
    "PoolItem",
    "build_pool",
    "shown_results",
]


@dataclass(frozen=True)
class PoolItem:
    """One span of the pool: lines ``start_line``–``end_line`` of ``path`` for question
    ``qid`` (workspace ``group``); ``ranks``: (system, 0-based rank) of every system that
    returns it in its top K."""

    qid: str
    group: str
    path: str
    start_line: int
    end_line: int
    ranks: tuple[tuple[str, int], ...]

    @property
    def key(self) -> SpanKey:
        """``(qid, path, start_line, end_line)``: what an answer is about."""
        return (self.qid, self.path, self.start_line, self.end_line)


@dataclass
class Pool:
    """The spans to judge (``items``, by question in the dataset's order, then by the best
    rank any system gives them), the ``systems`` compared and the ``depth`` K, and the
    ``dataset`` they come from (its questions and workspaces show a span)."""

    items: list[PoolItem]
    systems: list[str]
    depth: int
    dataset: Any
    info: dict[str, Any] = field(default_factory=dict)

    def rank_matrix(self) -> np.ndarray:
        """int [items, systems]: each span's 0-based rank in each system's top K, −1 when
        the system does not return it (`memlab.eval.judge.order.PairOrder`'s input)."""
        col = {s: j for j, s in enumerate(self.systems)}
        out = np.full((len(self.items), len(self.systems)), -1, dtype=np.int64)
        for i, item in enumerate(self.items):
            for s, r in item.ranks:
                out[i, col[s]] = r
        return out


def shown_results(path: str | Path, qids: Sequence[str]) -> pd.DataFrame:
    """The hits a harvested folder's ``shown.trec`` holds for ``qids``, as results
    ``qid, rank`` (0-based, in the order the agent saw them) ``, path, start_line,
    end_line``; documents that are no ``PATH:START-END`` id (``memlab.eval.trec.unit_id``) are
    left out."""
    from memlab.eval.trec import parse_unit_id
    from memlab.eval.trecrun import read_trec_run

    run = read_trec_run(path)
    run = run[run["qid"].astype(str).isin(set(map(str, qids)))].sort_values(
        ["qid", "rank"], kind="stable"
    )
    rows = []
    for qid, docno, r in zip(run["qid"], run["docno"], run["rank"], strict=True):
        parsed = parse_unit_id(str(docno))
        if parsed is not None:
            rows.append((str(qid), int(r), *parsed))
    out = pd.DataFrame(rows, columns=["qid", "order", "path", "start_line", "end_line"])
    out["rank"] = out.groupby("qid").cumcount()
    return out.drop(columns="order")


def build_pool(
    lab: Lab,
    presets: Sequence[Pipeline],
    depth: int = 10,
    shown: str | Path | None = None,
) -> Pool:
    """The pool of ``presets`` at depth ``depth`` on ``lab``'s dataset (each preset asked for
    ``depth`` results, ``Pipeline.at_k``; every question as of its cut-off when the lab
    answers so), plus the top ``depth`` hits of ``shown`` (a ``shown.trec``) as the system
    ``deployed``. Spans are de-duplicated by (question, file, lines of text: a range
    ending on the empty line after a file's final newline, as OpenClaw's chunks may, is cut
    to the file's last line of text, as harvest cuts the hits it places). A depth below 1
    raises ``ValueError``."""
    from memlab.datasets.harvest.anchor import WorkspaceFiles
    from memlab.eval.judged import top_spans

    if depth < 1:
        raise ValueError(f"the pool depth must be >= 1, got {depth}")
    ds = lab.dataset
    qids = [str(q) for q in ds.queries["qid"]]
    group_of = dict(zip(qids, ds.queries["group"].astype(str), strict=True))
    frames: list[tuple[str, pd.DataFrame]] = []
    for p in presets:
        q = p.at_k(depth)
        lc = lab.candidates_for([q])[q.name]
        frames.append((p.name, top_spans(lc, lc.rank(q), np.ones(len(lc.qids), bool), depth)))
    if shown is not None and Path(shown).is_file():
        frames.append((DEPLOYED, shown_results(shown, qids)))
    files = {g: WorkspaceFiles(Path(ws)) for g, ws in ds.workspaces.items()}

    def text_end(qid: str, path: str, start: int, end: int) -> int:
        lines = files[group_of[qid]].lines(path) if qid in group_of else None
        return end if lines is None else max(start, min(end, len(lines)))

    found: dict[SpanKey, list[tuple[str, int]]] = {}
    for name, top in frames:
        top = top[top["rank"] < depth]
        cols = ["qid", "path", "start_line", "end_line", "rank"]
        for qid, path, s, e, r in top.loc[:, cols].itertuples(index=False):
            key = (str(qid), str(path), int(s), text_end(str(qid), str(path), int(s), int(e)))
            ranks = found.setdefault(key, [])
            if all(n != name for n, _ in ranks):
                ranks.append((name, int(r)))
    position = {q: i for i, q in enumerate(qids)}
    items = [
        PoolItem(k[0], group_of[k[0]], k[1], k[2], k[3], tuple(r))
        for k, r in found.items()
        if k[0] in position
    ]
    items.sort(key=lambda it: (position[it.qid], min(r for _, r in it.ranks), it.path))
    systems = [name for name, _ in frames]
    return Pool(items, systems, depth, ds, {"questions": len(qids)})
