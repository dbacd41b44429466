"""Human relevance judgments in a dataset folder (``judgments.jsonl``) and which labels a
table uses (``--qrels human|implicit|both``): the folder format's rules, one owner.

``judgments.jsonl`` is an append-only log (``memlab judge`` and the notebook's ``Judge``
write it; docs/folder-format.md). One row per answer::

    {"qid", "path", "start_line", "end_line", "grade", "time"}

``grade`` 1 (relevant), 0 (judged not relevant) or null with ``"skip": true`` (seen, not
judged); a row with ``"retract": true`` withdraws the span's standing answer (undo). The
standing answer of a span ``(qid, path, start_line, end_line)`` is its latest row; a
retraction leaves it unjudged. A last line cut short by a crash (no newline, not JSON) is
no answer: it was never acknowledged.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.config.vocab import QRELS_SOURCES

__all__ = [
    "IMPLICIT_JUDGE",
    "JUDGMENTS_FILE",
    "SpanKey",
    "human_judgments",
    "read_judgment_rows",
    "select_qrels",
    "span_key",
    "standing_answers",
]

JUDGMENTS_FILE = "judgments.jsonl"
# The ``judge`` of the evidence rows harvest infers from the agent's follow-ups.
IMPLICIT_JUDGE = "implicit"
HUMAN_JUDGE = "human"

SpanKey = tuple[str, str, int, int]


def span_key(row: Mapping[str, Any]) -> SpanKey:
    """``(qid, path, start_line, end_line)`` of a row: what one answer is about."""
    return (str(row["qid"]), str(row["path"]), int(row["start_line"]), int(row["end_line"]))


def read_judgment_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a judgments log in file order ([] when the file does not exist).

    A last line without its newline that is not valid JSON is a write a crash cut short:
    ignored. Any other line that is not a JSON object with ``qid``, ``path``,
    ``start_line`` and ``end_line`` raises ``ValueError`` naming ``file:line``.
    """
    p = Path(path)
    if not p.exists():
        return []
    raw = p.read_bytes()
    lines = raw.split(b"\n")
    torn = lines[-1]  # b"" when the file ends with a newline
    rows = []
    for lineno, line in enumerate(lines[:-1], 1):
        if line.strip():
            rows.append(_parse(line, p, lineno))
    if torn.strip():
        # a torn write (not JSON) was never acknowledged: no answer is lost by leaving it
        with contextlib.suppress(ValueError):
            rows.append(_parse(torn, p, len(lines)))
    return rows


def _parse(line: bytes, path: Path, lineno: int) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}:{lineno}: not valid JSON ({exc})") from exc
    need = ("qid", "path", "start_line", "end_line")
    if not isinstance(row, dict) or any(k not in row for k in need):
        raise ValueError(f"{path}:{lineno}: a judgment needs {', '.join(need)}")
    return row


def standing_answers(rows: Iterable[Mapping[str, Any]]) -> dict[SpanKey, dict[str, Any]]:
    """The standing answer of every span, in the order they were given: the latest row of
    each span, spans whose latest row is a retraction left out. Skips stand too (their
    ``grade`` is None): a skipped span is not asked again until its skip is undone."""
    out: dict[SpanKey, dict[str, Any]] = {}
    for row in rows:
        key = span_key(row)
        out.pop(key, None)  # re-inserted last: the order answers stand in
        if not row.get("retract"):
            out[key] = dict(row)
    return out


def human_judgments(root: str | Path) -> pd.DataFrame:
    """The human labels of a folder's ``judgments.jsonl``: one row per judged span
    (skips and retracted answers left out) with ``qid, path, start_line, end_line, grade``
    (1 or 0), ``judge`` = ``"human"`` and ``time``; empty (with those columns) when there
    is no log."""
    rows = standing_answers(read_judgment_rows(Path(root) / JUDGMENTS_FILE)).values()
    cols = ["qid", "path", "start_line", "end_line", "grade", "judge", "time"]
    kept = [
        {**{c: r.get(c) for c in cols}, "judge": HUMAN_JUDGE, "grade": int(r["grade"])}
        for r in rows
        if r.get("grade") is not None
    ]
    return pd.DataFrame(kept, columns=cols)


def select_qrels(
    evidence: pd.DataFrame, human: pd.DataFrame, which: str = "both"
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(relevant spans, judged spans) of a folder under ``--qrels which``.

    The labels: evidence rows whose ``judge`` is ``"implicit"`` (harvest's), and the human
    ones — every other evidence row (written by hand) plus ``human`` (the judgments log:
    grade 1 relevant, 0 judged not relevant). ``"implicit"`` takes the first, ``"human"``
    the second, ``"both"`` both, a human label replacing an implicit one of the same span.
    The relevant spans are those of grade ≥ 1 (evidence rows, ``span_id`` kept; judgment
    rows get ``h0``, ``h1`` … per question). The judged spans (``qid, path, start_line,
    end_line, grade``) are every label, relevant or not: judged@k counts a result as
    judged by them. They are None when the folder holds no judge at all (no ``judge``
    column, no judgments log): its evidence is then read as complete, as a generated or
    hand-written dataset's is. ``which`` outside ``vocab.QRELS_SOURCES`` raises
    ``ValueError``.
    """
    if which not in QRELS_SOURCES:
        raise ValueError(f"qrels must be one of {', '.join(QRELS_SOURCES)}; got {which!r}")
    ev = evidence.copy()
    judged_folder = "judge" in ev.columns or len(human) > 0
    is_implicit = (
        ev["judge"].astype(str).eq(IMPLICIT_JUDGE)
        if "judge" in ev.columns
        else pd.Series(False, index=ev.index)
    )
    implicit, given = ev[is_implicit], ev[~is_implicit]
    hum = human.copy()
    if len(hum):
        hum["span_id"] = "h" + hum.groupby("qid").cumcount().astype(str)
    parts: list[pd.DataFrame] = []
    if which in ("human", "both"):
        parts += [given, hum]
    if which in ("implicit", "both"):
        if which == "both" and len(hum):
            overruled = set(map(span_key, hum.to_dict("records")))
            keep = [span_key(r) not in overruled for r in implicit.to_dict("records")]
            implicit = implicit[keep]
        parts.append(implicit)
    parts = [p for p in parts if len(p)]
    span_cols = ["qid", "path", "start_line", "end_line", "grade"]
    if not parts:
        empty = ev.iloc[:0]
        return empty, (pd.DataFrame(columns=span_cols) if judged_folder else None)
    labels = pd.concat(parts, ignore_index=True)
    if "grade" not in labels.columns:
        labels["grade"] = 1
    labels["grade"] = labels["grade"].fillna(1).astype(int)
    relevant = labels[labels["grade"] >= 1].reset_index(drop=True)
    if not judged_folder:
        return relevant, None
    return relevant, labels[span_cols].reset_index(drop=True)
