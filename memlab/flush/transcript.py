"""A conversation to replay: a data set's workspace read back as sessions and turns.

Every conversation loader (LoCoMo, BEAM, LongMemEval, RealMem; ``memlab.datasets.
convwriter``) writes a workspace the same way: dated files ``memory/YYYY-MM-DD[-HHMM].md``,
each holding one or more sessions, a session being a heading line (``#``…) and then one
line per turn. ``read_conversations`` reads any such workspace back — a folder-format data
set of session transcripts too — so the flush lifecycle runs on all of them and every turn
keeps its place, ``(path, line)`` in the source workspace: the key by which a note's
provenance meets the data set's evidence spans.

Order: files by their time (``memlab.store.asof.unit_time``), then path; sessions in file
order. A session's time = its file's time + k minutes for the file's k-th session, pushed
to one minute after the previous session when it would not be later (counted,
``times_bumped``), so every session has its own minute and the as-of rule keeps their
order. Undated files (``MEMORY.md``, notes) are not a conversation: skipped and counted.
Token estimate per turn: ``ceil(estimate_chars(line) / 4)`` (OpenClaw's chars/4 with CJK
weighted 4, ``memlab.chunking.common.estimate_chars``); transcript bytes per turn: the
UTF-8 size of the JSONL entry ``{"role", "content"}`` plus its newline (OpenClaw's
``sessions/*.jsonl``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memlab.chunking.common import estimate_chars
from memlab.datasets.base import Dataset
from memlab.store.asof import unit_time

CHARS_PER_TOKEN = 4
_HEADING = re.compile(r"^#{1,6}\s")
_ROLE = re.compile(r"^(?:\[[^\]]*\]\s*)?([^:]{1,60}):\s")


@dataclass(frozen=True)
class Turn:
    """One turn: its session (index in the conversation), index in the session, place in the
    source workspace (``path``, 1-based ``line``), text, token estimate and transcript bytes."""

    session: int
    index: int
    path: str
    line: int
    text: str
    tokens: int
    nbytes: int


@dataclass
class SourceSession:
    """One session of a conversation: where its heading is, its time, its turns, and the
    memory points a data set's own memory manager extracted from it (``extracted``: turn
    index → points; empty when the data set carries none)."""

    path: str
    heading_line: int
    heading: str
    when: datetime
    turns: list[Turn]
    extracted: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class Conversation:
    """A workspace group's sessions in time order, and what reading them counted."""

    group: str
    sessions: list[SourceSession]
    counts: Counter[str] = field(default_factory=Counter)


def turn_tokens(text: str) -> int:
    """``ceil(estimate_chars(text) / 4)``: OpenClaw's token estimate (spec §2); "" → 0."""
    return math.ceil(estimate_chars(text) / CHARS_PER_TOKEN)


def turn_bytes(text: str) -> int:
    """UTF-8 bytes of the turn's transcript entry ``{"role": …, "content": …}\\n``; the role
    is the line's speaker label (``User``, ``Caroline``; ``[D1:3]`` ids skipped), else
    ``user``."""
    m = _ROLE.match(text)
    role, content = (m.group(1).strip(), text[m.end() :]) if m else ("user", text)
    entry = json.dumps({"role": role.lower(), "content": content}, ensure_ascii=False)
    return len(entry.encode("utf-8")) + 1


def read_conversations(dataset: Dataset) -> list[Conversation]:
    """Each workspace group of ``dataset`` as a `Conversation` (module docstring: order,
    times, estimates). A group with no dated file yields no sessions (an empty
    conversation, kept so the caller can say so)."""
    return [read_conversation(g, ws) for g, ws in sorted(dataset.workspaces.items())]


def read_conversation(group: str, workspace: Path) -> Conversation:
    """One workspace's sessions (``read_conversations``)."""
    counts: Counter[str] = Counter()
    dated: list[tuple[float, str]] = []
    mem = workspace / "memory"
    for p in sorted(mem.rglob("*.md")) if mem.is_dir() else []:
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(workspace).as_posix()
        t = unit_time(rel)
        if math.isnan(t):
            counts["undated_files_skipped"] += 1
            continue
        dated.append((t, rel))
    counts["undated_files_skipped"] += sum(
        1 for p in workspace.glob("*.md") if p.is_file() and not p.is_symlink()
    )
    sessions: list[SourceSession] = []
    last: datetime | None = None
    for t, rel in sorted(dated):
        lines = (workspace / rel).read_text(encoding="utf-8").split("\n")
        base = datetime.fromtimestamp(t, UTC)
        k = 0
        current: SourceSession | None = None
        for no, raw in enumerate(lines, start=1):
            text = raw.strip()
            if not text:
                continue
            if _HEADING.match(text) or current is None:
                when = base + timedelta(minutes=k)
                if last is not None and when <= last:
                    when = last + timedelta(minutes=1)
                    counts["times_bumped"] += 1
                last = when
                k += 1
                heading = text if _HEADING.match(text) else ""
                current = SourceSession(rel, no if heading else 0, heading, when, [])
                sessions.append(current)
                if heading:
                    continue
            si = len(sessions) - 1
            current.turns.append(
                Turn(si, len(current.turns), rel, no, text, turn_tokens(text), turn_bytes(text))
            )
    counts["sessions"] = len(sessions)
    counts["turns"] = sum(len(s.turns) for s in sessions)
    return Conversation(group, sessions, counts)


def attach_realmem_extracted(
    conversations: list[Conversation], persona_files: list[Path]
) -> Counter[str]:
    """Attach RealMem's per-session ``extracted_memory`` (the benchmark's LLM memory manager's
    points, each with ``source_turn`` and ``source_content_snapshot``) to the sessions of
    ``conversations`` read from a RealMem workspace: a session is matched by the uuid its
    heading names (``## Session <uuid> — …``, ``memlab.datasets.realmem``), the group by the
    persona file's name. The source turn: ``source_turn`` is mostly 1-based (on
    Kenta_Tanaka 351 of 424 points' snapshots are turn ``source_turn − 1``, 58 turn
    ``source_turn``), so the turn is the one of ``source_turn − 1``, ``source_turn`` whose
    text starts with the snapshot's first 50 characters, else ``source_turn − 1`` when it
    exists (``turn_by_index``). Returns counts: ``attached``, ``turn_by_snapshot``,
    ``turn_by_index``, ``unplaced`` (session or turn not found: not attached)."""
    from memlab.datasets.convwriter import flatten, read_json
    from memlab.datasets.realmem import persona_group

    by_group = {c.group: c for c in conversations}
    counts: Counter[str] = Counter()
    for f in persona_files:
        conv = by_group.get(persona_group(f))
        if conv is None:
            continue
        by_uuid = {}
        for s in conv.sessions:
            parts = s.heading.split()
            if len(parts) >= 3 and parts[1] == "Session":
                by_uuid[parts[2]] = s
        data = read_json(f, "RealMem persona")
        for d in data.get("dialogues") or []:
            s = by_uuid.get(flatten(str(d.get("session_uuid", ""))))
            for point in d.get("extracted_memory") or []:
                if not isinstance(point, dict):
                    continue
                text = flatten(str(point.get("content") or ""))
                turn = _source_turn(point, s.turns if s else [])
                if s is None or turn is None or not text:
                    counts["unplaced"] += 1
                    continue
                s.extracted.setdefault(turn[0], []).append(text)
                counts["attached"] += 1
                counts[turn[1]] += 1
    return counts


def _source_turn(point: dict, turns: list[Turn]) -> tuple[int, str] | None:
    t = point.get("source_turn")
    if isinstance(t, bool) or not isinstance(t, int):
        return None
    from memlab.datasets.convwriter import flatten

    snap = flatten(str(point.get("source_content_snapshot") or ""))[:50]
    for i in (t - 1, t):
        if snap and 0 <= i < len(turns):
            content = turns[i].text.split(": ", 1)[-1]
            if content.startswith(snap):
                return i, "turn_by_snapshot"
    return (t - 1, "turn_by_index") if 0 <= t - 1 < len(turns) else None
