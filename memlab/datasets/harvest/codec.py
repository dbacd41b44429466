"""OpenClaw session transcripts read as entries: JSONL files and the release's agent database.

The format, as OpenClaw 2026.9.6 defines it (``src/config/sessions/session-entry-codec.ts``
in its npm package): a transcript is one JSON object per entry. The first is a header
``{"type": "session", "id", "version", "timestamp", "cwd"}`` (version 4 for new sessions;
below 3 is "legacy", imported by ``openclaw doctor``). Every other entry has ``id``,
``parentId`` and an ISO ``timestamp``, and a ``type``: ``message`` (with ``message``),
``thinking_level_change``, ``model_change``, ``compaction``, ``reset``, ``branch_summary``,
``custom``, ``custom_message``, ``label``, ``session_info`` or ``leaf``. A message has a
``role``: ``user`` and ``assistant`` carry ``content`` (a string or a list of parts; an
assistant's tool calls are parts ``{"type": "toolCall", "id", "name", "arguments"}``),
``toolResult`` carries ``toolCallId``, ``toolName``, ``isError`` and ``content`` (a list of
parts; OpenClaw's JSON tools answer with one text part holding the pretty-printed JSON).

Where they are (``memlab.files.sessions.transcript_places``): JSONL files ``<session id>.jsonl``
(2026-04, and the release's files its doctor has not imported yet), or the release's agent
database, table ``transcript_events`` (one row per entry: ``session_id``, ``seq``,
``event_json``, or ``event_zstd`` + ``event_utf8_bytes`` for a zstd-compressed entry of
1 KiB or more; ``created_at`` in ms), opened read-only. A compressed row is read when the
``zstandard`` package is installed, else skipped and counted. Not read: the database's cold
archives (``session_transcript_cold_archives``), compressed ``.zst`` files.

What is kept: the header's id and version, and per entry its id, time and, for messages,
the role, the text and the tool calls or tool result. A record without a ``type`` holding a
``role`` or a ``message`` (the bare ``{"role", "content"}`` lines ``memlab.files.sessions`` also
reads) is a message; one without an ``id`` (a legacy transcript) is named by its place:
``L<line>`` in a file, ``S<seq>`` in the database. Everything else is counted by
reason (``counts``) and skipped: a line that is not a JSON object, an unknown entry type,
the other entry types, a message without a role.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "ENTRY_TYPES",
    "Entry",
    "Session",
    "ToolCall",
    "parse_entries",
    "read_jsonl_session",
    "read_store_sessions",
    "transcript_files",
    "zstd_decoder",
]

# The release's entry types (session-entry-codec.ts), plus its "leaf" control entry.
ENTRY_TYPES: frozenset[str] = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "reset",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "leaf",
    }
)
# Part types of a tool call (the release's projection accepts all three) and the keys a
# tool result names its call by.
CALL_PART_TYPES = ("toolCall", "toolUse", "functionCall")
CALL_ID_KEYS = ("toolCallId", "toolUseId", "tool_call_id", "callId", "call_id")

# Skip reasons (counted, printed in harvest's summary).
MALFORMED = "malformed line"
UNKNOWN_TYPE = "unknown entry type"
OTHER_TYPE = "other entry type"
NO_ROLE = "message without a role"
DUPLICATE_ENTRY = "duplicate entry id"
COMPRESSED = "compressed entry (zstd; install the zstandard package to read it)"
NOT_REGULAR = "transcript that is not a regular file"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant message: its ``id``, tool ``name`` and ``arguments``."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class Entry:
    """One entry of a session, as harvest reads it.

    ``role``: ``user``, ``assistant``, ``toolResult`` or ``reset`` (a new conversation
    window, a turn boundary like a user message); ``time``: Unix seconds (NaN unknown).
    ``parts``: an assistant's content in order, each a text (``str``) or a ``ToolCall``.
    A tool result: ``call_id``, ``tool_name``, ``is_error`` and ``text`` (its text parts);
    ``details`` the structured payload stored beside it, when any.
    """

    id: str
    role: str
    time: float
    parts: list[str | ToolCall] = field(default_factory=list)
    text: str = ""
    call_id: str = ""
    tool_name: str = ""
    is_error: bool = False
    details: Any = None


@dataclass(slots=True)
class Session:
    """A session's entries in order; ``source`` names where they were read from."""

    id: str
    source: str
    version: int | None
    entries: list[Entry]


def _time(rec: dict[str, Any], msg: dict[str, Any] | None, fallback_ms: float | None) -> float:
    # The entry's ISO timestamp; else the message's own (ms); else the row's created_at (ms).
    ts = rec.get("timestamp")
    if isinstance(ts, str) and ts:
        try:
            return datetime.fromisoformat(ts).timestamp()
        except ValueError:
            pass
    mts = msg.get("timestamp") if msg else None
    if isinstance(mts, int | float) and not isinstance(mts, bool) and math.isfinite(mts):
        return float(mts) / 1000.0
    if fallback_ms is not None:
        return float(fallback_ms) / 1000.0
    return math.nan


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def _parts(content: Any) -> list[str | ToolCall]:
    if isinstance(content, str):
        return [content]
    out: list[str | ToolCall] = []
    if not isinstance(content, list):
        return out
    for p in content:
        if not isinstance(p, dict):
            continue
        kind = p.get("type")
        if kind == "text" and isinstance(p.get("text"), str):
            out.append(p["text"])
        elif kind in CALL_PART_TYPES and isinstance(p.get("name"), str):
            args = p.get("arguments", p.get("input", p.get("args")))
            if isinstance(args, str):  # some providers keep the arguments as JSON text
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {}
            out.append(
                ToolCall(str(p.get("id") or ""), p["name"], args if isinstance(args, dict) else {})
            )
    return out


def parse_entries(
    records: Iterable[tuple[str, Any, float | None]], counts: Counter[str]
) -> tuple[dict[str, Any] | None, list[Entry]]:
    """The header and the entries of one session's records, in order.

    ``records``: ``(fallback id, record, created_at ms or None)``; the fallback id
    (``L<line>`` of a file, ``S<seq>`` of a database row) names an entry without an
    ``id`` (legacy transcripts). A record that is not a JSON object (None: a line that
    did not parse) is counted ``malformed line``; the first ``session`` record is the
    header; an unknown type, the other entry types, a message without a role and an
    entry id seen before in the session are counted and skipped.
    """
    header: dict[str, Any] | None = None
    entries: list[Entry] = []
    seen: set[str] = set()
    for fallback, rec, created in records:
        if not isinstance(rec, dict):
            counts[MALFORMED] += 1
            continue
        kind = rec.get("type")
        if kind is None and ("role" in rec or isinstance(rec.get("message"), dict)):
            # a bare {role, content} or {message} record (as memlab.files.sessions reads them)
            kind = "message"
            if "message" not in rec:
                rec = {**rec, "message": rec}
        if kind == "session":
            if header is None:
                header = rec
            else:
                counts[OTHER_TYPE] += 1
            continue
        if kind not in ENTRY_TYPES:
            counts[UNKNOWN_TYPE] += 1
            continue
        eid = rec.get("id") if isinstance(rec.get("id"), str) and rec.get("id") else fallback
        if eid in seen:
            counts[DUPLICATE_ENTRY] += 1
            continue
        if kind == "reset":
            seen.add(eid)
            entries.append(Entry(eid, "reset", _time(rec, None, created)))
            continue
        if kind != "message":
            counts[OTHER_TYPE] += 1
            continue
        msg = rec.get("message")
        role = msg.get("role") if isinstance(msg, dict) else None
        if not isinstance(msg, dict) or not isinstance(role, str):
            counts[NO_ROLE] += 1
            continue
        seen.add(eid)
        t = _time(rec, msg, created)
        if role == "assistant":
            entries.append(Entry(eid, role, t, parts=_parts(msg.get("content"))))
        elif role == "toolResult":
            call_id = next((msg[k] for k in CALL_ID_KEYS if isinstance(msg.get(k), str)), "")
            entries.append(
                Entry(
                    eid,
                    role,
                    t,
                    text=_text_of(msg.get("content")),
                    call_id=call_id,
                    tool_name=str(msg.get("toolName") or ""),
                    is_error=msg.get("isError") is True,
                    details=msg.get("details"),
                )
            )
        elif role == "user":
            entries.append(Entry(eid, role, t, text=_text_of(msg.get("content"))))
        else:  # custom, bashExecution, hook messages: not part of a search turn
            counts[OTHER_TYPE] += 1
    return header, entries


def _version(header: dict[str, Any] | None) -> int | None:
    v = header.get("version") if header else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def transcript_files(folder: Path) -> list[Path]:
    """The transcript files of a sessions folder, sorted: ``<id>.jsonl`` and the release's
    archives of a reset or deleted session, ``<id>.jsonl.reset.<time>`` /
    ``<id>.jsonl.deleted.<time>``; not ``*.trajectory.jsonl``, compaction checkpoints
    (``<id>.checkpoint.<uuid>.jsonl``) nor compressed archives (``.zst``). A missing
    folder has none."""
    if not folder.is_dir():
        return []
    out = []
    for p in folder.iterdir():
        name = p.name
        if name.endswith(".zst") or name.endswith(".trajectory.jsonl"):
            continue
        if ".checkpoint." in name and name.endswith(".jsonl"):
            continue
        if name.endswith(".jsonl") or ".jsonl.reset." in name or ".jsonl.deleted." in name:
            out.append(p)
    return sorted(out)


def read_jsonl_session(path: Path, counts: Counter[str]) -> Session | None:
    """One JSONL transcript file as a ``Session`` (id: the header's, else the file name
    before ``.jsonl``), read without following a symlink (``memlab.files.workspace.read_file_bytes``;
    a file that is not regular is counted and None is returned). Invalid UTF-8 is replaced;
    records are split on ``\\n`` only (JSON allows U+2028 inside a string)."""
    from memlab.files.workspace import MemoryFileError, read_file_bytes

    try:
        data, _ = read_file_bytes(path)
    except MemoryFileError:
        counts[NOT_REGULAR] += 1
        return None
    records = []
    for n, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        records.append((f"L{n}", rec, None))
    header, entries = parse_entries(records, counts)
    sid = header.get("id") if header else None
    if not isinstance(sid, str) or not sid:
        sid = path.name.split(".jsonl")[0]
    return Session(sid, str(path), _version(header), entries)


def zstd_decoder() -> Callable[[bytes, int], bytes] | None:
    """A decoder of the release's compressed entries (``zstandard``), or None when the
    package is not installed."""
    try:
        import zstandard
    except ImportError:
        return None
    d = zstandard.ZstdDecompressor()
    return lambda blob, size: d.decompress(blob, max_output_size=size)


@contextmanager
def read_only_store(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the SQLite database at ``path`` that leaves its folder as it was.

    SQLite's ``mode=ro`` still creates ``-shm``/``-wal`` files beside a WAL-mode database.
    Without a ``-wal`` file beside it (no writer has rows outside the main file) the file
    is opened ``immutable``: no lock, no journal, nothing written. With one (an agent is
    running), the file and its ``-wal`` are copied into a temporary folder and the copy is
    read, so the rows still in the ``-wal`` are seen. Closed (and the copy removed) on exit.
    """
    wal = path.with_name(path.name + "-wal")
    if not wal.exists():
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            yield con
        finally:
            con.close()
        return
    with tempfile.TemporaryDirectory(prefix="memlab-store-") as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        con = sqlite3.connect(copy)
        try:
            yield con
        finally:
            con.close()


def read_store_sessions(path: Path, counts: Counter[str]) -> Iterator[Session]:
    """The sessions of the release's agent database (table ``transcript_events``), rows in
    ``seq`` order, read without writing anything beside it (``read_only_store``). A
    database without that table has none. Raises ``sqlite3.Error`` when it cannot be read.
    """
    with read_only_store(path) as con:
        cols = {r[1] for r in con.execute("PRAGMA table_info(transcript_events)")}
        if not cols:
            return
        extra = "event_zstd, event_utf8_bytes" if "event_zstd" in cols else "NULL, NULL"
        rows = con.execute(
            f"SELECT session_id, seq, event_json, {extra}, created_at FROM transcript_events"
            " ORDER BY session_id, seq"
        )
        decode = zstd_decoder()
        current: str | None = None
        records: list[tuple[str, Any, float | None]] = []
        for sid, seq, event_json, blob, size, created in rows:
            if sid != current:
                if current is not None:
                    yield _store_session(current, path, records, counts)
                current, records = sid, []
            text = event_json
            if text is None and blob is not None:
                if decode is None:
                    counts[COMPRESSED] += 1
                    continue
                text = decode(bytes(blob), int(size)).decode("utf-8", errors="replace")
            try:
                rec = json.loads(text) if isinstance(text, str) else None
            except json.JSONDecodeError:
                rec = None
            records.append((f"S{seq}", rec, created if isinstance(created, int | float) else None))
        if current is not None:
            yield _store_session(current, path, records, counts)


def _store_session(
    sid: str, path: Path, records: list[tuple[str, Any, float | None]], counts: Counter[str]
) -> Session:
    header, entries = parse_entries(records, counts)
    return Session(str(sid), f"{path}#{sid}", _version(header), entries)
