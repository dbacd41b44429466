"""LongMemEval loader: each question's haystack becomes its own OpenClaw workspace.

LongMemEval (Wu et al., ICLR 2025; MIT) ships JSON files (``longmemeval_s``,
``_m``, ``_oracle``) holding a list of question instances, each with its own
haystack of timestamped user/assistant sessions. A question's workspace is
``<out_dir>/<question_id>/memory/YYYY-MM-DD.md``: sessions in time order, each a
heading ``## Session S3 — 2023/05/20 (Sat) 02:21`` then one line per turn,
``[S3:2] User: text`` (turn numbers 1-based, as in LongMemEval's own turn ids).

Sessions are labelled ``S1, S2, ...`` in time order rather than by their
original ids because those ids leak the labels: evidence sessions are named
``answer_...``, and that word would then match any question containing
"answer" under full-text search. The original id is kept in the evidence
column ``session_id``.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.datasets.base import Dataset, locate_data
from memlab.datasets.convwriter import (
    LINE_BREAKS,
    Session,
    cache_dir,
    check_dirname,
    evidence_frame,
    flatten,
    materialise,
    read_json,
    sha256_file,
    write_daily_files,
)

LONGMEMEVAL_QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
LONGMEMEVAL_LICENSE = "MIT"
_FORMAT_VERSION = 2  # 2: the cutoff column (the memory as of the question)
_REQUIRED = {
    "question_id": str,
    "question_type": str,
    "question": str,
    "haystack_session_ids": list,
    "haystack_dates": list,
    "haystack_sessions": list,
}
_LME_DT = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*([A-Za-z]+)\s*\))?\s*(\d{1,2}):(\d{2})\s*$"
)
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_ROLES = {"user": "User", "assistant": "Assistant"}
_DEFECTS = (
    "questions_without_evidence",
    "answer_sessions_without_marked_turns",
    "answer_sessions_not_in_haystack",
    "answer_sessions_empty",
    "has_answer_outside_answer_sessions",
    "duplicate_session_ids",
    "empty_sessions",
    "turns_multiline_flattened",
    "turns_missing_content",
    "unknown_roles",
    "unknown_question_types",
    "missing_answer",
    "missing_answer_session_ids",
    "question_date_unparsed",
    "weekday_mismatch",
)


def parse_longmemeval_datetime(text: str) -> datetime:
    """Parse a LongMemEval time such as ``"2023/05/20 (Sat) 02:21"`` as UTC.

    24-hour clock; the weekday in parentheses is optional and not checked here
    (the loader counts mismatches). Raises ``ValueError`` quoting the text when
    it does not match or names an impossible date or time.
    """
    m = _LME_DT.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"not a LongMemEval date like '2023/05/20 (Sat) 02:21': {text!r}")
    year, month, day, _, hour, minute = m.groups()
    try:
        return datetime(int(year), int(month), int(day), int(hour), int(minute), tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"impossible date or time in {text!r}: {exc}") from exc


def _weekday_ok(text: str, when: datetime) -> bool:
    m = _LME_DT.match(text)
    label = (m.group(4) or "") if m else ""
    return not label or label[:3].lower() == _WEEKDAYS[when.weekday()]


# Where LongMemEval is looked for (``memlab.datasets.base.locate_data``; no default place:
# the data is not among the shared datasets) and what it is.
LONGMEMEVAL_ENV = "MEMLAB_LONGMEMEVAL"
LONGMEMEVAL_WHAT = (
    "one LongMemEval JSON file (a list of questions, each with its haystack sessions:"
    " longmemeval_s.json, longmemeval_m.json or longmemeval_oracle.json)"
)


def load_longmemeval(
    path: str | Path | None = None,
    out_dir: str | Path | None = None,
    *,
    limit: int | None = None,
    overwrite: bool = False,
) -> Dataset:
    """Load a LongMemEval JSON file as a memlab `Dataset` (one workspace per question).

    Questions: ``qid`` = ``question_id`` (also the group), ``category`` =
    ``question_type``, ``time`` = ``cutoff`` = ``question_date`` in Unix seconds (UTC;
    NaN when absent or unparsable: the memory as of the question, ``memlab.store.asof``);
    extra columns ``answer`` (str) and ``abstention`` (``question_id`` ends with ``_abs``).

    Evidence, per answer session: each turn with ``has_answer: true`` is a
    one-line span (``span_id`` ``"S3:5"``); an answer session with no marked
    turn is one span over all its turn lines (``span_id`` ``"S3"``). Marked
    turns outside answer sessions are kept and counted. Abstention questions
    get no evidence: they ask about things the haystack never states, and
    LongMemEval's retrieval evaluation skips them too.

    ``limit`` keeps the first ``limit`` instances. ``out_dir`` defaults to
    ``$XDG_CACHE_HOME/memlab/longmemeval-<sha256[:12]>[-first<limit>]``, reused
    when complete unless ``overwrite``. ``path`` None: ``$MEMLAB_LONGMEMEVAL``. Raises
    ``DataNotFoundError`` (a ``FileNotFoundError``) naming where it looked for a missing
    file and ``ValueError`` for a file that is not JSON or not in LongMemEval's shape, or a
    bad ``limit``.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    path = locate_data("LongMemEval", LONGMEMEVAL_ENV, None, LONGMEMEVAL_WHAT, path)
    digest = sha256_file(path)
    marker = {
        "loader": "longmemeval",
        "format_version": _FORMAT_VERSION,
        "source_sha256": digest,
        "limit": limit,
    }
    is_default = out_dir is None
    suffix = f"-first{limit}" if limit is not None else ""
    target = (
        cache_dir(f"longmemeval-{digest[:12]}{suffix}")
        if out_dir is None
        else Path(out_dir).expanduser()
    )

    def build(root: Path) -> None:
        data = read_json(path, "LongMemEval")
        _build(data, root, source=path, digest=digest, limit=limit)

    return materialise(target, marker, build, overwrite=overwrite, rebuild_stale=is_default)


def _build(data: Any, root: Path, *, source: Path, digest: str, limit: int | None) -> None:
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ValueError(
            f"{source}: expected a JSON list of LongMemEval question objects (with "
            f"{', '.join(_REQUIRED)}), got {type(data).__name__}"
        )
    instances = data if limit is None else data[:limit]
    defects: Counter[str] = Counter({k: 0 for k in _DEFECTS})
    stats: Counter[str] = Counter()
    queries: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    workspaces: dict[str, Path] = {}
    for pos, inst in enumerate(instances):
        _check_instance(inst, pos, source)
        qid = check_dirname(inst["question_id"], "question_id")
        if qid in workspaces:
            raise ValueError(f"{source}: duplicate question_id {qid!r}")
        if inst["question_type"] not in LONGMEMEVAL_QUESTION_TYPES:
            defects["unknown_question_types"] += 1
        abstention = qid.endswith("_abs")
        stats["abstention_questions"] += abstention
        spans = _write_haystack(inst, root / qid, defects, stats)
        workspaces[qid] = root / qid
        if not abstention:
            found = [dict(s, qid=qid) for s in spans]
            evidence.extend(found)
            if not found:
                defects["questions_without_evidence"] += 1
        if "answer" not in inst:
            defects["missing_answer"] += 1
        queries.append(
            {
                "qid": qid,
                "query": inst["question"],
                "group": qid,
                "category": inst["question_type"],
                "time": (asked := _question_time(inst.get("question_date"), defects)),
                "cutoff": asked,
                "answer": str(inst.get("answer", "")),
                "abstention": abstention,
            }
        )
    types = Counter(q["category"] for q in queries)
    info = {
        "source": source.name,
        "source_sha256": digest,
        "license": LONGMEMEVAL_LICENSE,
        "citation": "Wu et al., LongMemEval: Benchmarking Chat Assistants on Long-Term "
        "Interactive Memory, ICLR 2025",
        "limit": limit,
        "instances_in_file": len(data),
        "questions": len(queries),
        "questions_per_type": {t: types[t] for t in sorted(types)},
        "abstention_questions": stats["abstention_questions"],
        "sessions": stats["sessions"],
        "turns": stats["turns"],
        "has_answer_turns": stats["has_answer_turns"],
        "evidence_spans": len(evidence),
        "evidence_turn_spans": sum(":" in e["span_id"] for e in evidence),
        "evidence_session_spans": sum(":" not in e["span_id"] for e in evidence),
        "defects": dict(defects),
        "time_rule": "question_date (UTC)",
        "cutoff_rule": "cutoff = question_date: the lab answers from the sessions of earlier "
        "dates only (a daily file is dated at UTC midnight, so a session of the question's "
        "own date is visible; memlab.store.asof); NaN when question_date is unparsed",
        "format_version": _FORMAT_VERSION,
    }
    Dataset(
        "longmemeval", root, workspaces, pd.DataFrame(queries), evidence_frame(evidence), info
    ).save()


def _check_instance(inst: dict[str, Any], pos: int, source: Path) -> None:
    where = f"{source}: instance {pos} ({inst.get('question_id', '?')})"
    for key, kind in _REQUIRED.items():
        if not isinstance(inst.get(key), kind):
            raise ValueError(
                f"{where} needs {key!r} ({kind.__name__}); expected LongMemEval instances "
                f"with {', '.join(_REQUIRED)}"
            )
    lengths = {
        len(inst[k]) for k in ("haystack_session_ids", "haystack_dates", "haystack_sessions")
    }
    if len(lengths) != 1:
        raise ValueError(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions differ in length"
        )
    for i, sess in enumerate(inst["haystack_sessions"]):
        if not isinstance(sess, list) or not all(isinstance(t, dict) for t in sess):
            raise ValueError(f"{where}: haystack_sessions[{i}] should be a list of turn objects")


def _write_haystack(
    inst: dict[str, Any], workspace: Path, defects: Counter[str], stats: Counter[str]
) -> list[dict[str, Any]]:
    """Write one haystack; return its evidence spans (without qid) in session order."""
    qid = inst["question_id"]
    ids = [str(s) for s in inst["haystack_session_ids"]]
    defects["duplicate_session_ids"] += len(ids) - len(set(ids))
    whens = []
    for i, raw in enumerate(inst["haystack_dates"]):
        try:
            when = parse_longmemeval_datetime(raw)
        except ValueError as exc:
            raise ValueError(f"{qid}: haystack_dates[{i}]: {exc}") from exc
        defects["weekday_mismatch"] += not _weekday_ok(raw, when)
        whens.append(when)
    order = sorted(range(len(ids)), key=lambda i: (whens[i], i))
    sessions = []
    for k, i in enumerate(order, start=1):
        turns = inst["haystack_sessions"][i]
        defects["empty_sessions"] += not turns
        lines = [_turn_line(f"S{k}:{j}", t, defects) for j, t in enumerate(turns, start=1)]
        heading = f"## Session S{k} — {flatten(str(inst['haystack_dates'][i]))}"
        sessions.append(Session(whens[i], heading, lines))
    placed = write_daily_files(workspace, sessions)
    stats["sessions"] += len(sessions)
    stats["turns"] += sum(len(s.lines) for s in sessions)

    answer_ids = inst.get("answer_session_ids")
    if not isinstance(answer_ids, list):
        defects["missing_answer_session_ids"] += 1
        answer_ids = []
    answer_ids = [str(a) for a in answer_ids]
    defects["answer_sessions_not_in_haystack"] += len(set(answer_ids) - set(ids))
    spans: list[dict[str, Any]] = []
    for k, (i, where) in enumerate(zip(order, placed, strict=True), start=1):
        turns = inst["haystack_sessions"][i]
        marked = [j for j, t in enumerate(turns) if t.get("has_answer") is True]
        stats["has_answer_turns"] += len(marked)
        is_answer = ids[i] in answer_ids
        if marked and not is_answer:
            defects["has_answer_outside_answer_sessions"] += len(marked)
        rows = [(where.first_line + j, where.first_line + j, f"S{k}:{j + 1}") for j in marked]
        if not marked and is_answer:
            if turns:
                defects["answer_sessions_without_marked_turns"] += 1
                end = where.first_line + len(turns) - 1
                rows = [(where.first_line, end, f"S{k}")]
            else:
                defects["answer_sessions_empty"] += 1
        for start, end, span_id in rows:
            spans.append(
                {
                    "path": where.path,
                    "start_line": start,
                    "end_line": end,
                    "grade": 1,
                    "span_id": span_id,
                    "session_id": ids[i],
                }
            )
    return spans


def _turn_line(label: str, turn: dict[str, Any], defects: Counter[str]) -> str:
    role = str(turn.get("role", ""))
    if role not in _ROLES:
        defects["unknown_roles"] += 1
    content = turn.get("content")
    if not isinstance(content, str):
        defects["turns_missing_content"] += 1
        content = "" if content is None else str(content)
    if LINE_BREAKS.search(content):
        defects["turns_multiline_flattened"] += 1
    speaker = _ROLES.get(role, flatten(role).capitalize() or "Unknown")
    return f"[{label}] {speaker}: {flatten(content)}"


def _question_time(raw: Any, defects: Counter[str]) -> float:
    try:
        return parse_longmemeval_datetime(raw).timestamp()
    except ValueError:
        defects["question_date_unparsed"] += 1
        return float("nan")
