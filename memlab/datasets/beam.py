"""BEAM loader: each long user–assistant chat becomes an OpenClaw workspace.

BEAM (Tavakoli et al., "Beyond a Million Tokens: Benchmarking and Enhancing
Long-Term Memory in LLMs", arXiv:2510.27246; CC BY-SA 4.0) is never shipped with
memlab: this module reads the user's copy, one folder per chat holding
``chat.json`` (a list of batches ``{batch_number, turns}``; ``turns`` a list of
message groups; each message ``{role, id, content}``, the first of a batch with
``time_anchor`` such as ``"March-15-2024"``) and
``probing_questions/probing_questions.json`` (category -> questions with
``question`` and ``source_chat_ids``).

A chat's workspace is ``<out_dir>/<split>-<chat>/memory/YYYY-MM-DD.md``: one
daily file per batch, dated by its time anchor, holding a heading
``## Batch 2 — April-05-2024`` then exactly one line per message,
``[m57] Assistant: text`` (``m`` + BEAM's message id, so the id does not match a
number in a question under full-text search). Multi-line Markdown answers are
flattened to one line, so ``--unit turn`` is one message per unit.

Abstention questions have no evidence by design: they are kept (category
``abstention``), counted in ``info["abstention_questions"]`` and, having no
evidence span, left out of every recall/nDCG mean by the lab.
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
    line_evidence,
    read_json,
    write_daily_files,
)

BEAM_CATEGORIES = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)
BEAM_LICENSE = "CC BY-SA 4.0"
BEAM_ABSTENTION = "abstention"
CHAT_FILE = "chat.json"
QUESTIONS_FILE = "probing_questions/probing_questions.json"
_FORMAT_VERSION = 1
# Where BEAM is looked for (``memlab.datasets.base.locate_data``) and what it is.
BEAM_ENV = "MEMLAB_BEAM"
BEAM_DEFAULT = shared_data_dir() / "beam"
BEAM_WHAT = (
    "the BEAM benchmark's folder (<split>/<n>/chat.json with its probing questions, e.g. the"
    " 100K split); memlab ships the loader, not the data (CC BY-SA)"
)
_ROLES = {"user": "User", "assistant": "Assistant"}
_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_ANCHOR = re.compile(r"^\s*([A-Za-z]+)-(\d{1,2})-(\d{4})\s*$")
# Fields holding the reference answer, by category; the first present one is kept.
_ANSWER_KEYS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
_DEFECTS = (
    "evidence_nested_lists",
    "evidence_ids_normalised",
    "evidence_ids_malformed",
    "evidence_ids_unknown_message",
    "evidence_ids_duplicate",
    "evidence_not_a_list",
    "questions_without_evidence",
    "abstention_with_evidence_ignored",
    "unknown_categories",
    "unknown_roles",
    "batches_with_several_anchors",
)


def beam_default_path() -> Path | None:
    """Where BEAM is looked for when no path is given.

    Order: the environment variable ``MEMLAB_BEAM`` (returned even if missing,
    so the load error names it), else ``../shared/datasets/beam`` beside the
    repository root when that folder exists, else ``None``.
    """
    env = os.environ.get(BEAM_ENV)
    if env:
        return Path(env).expanduser()
    return BEAM_DEFAULT if BEAM_DEFAULT.is_dir() else None


def parse_time_anchor(text: Any) -> datetime:
    """Parse a BEAM time anchor ``"March-15-2024"`` (English month name, day, year) as
    midnight UTC. Month names are full or their first three letters, any case (no
    locale dependence). ``ValueError`` quoting the text when it does not match or
    names an impossible date."""
    m = _ANCHOR.match(text) if isinstance(text, str) else None
    month = m.group(1).lower() if m else ""
    number = next((i for i, n in enumerate(_MONTHS, 1) if month in (n, n[:3])), None)
    if m is None or number is None:
        raise ValueError(f"not a BEAM time anchor like 'March-15-2024': {text!r}")
    try:
        return datetime(int(m.group(3)), number, int(m.group(2)), tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"impossible date in time anchor {text!r}: {exc}") from exc


def find_chats(root: Path) -> list[Path]:
    """Chat folders under ``root``: ``root`` itself when it holds ``chat.json``, else
    every folder below it that does, ordered by split then chat number (numeric
    names numerically, ``2`` before ``10``). ``FileNotFoundError`` naming ``root``
    when it is missing or holds no chat."""
    if not root.is_dir():
        raise FileNotFoundError(f"BEAM folder not found: {root}")
    if (root / CHAT_FILE).is_file():
        return [root]
    chats = [p.parent for p in root.rglob(CHAT_FILE) if p.is_file()]
    if not chats:
        raise FileNotFoundError(f"no BEAM chat (<split>/<n>/{CHAT_FILE}) under {root}")

    def order(p: Path) -> tuple[str, int, str]:
        return (p.parent.name, int(p.name) if p.name.isdigit() else -1, p.name)

    return sorted(chats, key=order)


def chat_group(chat: Path) -> str:
    """The workspace name of a chat folder: ``<split>-<chat>`` (``100K-3``), checked to be
    one safe folder name."""
    return check_dirname(f"{chat.parent.name}-{chat.name}", "BEAM chat folder")


def load_beam(
    path: str | Path | None = None,
    out_dir: str | Path | None = None,
    *,
    overwrite: bool = False,
) -> Dataset:
    """Load BEAM as a memlab `Dataset` (one workspace per chat, see the module docstring).

    ``path`` is the data set folder (any folder holding ``<split>/<n>/chat.json``),
    one split's folder or one chat's folder; it defaults to `beam_default_path`.
    Questions: ``qid = f"{group}:{category}:{i}"`` (``i`` 0-based within the
    category), ``category`` as BEAM names it, ``time`` = the chat's latest time
    anchor + 1 day (Unix seconds, UTC); extra columns ``answer`` (the first of
    ``answer``, ``ideal_answer``, ``ideal_response``, ``ideal_summary``,
    ``expected_compliance`` present, as str; ``""`` if none) and ``difficulty``. Evidence:
    one span per valid message id of ``source_chat_ids`` (a list, or a dict of
    lists flattened in key order; nested lists flattened), on that message's line,
    grade 1, ``span_id`` ``m<id>``. Abstention questions get no evidence (counted,
    left out of recall); slips in the evidence are repaired or dropped and counted
    in ``info["defects"]``.

    ``out_dir`` defaults to ``cache_dir("beam-<sha256[:12] of the inputs>")``,
    reused when complete unless ``overwrite``. Raises ``FileNotFoundError`` for a
    missing folder or file and ``ValueError`` naming the file and the field for
    input not in BEAM's shape.
    """
    path = locate_data("BEAM", BEAM_ENV, BEAM_DEFAULT, BEAM_WHAT, path, folder=True)
    return convert_grouped(
        "beam",
        find_chats(path),
        group_of=chat_group,
        files_of=lambda chat: [chat / CHAT_FILE, chat / QUESTIONS_FILE],
        build=lambda chats, root, digest: _build(chats, root, digest=digest),
        where=path,
        what="BEAM chat folders",
        format_version=_FORMAT_VERSION,
        out_dir=out_dir,
        overwrite=overwrite,
    )


def _build(chats: list[Path], root: Path, *, digest: str) -> None:
    defects: Counter[str] = Counter({k: 0 for k in _DEFECTS})
    stats: Counter[str] = Counter()
    queries: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    workspaces: dict[str, Path] = {}
    for chat in chats:
        group = chat_group(chat)
        sessions, message_lines = _sessions(chat / CHAT_FILE, defects, stats)
        placed = write_daily_files(root / group, sessions)
        workspaces[group] = root / group
        lookup = {
            mid: (placed[s].path, placed[s].first_line + i) for mid, (s, i) in message_lines.items()
        }
        asked_at = (max(s.when for s in sessions) + timedelta(days=1)).timestamp()
        qfile = chat / QUESTIONS_FILE
        for category, i, q in _questions(qfile, read_json(qfile, "BEAM probing questions")):
            qid = f"{group}:{category}:{i}"
            if category not in BEAM_CATEGORIES:
                defects["unknown_categories"] += 1
            answer = next((q[k] for k in _ANSWER_KEYS if k in q), "")
            queries.append(
                {
                    "qid": qid,
                    "query": q["question"],
                    "group": group,
                    "category": category,
                    "time": asked_at,
                    "answer": answer if isinstance(answer, str) else str(answer),
                    "difficulty": str(q.get("difficulty", "")),
                }
            )
            raw = q.get("source_chat_ids")
            if category == BEAM_ABSTENTION:
                stats["abstention_questions"] += 1
                if raw:
                    defects["abstention_with_evidence_ignored"] += 1
                continue
            ids = _evidence_ids(raw, lookup, defects, stats)
            if not ids:
                defects["questions_without_evidence"] += 1
            evidence.extend(line_evidence(qid, ids, lookup, prefix="m"))
    per_category = Counter(q["category"] for q in queries)
    info = {
        "source": "BEAM " + ", ".join(sorted({c.parent.name for c in chats})),
        "source_sha256": digest,
        "license": BEAM_LICENSE,
        "citation": "Tavakoli et al., Beyond a Million Tokens: Benchmarking and Enhancing "
        "Long-Term Memory in LLMs, arXiv:2510.27246",
        "chats": len(workspaces),
        "batches": stats["batches"],
        "messages": stats["messages"],
        "messages_multiline_flattened": stats["multiline"],
        "questions": len(queries),
        "questions_per_category": {c: per_category[c] for c in sorted(per_category)},
        "abstention_questions": stats["abstention_questions"],
        "abstention_rule": "abstention questions have no evidence: kept, counted, "
        "left out of recall/nDCG",
        "evidence_ids_total": stats["evidence_ids"],
        "evidence_ids_valid": len(evidence),
        "defects": dict(defects),
        "time_rule": "latest batch time anchor + 1 day (UTC)",
        "format_version": _FORMAT_VERSION,
    }
    Dataset("beam", root, workspaces, pd.DataFrame(queries), evidence_frame(evidence), info).save()


def _sessions(
    path: Path, defects: Counter[str], stats: Counter[str]
) -> tuple[list[Session], dict[int, tuple[int, int]]]:
    """One session per batch, in file order, and message id -> (batch index, line index)."""
    data = read_json(path, "BEAM chat")
    if not isinstance(data, list) or not data:
        raise ValueError(
            f"{path}: expected a non-empty JSON list of batches {{batch_number, turns}}"
        )
    sessions: list[Session] = []
    where: dict[int, tuple[int, int]] = {}
    for b, batch in enumerate(data):
        at = f"{path}: batch {b}"
        if not isinstance(batch, dict) or not isinstance(batch.get("turns"), list):
            raise ValueError(f"{at} needs 'turns' (a list of message groups)")
        number = batch.get("batch_number", b + 1)
        lines: list[str] = []
        anchors: list[Any] = []
        for g, group in enumerate(batch["turns"]):
            if not isinstance(group, list):
                raise ValueError(f"{at} turns[{g}] should be a list of messages")
            for k, msg in enumerate(group):
                field = _message_problem(msg)
                if field:
                    raise ValueError(f"{at} turns[{g}][{k}]: {field}")
                if msg["id"] in where:
                    raise ValueError(f"{at} turns[{g}][{k}]: duplicate message 'id' {msg['id']}")
                if msg.get("time_anchor") is not None:
                    anchors.append(msg["time_anchor"])
                if msg["role"] not in _ROLES:
                    defects["unknown_roles"] += 1
                if LINE_BREAKS.search(msg["content"]):
                    stats["multiline"] += 1
                where[msg["id"]] = (len(sessions), len(lines))
                role = _ROLES.get(msg["role"], flatten(str(msg["role"])) or "?")
                lines.append(f"[m{msg['id']}] {role}: {flatten(msg['content'])}")
        if batch.get("time_anchor") is not None:
            anchors.append(batch["time_anchor"])
        if not anchors:
            raise ValueError(f"{at} (batch_number {number}) has no 'time_anchor'")
        if len(set(map(str, anchors))) > 1:
            defects["batches_with_several_anchors"] += 1
        try:
            when = parse_time_anchor(anchors[0])
        except ValueError as exc:
            raise ValueError(f"{at} 'time_anchor': {exc}") from exc
        heading = f"## Batch {flatten(str(number))} — {flatten(str(anchors[0]))}"
        sessions.append(Session(when, heading, lines))
        stats["batches"] += 1
        stats["messages"] += len(lines)
    return sessions, where


def _message_problem(msg: Any) -> str:
    """What is wrong with one message (the field), or ``""``."""
    if not isinstance(msg, dict):
        return "a message should be an object {role, id, content}"
    if isinstance(msg.get("id"), bool) or not isinstance(msg.get("id"), int):
        return f"'id' should be an integer, got {msg.get('id')!r}"
    if not isinstance(msg.get("role"), str):
        return f"message {msg['id']} needs a 'role' string"
    if not isinstance(msg.get("content"), str):
        return f"message {msg['id']} needs a 'content' string"
    return ""


def _questions(path: Path, data: Any) -> list[tuple[str, int, dict[str, Any]]]:
    """(category, index within it, question) in file order; ``ValueError`` naming the
    file and the field when the shape is not BEAM's."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object mapping category -> list of questions")
    out = []
    for category, items in data.items():
        if not isinstance(items, list):
            raise ValueError(f"{path}: {category!r} should be a list of questions")
        for i, q in enumerate(items):
            if not isinstance(q, dict) or not isinstance(q.get("question"), str):
                raise ValueError(f"{path}: {category}[{i}] needs a 'question' string")
            out.append((category, i, q))
    return out


def _evidence_ids(
    raw: Any, lookup: dict[int, Any], defects: Counter[str], stats: Counter[str]
) -> list[int]:
    """Valid, unique message ids of ``source_chat_ids`` in order (dict values in key order,
    nested lists flattened, digit strings read as ints)."""
    if raw is None:
        return []
    if isinstance(raw, dict):
        raw = [x for v in raw.values() for x in (v if isinstance(v, list) else [v])]
    elif not isinstance(raw, list):
        defects["evidence_not_a_list"] += 1
        raw = [raw]
    flat: list[Any] = []
    for x in raw:
        if isinstance(x, list):
            defects["evidence_nested_lists"] += 1
            flat.extend(x)
        else:
            flat.append(x)
    kept: list[int] = []
    for x in flat:
        stats["evidence_ids"] += 1
        if isinstance(x, str) and x.strip().isdigit():
            defects["evidence_ids_normalised"] += 1
            x = int(x)
        if isinstance(x, bool) or not isinstance(x, int):
            defects["evidence_ids_malformed"] += 1
        elif x not in lookup:
            defects["evidence_ids_unknown_message"] += 1
        elif x in kept:
            defects["evidence_ids_duplicate"] += 1
        else:
            kept.append(x)
    return kept
