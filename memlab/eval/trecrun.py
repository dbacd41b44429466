"""Another system's TREC run as a row of an experiment (``memlab eval … --run NAME=FILE``).

``read_trec_run`` reads ``qid Q0 docno rank score [tag]``; ``map_run`` turns each docno
into a line range of the dataset (a unit id of ``memlab.eval.trec``, a memlab chunk id, or
``PATH:LINE`` / ``PATH:START-END`` of a memory file of the question's workspace), refusing
with counts a run that names unknown questions or documents; ``score_mapped_run`` scores it
with memlab's own span metrics, so the row is comparable with every memlab system and
enters the same paired tests (``memlab.eval.experiment.run_experiment(external_runs=)``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.eval.lab import GROUP_SEP, keyed_evidence
from memlab.eval.metrics import evaluate_hits, parse_metric
from memlab.eval.relevance import span_coverage
from memlab.eval.trec import parse_unit_id, unit_ids

if TYPE_CHECKING:
    from memlab.datasets.base import Dataset

__all__ = ["ExternalRun", "RunMappingError", "map_run", "read_trec_run", "score_mapped_run"]

_LINES = re.compile(r"^(\d+)(?:-(\d+))?$")


class RunMappingError(ValueError):
    """A run file that names questions or documents memlab cannot place (with counts)."""


@dataclass
class ExternalRun:
    """Another system's ranked results, as a row of an experiment.

    ``name``: the row's name; ``source``: where it came from (a file path, or
    ``"DataFrame"``); ``results``: its mapped results (``map_run``: ``qid, rank,
    group, path, start_line, end_line, docno``), cut at the experiment's depth;
    ``info``: counts (results read, questions answered, results beyond the depth).
    """

    name: str
    source: str
    results: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """What ``ExperimentResult.to_json`` shows as its settings: the source and counts."""
        return {"name": self.name, "external_run": self.source, **self.info}


def read_trec_run(path: str | Path) -> pd.DataFrame:
    """A TREC run file as ``qid, docno, rank, score`` (strings, int, float): whitespace-
    separated ``qid Q0 docno rank score [tag]`` lines; blank lines and ``#`` comments
    skipped. Raises ``RunMappingError`` naming the first malformed line."""
    rows = []
    text = Path(path).read_text(encoding="utf-8")
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) not in (5, 6):
            raise RunMappingError(
                f"{path}:{n}: a TREC run line is 'qid Q0 docno rank score [tag]'; got {line!r}"
            )
        try:
            rank, score = int(parts[3]), float(parts[4])
        except ValueError:
            raise RunMappingError(
                f"{path}:{n}: rank must be an integer and score a number; got {line!r}"
            ) from None
        if not math.isfinite(score):
            raise RunMappingError(f"{path}:{n}: score must be finite; got {parts[4]!r}")
        rows.append((parts[0], parts[2], rank, score))
    return pd.DataFrame(rows, columns=["qid", "docno", "rank", "score"])


def _file_ends(units: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(group, path) → the last line any unit of the file reaches."""
    ends = units.groupby(["group", "path"], sort=False)["end_line"].max()
    return {(str(g), str(p)): int(e) for (g, p), e in ends.items()}


def _parse_lines(
    docno: str, group: str, files: dict[tuple[str, str], int]
) -> tuple[str, int, int] | None:
    """``(path, start, end)`` of a ``[GROUP:]PATH:LINE`` / ``[GROUP:]PATH:START-END`` id
    of a memory file of ``group`` (the lines within the file), else None."""
    parsed = parse_unit_id(docno)
    if parsed is None:
        return None
    path, start, end = parsed
    candidates = [path]
    if path.startswith(f"{group}:"):  # the question's own group named in front
        candidates.insert(0, path[len(group) + 1 :])
    for p in candidates:
        last = files.get((group, p))
        if last is not None and 1 <= start <= end <= last:
            return p, start, end
    return None


def map_run(
    run: pd.DataFrame,
    dataset: Dataset,
    units: pd.DataFrame,
    *,
    qids: Sequence[str],
    name: str = "run",
) -> pd.DataFrame:
    """Another system's results as line ranges of this dataset: ``qid, rank (0-based),
    group, path, start_line, end_line, docno``.

    Each question's list is ordered as trec_eval orders it — score descending, ties by
    docno descending — and ranked 0, 1, …; the file's rank column is not used. A docno
    is, in the order tried: a unit id of ``units`` (`unit_table`, what ``docs.tsv``
    lists), a memlab chunk id, or ``PATH:LINE`` / ``PATH:START-END`` (``GROUP:`` in
    front allowed) of a memory file of the question's workspace, lines within the file.

    Raises ``RunMappingError`` with counts and examples when the run names questions not
    in ``qids`` or documents none of these rules places; a question of ``qids`` the run
    does not answer scores 0, as ``trec_eval -c`` does.
    """
    run = run.copy()
    run["qid"] = run["qid"].astype(str)
    run["docno"] = run["docno"].astype(str)
    known_q = {str(q) for q in qids}
    unknown_q = sorted(set(run["qid"]) - known_q)
    group_of = dict(zip(dataset.queries["qid"], dataset.queries["group"], strict=True))
    by_unit = {d: i for i, d in enumerate(units["docno"].tolist())}
    by_chunk = {c: i for i, c in enumerate(units["chunk_id"].tolist())}
    files = _file_ends(units)
    u_group = units["group"].to_numpy(object)
    u_path = units["path"].to_numpy(object)
    u_start = units["start_line"].to_numpy(np.int64)
    u_end = units["end_line"].to_numpy(np.int64)
    run = run[run["qid"].isin(known_q)]
    out_group, out_path, out_start, out_end = [], [], [], []
    bad: list[str] = []
    for qid, docno in zip(run["qid"].tolist(), run["docno"].tolist(), strict=True):
        g = str(group_of[qid])
        i = by_unit.get(docno, by_chunk.get(docno))
        if i is not None and u_group[i] == g:
            out_group.append(g)
            out_path.append(u_path[i])
            out_start.append(int(u_start[i]))
            out_end.append(int(u_end[i]))
            continue
        parsed = _parse_lines(docno, g, files)
        if parsed is None:
            bad.append(docno)
            out_group.append(g)
            out_path.append("")
            out_start.append(0)
            out_end.append(0)
            continue
        out_group.append(g)
        out_path.append(parsed[0])
        out_start.append(parsed[1])
        out_end.append(parsed[2])
    if unknown_q or bad:
        problems = []
        if unknown_q:
            problems.append(
                f"{len(unknown_q)} question(s) not in the dataset's scored questions "
                f"(e.g. {', '.join(map(repr, unknown_q[:3]))})"
            )
        if bad:
            ex = list(dict.fromkeys(bad))[:3]
            problems.append(
                f"{len(bad)} of {len(run)} results name documents memlab cannot place (e.g. "
                f"{', '.join(map(repr, ex))}): a docno must be a unit id of docs.tsv, a memlab "
                "chunk id, or PATH:LINE / PATH:START-END of a memory file of the question's "
                "workspace with lines inside the file"
            )
        raise RunMappingError(f"run {name!r}: " + "; ".join(problems))
    mapped = pd.DataFrame(
        {
            "qid": run["qid"].to_numpy(object),
            "score": run["score"].to_numpy(np.float64),
            "group": np.array(out_group, dtype=object),
            "path": np.array(out_path, dtype=object),
            "start_line": np.array(out_start, dtype=np.int64),
            "end_line": np.array(out_end, dtype=np.int64),
            "source_docno": run["docno"].to_numpy(object),
        }
    )
    # trec_eval's order: score descending, then docno descending.
    mapped = mapped.sort_values(
        ["qid", "score", "source_docno"], ascending=[True, False, False], kind="stable"
    )
    mapped["rank"] = mapped.groupby("qid", sort=False).cumcount().astype(np.int64)
    multi = len(dataset.workspaces) > 1
    mapped["docno"] = unit_ids(mapped, multi_group=multi) if len(mapped) else []
    cols = ["qid", "rank", "score", "group", "path", "start_line", "end_line", "docno"]
    return mapped[cols].reset_index(drop=True)


def score_mapped_run(
    mapped: pd.DataFrame, dataset: Dataset, qids: Sequence[str], metrics: Sequence[str]
) -> dict[str, np.ndarray]:
    """Per-question values [Q] (``qids`` order) of memlab's metrics on a mapped run
    (`map_run`), against the dataset's evidence keyed by group as a lab keys it — the
    same span coverage and metric functions every memlab system is scored with. A
    question without evidence is NaN; one without results scores 0. ``budget_recall``
    is refused: a run file carries no result texts to count tokens in."""
    specs = [parse_metric(m) for m in metrics]
    if any(s.kind == "budget_recall" for s in specs):
        raise ValueError(
            "budget_recall needs the text of each result; an external run has none: "
            "leave it out of --metrics"
        )
    keyed = mapped.assign(path=mapped["group"].astype(str) + GROUP_SEP + mapped["path"])
    h = span_coverage(
        keyed,
        keyed_evidence(dataset),
        qids=[str(q) for q in qids],
        tokens_column=None,
        include_no_evidence=True,
    )
    values = evaluate_hits(h, specs)
    has = h.n_spans > 0
    return {k: np.where(has, v, np.nan) for k, v in values.items()}
