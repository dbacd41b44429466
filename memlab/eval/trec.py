"""An experiment in TREC form: runs, qrels and unit table that trec_eval, ir_measures or
ranx read (another system's run read back in: ``memlab.eval.trecrun``).

**Unit ids.** A run line names a *unit*: a line range of one memory file, written
``PATH:START-END`` (1-based, inclusive), with ``GROUP:`` in front when the dataset has
more than one workspace group (LoCoMo's conversations), e.g. ``memory/2023-05-08.md:12-12``
or ``conv-26:memory/2023-05-08.md:12-12``. Whitespace and ``%`` in a path are written as
``%XX`` (TREC files are split on whitespace). ``docs.tsv`` maps every id to its group,
path and lines.

**Qrels.** A unit is relevant to a question when its lines overlap one of the question's
evidence spans in the question's workspace (memlab's rule, ``memlab.eval.relevance``); its
grade is the largest grade of the spans it overlaps. A span no unit overlaps is judged
under its own id (no system can retrieve it, so it still counts in recall's denominator).

**When a document-level tool agrees with memlab.** memlab's metrics count evidence spans
(``memlab.eval.metrics``); ``trec_eval`` / ``ir_measures`` count relevant documents. On a
question whose spans and relevant units pair one to one (each span overlaps one unit and
each relevant unit one span, as at ``--unit turn`` when each span is one turn) the two
agree exactly: recall@k = R@k, ndcg@k = nDCG@k, mrr = RR, precision@k = P@k,
success@k = Success@k (``tests/test_trec.py``). A span over several units, or a unit
(an OpenClaw chunk) over several spans, is where they part: memlab credits the span once,
a document tool every relevant unit. ``qrels_stats`` counts such questions and the
README written beside the files (``trec_readme``) says so.

Another system's run read back into an experiment: ``memlab.eval.trecrun``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import numpy as np
import pandas as pd

from memlab.eval.metrics import parse_metric

if TYPE_CHECKING:
    from memlab.datasets.base import Dataset
    from memlab.eval.lab import LabCandidates

__all__ = [
    "DOCUMENT_MEASURES",
    "parse_unit_id",
    "qrels_for",
    "qrels_stats",
    "trec_readme",
    "trec_scores",
    "unit_id",
    "unit_ids",
    "unit_table",
    "write_docs",
    "write_qrels",
    "write_trec_run",
]

# memlab metric kind → the ir_measures measure that equals it on a one-to-one question
# (k is the metric's own). alpha_ndcg, subtopic_recall, recall_all and budget_recall
# have no document-level twin.
DOCUMENT_MEASURES = {
    "recall": "R",
    "ndcg": "nDCG",
    "mrr": "RR",
    "precision": "P",
    "recall_any": "Success",
}
_ESCAPE = re.compile(r"[\s%]")
_LINES = re.compile(r"^(\d+)(?:-(\d+))?$")
_RUN_COLUMNS = ["qid", "q0", "docno", "rank", "score", "tag"]


def _escape(path: str) -> str:
    return _ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), path)


def unit_id(path: str, start: int, end: int, group: str | None = None) -> str:
    """The TREC document id of lines ``start``–``end`` of ``path``: ``PATH:START-END``,
    ``GROUP:PATH:START-END`` when ``group`` is given; whitespace and ``%`` in the path
    (or group) percent-encoded, so the id has no blank and ``unquote`` gives the path
    back."""
    core = f"{_escape(str(path))}:{int(start)}-{int(end)}"
    return f"{_escape(str(group))}:{core}" if group is not None else core


def parse_unit_id(docno: str) -> tuple[str, int, int] | None:
    """``(head, start, end)`` of a `unit_id` (``PATH:START-END``, or ``PATH:LINE`` for one
    line): ``head`` unquoted, so it is the path, or ``GROUP:PATH`` when the id names its
    group; None when ``docno`` has no line part."""
    head, _, tail = docno.rpartition(":")
    m = _LINES.match(tail)
    if not head or m is None:
        return None
    start = int(m.group(1))
    return unquote(head), start, int(m.group(2)) if m.group(2) else start


def unit_table(lcs: Iterable[LabCandidates], *, multi_group: bool) -> pd.DataFrame:
    """Every unit (chunk) of the candidate sets' tables, once: ``docno`` (`unit_id`, the
    group in front when ``multi_group``), ``group``, ``path``, ``start_line``,
    ``end_line``, ``chunk_id`` (memlab's chunk hash). Tables of several labs (two FTS5
    tokenizers over one chunker) hold the same units and give one row each; a unit
    whose line range two chunkers share is one row (the first chunk id is kept)."""
    frames = []
    seen: set[int] = set()
    for lc in lcs:
        t = lc.cs.table
        if id(t) in seen:
            continue
        seen.add(id(t))
        frames.append(
            pd.DataFrame(
                {
                    "group": lc.unit_groups(),
                    "path": t.paths.astype(object),
                    "start_line": t.start_lines.astype(np.int64),
                    "end_line": t.end_lines.astype(np.int64),
                    "chunk_id": t.ids.astype(object),
                }
            )
        )
    cols = ["docno", "group", "path", "start_line", "end_line", "chunk_id"]
    if not frames:
        return pd.DataFrame(columns=cols)
    units = pd.concat(frames, ignore_index=True)
    units.insert(0, "docno", unit_ids(units, multi_group=multi_group))
    return units.drop_duplicates("docno", ignore_index=True)[cols]


def unit_ids(frame: pd.DataFrame, *, multi_group: bool) -> np.ndarray:
    """`unit_id` of every row of a frame with ``group, path, start_line, end_line``."""
    rows = zip(
        frame["group"].tolist(),
        frame["path"].tolist(),
        frame["start_line"].tolist(),
        frame["end_line"].tolist(),
        strict=True,
    )
    return np.array(
        [unit_id(p, s, e, g if multi_group else None) for g, p, s, e in rows], dtype=object
    )


def qrels_for(
    dataset: Dataset, units: pd.DataFrame, qids: Sequence[str], *, multi_group: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The qrels of questions ``qids`` over ``units`` (`unit_table`) and, per question,
    how its spans pair with units.

    Returns ``(qrels, pairing)``. ``qrels``: ``qid, docno, grade`` — each unit of the
    question's group whose lines overlap an evidence span of grade ≥ 1 (grade = the
    largest such span's), then each span no unit overlaps under its own id (`unit_id` of
    the span). ``pairing``: one row per question with evidence — ``spans``, ``units``
    (relevant units), ``one_to_one`` (each span overlaps at most one unit, each relevant
    unit one span, and no two unmatched spans share an id: the question where memlab's
    span metrics and document metrics agree). Questions without evidence have no rows
    in either (memlab leaves them out of every mean; ir_measures skips a question
    without qrels)."""
    wanted = {str(q) for q in qids}
    q = dataset.queries
    group_of = dict(zip(q["qid"], q["group"], strict=True))
    ev = dataset.evidence
    ev = ev[ev["qid"].isin(wanted) & (ev["grade"] >= 1)]
    by_file: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for (g, p), part in units.groupby(["group", "path"], sort=False):
        by_file[(str(g), str(p))] = (
            part["start_line"].to_numpy(np.int64),
            part["end_line"].to_numpy(np.int64),
            part["docno"].to_numpy(object),
        )
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, object))
    rows: list[tuple[str, str, int]] = []
    pairing = []
    for qid, spans in ev.groupby("qid", sort=False):
        g = str(group_of[qid])
        grade_of: dict[str, int] = {}
        spans_of_unit: dict[str, int] = {}
        unmatched: list[tuple[str, int]] = []
        one_to_one = True
        for path, s, e, grade in zip(
            spans["path"], spans["start_line"], spans["end_line"], spans["grade"], strict=True
        ):
            starts, ends, docnos = by_file.get((g, str(path)), empty)
            hit = docnos[(starts <= e) & (ends >= s)]
            if len(hit) > 1:
                one_to_one = False
            if len(hit) == 0:
                unmatched.append((unit_id(path, s, e, g if multi_group else None), int(grade)))
            for d in hit.tolist():
                grade_of[d] = max(grade_of.get(d, 0), int(grade))
                spans_of_unit[d] = spans_of_unit.get(d, 0) + 1
        if any(n > 1 for n in spans_of_unit.values()):
            one_to_one = False
        lone: dict[str, int] = {}
        for d, grade in unmatched:
            if d in lone:
                one_to_one = False  # two identical spans: one judged document
            lone[d] = max(lone.get(d, 0), grade)
        rows.extend((str(qid), d, gr) for d, gr in grade_of.items())
        rows.extend((str(qid), d, gr) for d, gr in lone.items())
        pairing.append(
            {
                "qid": str(qid),
                "spans": len(spans),
                "units": len(grade_of),
                "one_to_one": one_to_one,
            }
        )
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "grade"])
    return qrels, pd.DataFrame(pairing, columns=["qid", "spans", "units", "one_to_one"])


def qrels_stats(pairing: pd.DataFrame) -> dict[str, Any]:
    """A summary of `qrels_for`'s pairing: ``questions`` (with evidence), ``one_to_one``
    (where memlab's span metrics equal document metrics), ``not_one_to_one`` with up to
    five example qids."""
    bad = pairing[~pairing["one_to_one"].astype(bool)]
    return {
        "questions": len(pairing),
        "one_to_one": int(pairing["one_to_one"].astype(bool).sum()),
        "not_one_to_one": len(bad),
        "examples": bad["qid"].head(5).tolist(),
    }


def write_qrels(qrels: pd.DataFrame, path: str | Path) -> None:
    """TREC qrels: ``qid 0 docno grade`` per line."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for r in qrels.itertuples(index=False):
            fh.write(f"{r.qid} 0 {r.docno} {int(r.grade)}\n")


def write_docs(units: pd.DataFrame, path: str | Path) -> None:
    """``docs.tsv``: a header, then ``docno, group, path, start_line, end_line`` per unit
    (tab-separated; the path as stored, unescaped)."""
    units[["docno", "group", "path", "start_line", "end_line"]].to_csv(path, sep="\t", index=False)


def trec_scores(
    runs: pd.DataFrame, rank_scored: Iterable[str] = ()
) -> tuple[np.ndarray, list[str]]:
    """The score column a TREC run file gets for ``runs`` (``system, qid, rank, score``,
    rows in rank order within each system and question), as float32, and the systems
    written by rank.

    Tools that read a run (trec_eval, ir_measures, ranx) sort each question's list by
    score and break ties their own way (trec_eval: by docno descending), and trec_eval
    keeps a score in single precision: the written scores must strictly fall down each
    list as float32. A system in ``rank_scored`` (it re-orders after scoring: MMR,
    ``best_line_order="novel"``), or whose scores rise somewhere down a list, gets
    ``1 / (rank + 1)`` (rank 0-based). The others keep their scores rounded to float32,
    except that a score not below the one written before it in its list is written one
    float32 step below that one (``numpy.nextafter``): equal scores keep memlab's order
    and move by a few units in the 7th significant digit at most."""
    by_rank = set(rank_scored)
    system = runs["system"].to_numpy(object)
    qid = runs["qid"].to_numpy(object)
    score = runs["score"].to_numpy(np.float64)
    same_list = (system[1:] == system[:-1]) & (qid[1:] == qid[:-1])
    by_rank |= set(system[1:][same_list & (score[1:] > score[:-1])].tolist())
    out = score.astype(np.float32)
    down = np.float32(-np.inf)
    for i in np.flatnonzero(same_list) + 1:
        if out[i] >= out[i - 1]:
            out[i] = np.nextafter(out[i - 1], down)
    ranked = np.isin(system, list(by_rank))
    out[ranked] = 1.0 / (runs["rank"].to_numpy(np.float32)[ranked] + np.float32(1.0))
    order = list(dict.fromkeys(system.tolist()))
    return out, [s for s in order if s in by_rank]


def write_trec_run(
    runs: pd.DataFrame, path: str | Path, *, rank_scored: Iterable[str] = ()
) -> list[str]:
    """TREC run format: ``qid Q0 docno rank score system`` (rank 1-based), the docno from
    the ``unit`` column when there is one (`unit_id`), else ``docno``; the score as
    `trec_scores` gives it (9 significant digits: a float32 read back exactly). Returns
    the systems written by rank."""
    score, by_rank = trec_scores(runs, rank_scored)
    docs = runs["unit"] if "unit" in runs.columns else runs["docno"]
    with Path(path).open("w", encoding="utf-8") as fh:
        for qid, doc, rank, sc, system in zip(
            runs["qid"], docs, runs["rank"], score.tolist(), runs["system"], strict=True
        ):
            fh.write(f"{qid} Q0 {doc} {int(rank) + 1} {sc:.9g} {system}\n")
    return by_rank


def trec_readme(info: dict[str, Any]) -> str:
    """The README written beside an experiment's TREC files: what each file holds, how to
    re-score with ir_measures, and which of memlab's figures a document-level tool
    reproduces (``info``: the experiment's ``info``, with its ``trec`` entry)."""
    t = info.get("trec", {})
    pairing = t.get("pairing", {})
    unit = info.get("chunker", "?")
    n_q, n_one = pairing.get("questions", 0), pairing.get("one_to_one", 0)
    exact = [m for m in info.get("metrics", []) if parse_metric(m).kind in DOCUMENT_MEASURES]
    lines = [
        "# memlab experiment: TREC files",
        "",
        f"Dataset {info.get('dataset')!r}, unit {unit!r}, memlab {info.get('memlab_version')}.",
        "",
        "| file | holds |",
        "|---|---|",
        "| `runs.trec` | every system's ranked results: `qid Q0 docno rank score system` |",
        "| `qrels.trec` | relevance: `qid 0 docno grade` (a unit overlapping an evidence span"
        " of the question; a span no unit overlaps is judged under its own id) |",
        "| `docs.tsv` | every docno: `docno, group, path, start_line, end_line` (lines 1-based,"
        " inclusive; the path relative to the group's workspace) |",
        "| `per_query.csv`, `experiment.json` | memlab's own per-question values and table |",
        "",
        "A docno is `PATH:START-END` (`GROUP:PATH:START-END` when the dataset has several"
        " workspaces); whitespace and `%` in a path are percent-encoded.",
        "",
        "## Re-scoring with ir_measures",
        "",
        "```python",
        "import ir_measures",
        "import pandas as pd",
        "from ir_measures import RR, R, nDCG",
        "",
        'qrels = list(ir_measures.read_trec_qrels("qrels.trec"))',
        "cols = ['query_id', 'q0', 'doc_id', 'rank', 'score', 'system']",
        'runs = pd.read_csv("runs.trec", sep=" ", names=cols, dtype=str)',
        'runs["score"] = runs["score"].astype(float)',
        'for system, run in runs.groupby("system", sort=False):',
        "    print(system, ir_measures.calc_aggregate([R@6, nDCG@10, RR], qrels, run))",
        "```",
        "",
        "(`ir_measures.read_trec_run` drops the last column, the system: split the file by"
        " it, as above.) A question with evidence but no result line counts 0, as memlab"
        " counts it.",
        "",
        "## Which figures a document-level tool reproduces",
        "",
        "memlab scores evidence *spans* (a span counts once, however many results cover"
        " it); trec_eval and ir_measures score relevant *documents*. They agree exactly"
        " on a question whose spans and relevant units pair one to one. memlab's"
        " recall@k, ndcg@k, mrr, precision@k and success@k are then ir_measures' R@k,"
        " nDCG@k, RR, P@k and Success@k (to floating-point rounding; tests/test_trec.py"
        " checks it to 1e-9).",
        "",
        f"Here {n_one} of {n_q} questions with evidence pair one to one.",
    ]
    if n_q and n_one == n_q:
        lines.append(
            "Every question does: ir_measures gives memlab's figures"
            + (f" for {', '.join(exact)}" if exact else "")
            + " on these files."
        )
    else:
        ex = ", ".join(pairing.get("examples", []))
        lines += [
            f"On the other {n_q - n_one} (e.g. {ex}) a span covers several units or a unit"
            " (an OpenClaw chunk holding several evidence lines) covers several spans:"
            " memlab's span-based measure is not a document measure there, and"
            " ir_measures' figures differ from memlab's. This is expected at chunk level:"
            " use memlab's own numbers (per_query.csv) for chunk-level results, and a"
            " one-turn-per-unit evaluation (`--unit turn`) to cross-check with a"
            " document-level tool.",
        ]
    others = [m for m in info.get("metrics", []) if parse_metric(m).kind not in DOCUMENT_MEASURES]
    if others:
        lines.append(
            f"{', '.join(others)}: no document-level twin (span- or budget-based); memlab's"
            " own figures only."
        )
    by_rank = t.get("rank_scored", [])
    lines += [
        "",
        "Scores are written as float32 (trec_eval keeps single precision), strictly"
        " falling down each list: two equal scores are written one float32 step apart, in"
        " memlab's order, so every tool reads memlab's ranking.",
    ]
    if by_rank:
        lines += [
            "",
            f"Written by rank (score = 1/rank): {', '.join(by_rank)} — these re-order after"
            " scoring, and a tool sorting by score would change their order.",
        ]
    ext = t.get("external", [])
    if ext:
        lines += ["", "External runs scored in this experiment (`--run`):"]
        lines += [f"- {e['name']}: {e['external_run']}" for e in ext]
    return "\n".join(lines) + "\n"
