"""judged@k: how much of what a system returns a judge has labelled.

On a harvested or judged folder the labels are incomplete (``Dataset.judged``): a result
nobody judged counts as not relevant, so a system that finds what the deployed ranker never
showed is scored down. judged@k says how far to trust a row: the share of a system's top k
results whose label is known, ir-measures' ``Judged@k`` at memlab's span level (tested
against it).

A result (lines ``s``–``e`` of a file) is judged for its question when its label follows
from the judged spans of that question and file: it overlaps a span judged relevant (the
folder format's rule makes it relevant), or it lies inside a span judged not relevant (its
lines of text: a chunk's range may end on the empty line after a file's final newline,
which a judged span, cut at the file's ``last_line``, does not hold).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from memlab.eval.lab import LabCandidates
    from memlab.pipeline import Ranking

__all__ = [
    "JUDGED_WARNING",
    "is_judged",
    "judged_at_k",
    "judged_columns",
    "judged_means",
    "judged_name",
    "top_spans",
]

# Below this share of judged results a table row is read with care (the warning says why).
JUDGED_WARNING = 0.9

RESULT_COLUMNS = ("qid", "rank", "path", "start_line", "end_line")


_PREFIX = "judged@"


def judged_name(k: int) -> str:
    """The column of judged@k in a table: ``"judged@K"``."""
    return f"{_PREFIX}{k}"


def judged_columns(table: pd.DataFrame) -> list[str]:
    """The judged@k columns of a results table (`judged_name`), in table order."""
    return [c for c in table.columns if c.startswith(_PREFIX)]


def top_spans(lc: LabCandidates, ranking: Ranking, keep: np.ndarray, k: int) -> pd.DataFrame:
    """The top ``k`` results of a ranking on the questions ``keep`` (bool [Q]) as a frame
    ``qid, rank`` (0-based) ``, path, start_line, end_line``: what `judged_at_k` reads."""
    cols = ranking.columns[keep][:, :k]
    pos = np.take_along_axis(lc.cs.pos[keep], np.maximum(cols, 0), axis=1)
    qids = np.asarray(lc.qids, dtype=object)[keep]
    q, r = np.nonzero(cols >= 0)
    at = pos[q, r]
    t = lc.cs.table
    return pd.DataFrame(
        {
            "qid": qids[q] if len(q) else np.empty(0, dtype=object),
            "rank": r,
            "path": np.asarray(t.paths, dtype=object)[at] if len(at) else [],
            "start_line": np.asarray(t.start_lines)[at] if len(at) else [],
            "end_line": np.asarray(t.end_lines)[at] if len(at) else [],
        }
    )


def judged_at_k(
    results: pd.DataFrame, judged: pd.DataFrame, qids: Sequence[str], k: int
) -> np.ndarray:
    """Per question of ``qids``: judged@k = #judged among the top min(k, n) results /
    min(k, n), n = the results the system returned for it (``results``: ``qid, rank, path,
    start_line, end_line``, rank 0-based); NaN when it returned none: nothing unjudged is
    there to count (ir-measures scores such a question, missing from its run, 0). ``judged``: ``qid, path, start_line, end_line,
    grade`` and optionally ``last_line`` (the file's lines of text; module docstring: which
    result counts as judged)."""
    spans: dict[tuple[str, str], list[tuple[int, int, int, int]]] = {}
    last = judged["last_line"] if "last_line" in judged.columns else [0] * len(judged)
    cols = ["qid", "path", "start_line", "end_line", "grade"]
    for (q, p, s, e, g), n in zip(judged.loc[:, cols].itertuples(index=False), last, strict=True):
        spans.setdefault((str(q), str(p)), []).append((int(s), int(e), int(g), int(n)))
    top = results[results["rank"] < k]
    count: dict[str, list[int]] = {}
    for q, p, s, e in top.loc[:, ["qid", "path", "start_line", "end_line"]].itertuples(index=False):
        c = count.setdefault(str(q), [0, 0])
        c[1] += 1
        c[0] += is_judged(spans.get((str(q), str(p)), ()), int(s), int(e))
    return np.array(
        [count[q][0] / count[q][1] if q in count else np.nan for q in map(str, qids)],
        dtype=np.float64,
    )


def is_judged(spans: Sequence[tuple[int, int, int, int]], start: int, end: int) -> bool:
    """Whether lines ``start``–``end`` have a known label among ``spans`` ((start, end,
    grade, the file's lines of text or 0: unknown) of one question and file): overlapping
    one of grade ≥ 1, or inside one of grade 0 (the result's end cut at the file's last
    line of text when it is known)."""
    for s, e, g, n in spans:
        if g >= 1 and s <= end and start <= e:
            return True
        if g < 1 and s <= start and (min(end, n) if n else end) <= e:
            return True
    return False


def judged_means(per_system: Mapping[str, np.ndarray]) -> dict[str, float]:
    """{system: mean judged@k over the questions it returned something for} (NaN when it
    returned nothing at all)."""
    out = {}
    for name, v in per_system.items():
        v = np.asarray(v, dtype=np.float64)
        out[name] = float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
    return out
