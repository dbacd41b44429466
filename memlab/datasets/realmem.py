"""RealMem loader: each persona's sessions become one OpenClaw workspace, a dated file per
session, asked as of each query's session.

RealMem (Bian et al., "RealMem: Benchmarking LLMs in Real-World Memory-Driven
Interaction", arXiv:2601.06966; zhiyuan5986/RealMemBench; Apache-2.0) is never shipped with memlab: this module reads
the user's copy, one JSON file per persona (``<Name>_dialogues_256k.json``) holding
``dialogues``, a list of sessions in time order, each with ``session_identifier``,
``session_uuid``, ``current_time`` (``"2025-12-15 (Monday)"``) and ``dialogue_turns``
(``speaker`` User/Assistant, ``content``, ``is_query``, ``query_id``; a query turn also has
``category_name``, ``session_type``, ``topic``; the Assistant turn after it
``memory_session_uuids`` and ``memory_used``).

Workspace (group = the persona, ``Kenta_Tanaka``): one file per session,
``memory/YYYY-MM-DD.md`` for the first session of a date and ``memory/YYYY-MM-DD-HHMM.md``
for the k-th after it (k minutes past midnight: OpenClaw's own name for another log of
one day, so the sessions of a day keep their order), each a heading
``## Session d8461ffc — 2025-12-19 (Friday)`` (the session's uuid and its own
``current_time``) then one line per turn, ``User: …`` / ``Assistant: …``, flattened to one
line. The heading names the uuid, not the ``session_identifier``: that identifier
(``Knowledge_Learning_834:S2_01``) names the session's topic, a label the benchmark's
systems never see, which full-text search would match against the query's words; it is
kept as the evidence ``span_id``.

Time rule: the order of the file is the time order (the benchmark processes sessions in
file order). A session whose ``current_time`` runs backwards is clamped to its
predecessor's date (counted: ``sessions_time_backwards``). Session i's time = its
(clamped) date + k minutes, k = the sessions of that date before it.

Protocol (the benchmark's ``eval/eval_mem0.py``): a query (a turn whose ``is_query`` is
true: a JSON boolean, or the strings ``"True"``/``"False"``, any case) is answered from
the sessions before its own session: ``time`` and ``cutoff`` = its session's time, so the
lab sees only earlier sessions (``memlab.store.asof``). Gold (the benchmark's
``eval/compute_auto_metrics_for_realmem.py``): the sessions whose uuid is in the next
Assistant turn's ``memory_session_uuids``, else in its ``memory_used[].session_uuid``.
Evidence: each gold session's whole file (heading to last turn), so a unit is relevant when
it lies in a gold session; the unit the benchmark ranks is the session, a file here
(``info["level"] = "file"``: ``Lab(level="file")``).

Defects (``info["defects"]``, each counted; none fatal): ``gold_unknown_uuids`` (a uuid no
session has: dropped), ``gold_own_session`` (a query naming its own session: dropped —
under the protocol it is not yet in memory), ``gold_in_future`` (a gold session after the
query's: dropped, likewise), ``queries_without_gold`` (no past gold left: kept, left out
of every mean), ``sessions_time_backwards`` (clamped, above), ``queries_without_next_assistant``,
``duplicate_query_ids`` (made unique with ``#n``), ``duplicate_query_texts`` (the scorer
keys gold by text: it would merge them), ``duplicate_session_uuids`` (the first kept),
``gold_duplicate_uuids``, ``is_query_unreadable`` (read as false), ``unknown_speakers``,
``turns_missing_content``, ``weekday_mismatch``.

Size: one loader, its rules written out above: ``load_realmem`` → ``_build``, which runs
``_sessions`` (the time rule) and ``_queries`` / ``_gold_uuids`` (protocol and gold) per
persona and counts every defect in one counter of ``_DEFECTS``; each dataset of
``memlab.datasets`` is one module in this shape.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.datasets.base import Dataset, locate_data, shared_data_dir
from memlab.datasets.convwriter import (
    LINE_BREAKS,
    Session,
    check_dirname,
    convert_grouped,
    evidence_frame,
    flatten,
    read_json,
    write_session_files,
)

REALMEM_LICENSE = "Apache-2.0"
REALMEM_CITATION = (
    "Bian et al., RealMem: Benchmarking LLMs in Real-World Memory-Driven Interaction, "
    "arXiv:2601.06966 (zhiyuan5986/RealMemBench)"
)
REALMEM_CATEGORIES = (
    "Dynamic Incremental",
    "Dynamic Updating",
    "Implicit Preference",
    "Temporal-reasoning",
)
# What `memlab eval realmem` and studies/realmem_quality.py run by default: the
# benchmark's metrics at session level (``ndcg_jk`` is its nDCG), the query-blind
# baselines, and memlab's systems, tested against bm25.
REALMEM_METRICS = ("recall_any@5", "recall_any@10", "recall_any@20", "recall_all@10", "ndcg_jk@10")
REALMEM_PRESETS = (
    "recency",
    "random",
    "bm25",
    "vector",
    "wsum",
    "memlab-best",
    "memlab-best-chunk",
)
REALMEM_BASELINE = "bm25"
_FORMAT_VERSION = 1
_SPEAKERS = {"user": "User", "assistant": "Assistant"}
_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})\s*(?:\(\s*([A-Za-z]+)\s*\))?\s*$")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_PERSONA_SUFFIX = re.compile(r"_dialogues(?:_[A-Za-z0-9]+)?$")
_DEFECTS = (
    "gold_unknown_uuids",
    "gold_own_session",
    "gold_in_future",
    "queries_without_gold",
    "sessions_time_backwards",
    "queries_without_next_assistant",
    "duplicate_query_ids",
    "duplicate_query_texts",
    "duplicate_session_uuids",
    "gold_duplicate_uuids",
    "is_query_unreadable",
    "unknown_speakers",
    "turns_missing_content",
    "weekday_mismatch",
)
RULES = {
    "time_rule": "file order is time order; a current_time before its predecessor's is "
    "clamped to it; the k-th session of a date is at k minutes past midnight "
    "(memory/YYYY-MM-DD-HHMM.md)",
    "query_rule": "a turn with is_query true; time = cutoff = its session's time, so it "
    "is answered from the earlier sessions only",
    "gold_rule": "sessions in the next Assistant turn's memory_session_uuids, else its "
    "memory_used[].session_uuid; unknown uuids, the query's own session and later sessions "
    "dropped (counted)",
    "evidence_rule": "each gold session's whole file: a unit is relevant when it lies in a "
    "gold session",
    "heading_rule": "a session's heading names its uuid, not its session_identifier (which "
    "names its topic); the identifier is the evidence span_id",
}


# Where RealMem is looked for (``memlab.datasets.base.locate_data``) and what it is.
REALMEM_ENV = "MEMLAB_REALMEM"
REALMEM_DEFAULT = shared_data_dir() / "realmem"
REALMEM_WHAT = (
    "RealMem's persona files (a folder of <Name>_dialogues_256k.json, or one of them);"
    " Apache-2.0, zhiyuan5986/RealMemBench"
)


def realmem_default_path() -> Path | None:
    """Where RealMem is looked for when no path is given: ``$MEMLAB_REALMEM`` when set
    (returned even if missing, so the load error names it), else ``REALMEM_DEFAULT``
    (``../shared/datasets/realmem`` beside the repository) when it exists, else ``None``."""
    env = os.environ.get(REALMEM_ENV)
    if env:
        return Path(env).expanduser()
    return REALMEM_DEFAULT if REALMEM_DEFAULT.is_dir() else None


def find_personas(path: Path) -> list[Path]:
    """The persona files at ``path``: the file itself, or the ``*.json`` (and gzip-compressed
    ``*.json.gz``) files directly in a folder, sorted by name. ``FileNotFoundError`` naming ``path`` when it is missing or
    holds none."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"RealMem not found: {path} does not exist")
    files = sorted(p for p in [*path.glob("*.json"), *path.glob("*.json.gz")] if p.is_file())
    if not files:
        raise FileNotFoundError(f"no RealMem persona file (<Name>_dialogues_256k.json) in {path}")
    return files


def persona_group(path: Path) -> str:
    """A persona file's workspace name: its stem without ``_dialogues[_256k]``
    (``Kenta_Tanaka``), checked to be one safe folder name."""
    stem = path.name.removesuffix(".gz").removesuffix(".json")
    return check_dirname(_PERSONA_SUFFIX.sub("", stem), "RealMem persona file")


def parse_session_date(text: Any) -> tuple[datetime, bool]:
    """``"2025-12-15 (Monday)"`` → (UTC midnight, weekday agrees or is absent).
    ``ValueError`` quoting the text when it is not ``YYYY-MM-DD`` (+ a weekday) or names an
    impossible date."""
    m = _DATE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"not a RealMem current_time like '2025-12-15 (Monday)': {text!r}")
    try:
        when = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"impossible date in current_time {text!r}: {exc}") from exc
    label = (m.group(4) or "")[:3].lower()
    return when, not label or label == _WEEKDAYS[when.weekday()]


def read_is_query(value: Any) -> bool | None:
    """``is_query`` as a bool: True/False, the strings ``"true"``/``"false"`` (any case),
    None/absent → False; anything else → None (unreadable)."""
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def load_realmem(
    path: str | Path | None = None,
    out_dir: str | Path | None = None,
    *,
    overwrite: bool = False,
) -> Dataset:
    """Load RealMem as a memlab `Dataset` (one workspace per persona; module docstring).

    ``path``: a folder of persona files or one file; else found by ``locate_data``
    (``$MEMLAB_REALMEM``, then ``REALMEM_DEFAULT``).
    Queries: ``qid = f"{group}:{query_id}"``, ``query`` (the turn's text), ``category`` =
    ``category_name`` (``""`` when absent), ``time`` = ``cutoff`` = the session's time
    (Unix seconds, UTC); extra columns ``session_type``, ``topic``, ``session``
    (identifier), ``query_id``. Evidence: one span per past gold session, its whole file,
    ``span_id`` = the session identifier, ``session_uuid``. ``out_dir`` defaults to
    ``cache_dir("realmem-<sha256[:12] of the inputs>")``, reused when complete unless
    ``overwrite``. Raises ``DataNotFoundError`` (a ``FileNotFoundError``) naming where it looked, ``ValueError``
    naming the file and field for input not in RealMem's shape.
    """
    root = locate_data("RealMem", REALMEM_ENV, REALMEM_DEFAULT, REALMEM_WHAT, path, folder=None)
    return convert_grouped(
        "realmem",
        find_personas(root),
        group_of=persona_group,
        files_of=lambda f: [f],
        build=lambda files, out, digest: _build(files, out, digest=digest),
        where=root,
        what="persona files",
        format_version=_FORMAT_VERSION,
        out_dir=out_dir,
        overwrite=overwrite,
    )


def _build(files: list[Path], root: Path, *, digest: str) -> None:
    defects: Counter[str] = Counter({k: 0 for k in _DEFECTS})
    stats: Counter[str] = Counter()
    queries: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    workspaces: dict[str, Path] = {}
    for f in files:
        group = persona_group(f)
        data = read_json(f, "RealMem persona")
        dialogues = data.get("dialogues") if isinstance(data, dict) else None
        if not isinstance(dialogues, list) or not dialogues:
            raise ValueError(f"{f}: expected an object with a non-empty 'dialogues' list")
        sessions, whens = _sessions(f, dialogues, defects, stats)
        placed = write_session_files(root / group, sessions)
        workspaces[group] = root / group
        q, e = _queries(f, group, dialogues, whens, placed, sessions, defects, stats)
        queries.extend(q)
        evidence.extend(e)
    texts = Counter((q["group"], q["query"]) for q in queries)
    defects["duplicate_query_texts"] = sum(n - 1 for n in texts.values() if n > 1)
    per_category = Counter(q["category"] for q in queries)
    per_type = Counter(q["session_type"] for q in queries)
    info = {
        "source": "RealMem " + ", ".join(f.name for f in files),
        "source_sha256": digest,
        "license": REALMEM_LICENSE,
        "citation": REALMEM_CITATION,
        "level": "file",
        "personas": len(workspaces),
        "sessions": stats["sessions"],
        "turns": stats["turns"],
        "turns_multiline_flattened": stats["multiline"],
        "queries": len(queries),
        "queries_with_gold": len({e["qid"] for e in evidence}),
        "gold_sessions": len(evidence),
        "gold_from_memory_used": stats["gold_from_memory_used"],
        "memory_use_without_query": stats["memory_use_without_query"],
        "queries_per_category": {c: per_category[c] for c in sorted(per_category)},
        "queries_per_session_type": {t: per_type[t] for t in sorted(per_type)},
        "defects": dict(defects),
        **RULES,
        "format_version": _FORMAT_VERSION,
    }
    Dataset(
        "realmem", root, workspaces, pd.DataFrame(queries), evidence_frame(evidence), info
    ).save()


def _sessions(
    f: Path, dialogues: list[Any], defects: Counter[str], stats: Counter[str]
) -> tuple[list[Session], list[datetime]]:
    """One `Session` per dialogue in file order, and each one's time (the time rule)."""
    sessions: list[Session] = []
    whens: list[datetime] = []
    last: datetime | None = None
    per_day: Counter[datetime] = Counter()
    for i, d in enumerate(dialogues):
        at = f"{f}: dialogues[{i}]"
        if not isinstance(d, dict) or not isinstance(d.get("dialogue_turns"), list):
            raise ValueError(f"{at} needs 'dialogue_turns' (a list of turns)")
        for key in ("session_uuid", "session_identifier", "current_time"):
            if not isinstance(d.get(key), str) or not d[key].strip():
                raise ValueError(f"{at} needs a {key!r} string")
        try:
            day, weekday_ok = parse_session_date(d["current_time"])
        except ValueError as exc:
            raise ValueError(f"{at} 'current_time': {exc}") from exc
        defects["weekday_mismatch"] += not weekday_ok
        if last is not None and day < last:
            defects["sessions_time_backwards"] += 1
            day = last
        last = day
        k = per_day[day]
        per_day[day] += 1
        if k >= 24 * 60:
            raise ValueError(f"{at}: more than {24 * 60} sessions on {day.date()}")
        whens.append(day + timedelta(minutes=k))
        lines = [_turn_line(t, f, i, j, defects, stats) for j, t in enumerate(d["dialogue_turns"])]
        heading = f"## Session {flatten(d['session_uuid'])} — {flatten(d['current_time'])}"
        sessions.append(Session(whens[-1], heading, lines))
        stats["sessions"] += 1
        stats["turns"] += len(lines)
    return sessions, whens


def _turn_line(t: Any, f: Path, i: int, j: int, defects: Counter[str], stats: Counter[str]) -> str:
    if not isinstance(t, dict):
        raise ValueError(f"{f}: dialogues[{i}].dialogue_turns[{j}] should be an object")
    speaker = str(t.get("speaker", ""))
    if speaker.lower() not in _SPEAKERS:
        defects["unknown_speakers"] += 1
    content = t.get("content")
    if not isinstance(content, str):
        defects["turns_missing_content"] += 1
        content = "" if content is None else str(content)
    if LINE_BREAKS.search(content):
        stats["multiline"] += 1
    label = _SPEAKERS.get(speaker.lower(), flatten(speaker) or "Unknown")
    return f"{label}: {flatten(content)}"


def _queries(
    f: Path,
    group: str,
    dialogues: list[dict[str, Any]],
    whens: list[datetime],
    placed: list[Any],
    sessions: list[Session],
    defects: Counter[str],
    stats: Counter[str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Queries and their past gold sessions' evidence (module docstring: protocol, gold,
    defects)."""
    index: dict[str, int] = {}
    for i, d in enumerate(dialogues):
        if d["session_uuid"] in index:
            defects["duplicate_session_uuids"] += 1
        else:
            index[d["session_uuid"]] = i
    queries: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    for si, d in enumerate(dialogues):
        turns = d["dialogue_turns"]
        asked = [False] * len(turns)
        for j, t in enumerate(turns):
            flag = read_is_query(t.get("is_query"))
            if flag is None:
                defects["is_query_unreadable"] += 1
            asked[j] = bool(flag)
        for j, t in enumerate(turns):
            nxt = turns[j + 1] if j + 1 < len(turns) else None
            if (
                not asked[j]
                and str(t.get("speaker", "")).lower() == "assistant"
                and t.get("memory_session_uuids")
                and not (j > 0 and asked[j - 1])
            ):
                stats["memory_use_without_query"] += 1
            if not asked[j]:
                continue
            raw_id = t.get("query_id")
            base = f"{group}:{raw_id if isinstance(raw_id, str) and raw_id else f's{si}t{j}'}"
            seen[base] += 1
            qid = base if seen[base] == 1 else f"{base}#{seen[base]}"
            if seen[base] > 1:
                defects["duplicate_query_ids"] += 1
            at = whens[si].timestamp()
            queries.append(
                {
                    "qid": qid,
                    "query": str(t.get("content") or "").strip(),
                    "group": group,
                    "category": str(t.get("category_name") or ""),
                    "time": at,
                    "cutoff": at,
                    "session_type": str(t.get("session_type") or ""),
                    "topic": str(t.get("topic") or ""),
                    "session": d["session_identifier"],
                    "query_id": str(raw_id or ""),
                }
            )
            if nxt is None or str(nxt.get("speaker", "")).lower() != "assistant":
                defects["queries_without_next_assistant"] += 1
                defects["queries_without_gold"] += 1
                continue
            uuids = _gold_uuids(nxt, index, stats)
            kept: list[int] = []
            for u in uuids:
                g = index.get(u)
                if g is None:
                    defects["gold_unknown_uuids"] += 1
                elif g in kept:
                    defects["gold_duplicate_uuids"] += 1
                elif g == si:
                    defects["gold_own_session"] += 1
                elif g > si:
                    defects["gold_in_future"] += 1
                else:
                    kept.append(g)
            if not kept:
                defects["queries_without_gold"] += 1
            for g in kept:
                evidence.append(
                    {
                        "qid": qid,
                        "path": placed[g].path,
                        "start_line": 1,
                        "end_line": 1 + len(sessions[g].lines),
                        "grade": 1,
                        "span_id": dialogues[g]["session_identifier"],
                        "session_uuid": dialogues[g]["session_uuid"],
                    }
                )
    return queries, evidence


def _gold_uuids(turn: dict[str, Any], index: dict[str, int], stats: Counter[str]) -> list[str]:
    """The scorer's rule: ``memory_session_uuids`` when one of them names a session, else
    (after them, so unknown ones are still counted) ``memory_used[].session_uuid``."""
    primary = turn.get("memory_session_uuids")
    uuids = [u for u in primary if isinstance(u, str)] if isinstance(primary, list) else []
    if any(u in index for u in uuids):
        return uuids
    used = turn.get("memory_used")
    fallback = [
        m["session_uuid"]
        for m in (used if isinstance(used, list) else [])
        if isinstance(m, dict) and isinstance(m.get("session_uuid"), str)
    ]
    if any(u in index for u in fallback):
        stats["gold_from_memory_used"] += 1
    return uuids + fallback
