"""Builders of OpenClaw session-transcript records for the harvest tests (the release's
entry shapes: a ``session`` header, ``message`` entries, ``toolCall`` parts and
``toolResult`` messages whose text is the tool's pretty-printed JSON)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

T0 = 1_767_261_600.0  # 2026-01-01T10:00:00Z


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def header(sid: str, t: float = T0, version: int = 4) -> dict[str, Any]:
    return {"type": "session", "version": version, "id": sid, "timestamp": iso(t), "cwd": "/ws"}


def message(eid: str, t: float, role: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": None,
        "timestamp": iso(t),
        "message": {"role": role, **fields},
    }


def user(eid: str, t: float, text: str) -> dict[str, Any]:
    return message(eid, t, "user", content=[{"type": "text", "text": text}])


def assistant(eid: str, t: float, *parts: Any) -> dict[str, Any]:
    """Parts: a str (text) or ``(call id, tool name, arguments)``."""
    content = [
        {"type": "text", "text": p}
        if isinstance(p, str)
        else {"type": "toolCall", "id": p[0], "name": p[1], "arguments": p[2]}
        for p in parts
    ]
    return message(eid, t, "assistant", content=content, stopReason="toolUse")


def result(eid: str, t: float, call_id: str, tool: str, payload: Any, error: bool = False):
    text = payload if isinstance(payload, str) else json.dumps(payload, indent=2)
    return message(
        eid,
        t,
        "toolResult",
        toolCallId=call_id,
        toolName=tool,
        content=[{"type": "text", "text": text}],
        isError=error,
    )


def hit(path: str, start: int, end: int, score: float, snippet: str) -> dict[str, Any]:
    return {
        "path": path,
        "startLine": start,
        "endLine": end,
        "score": score,
        "snippet": snippet,
        "source": "memory",
    }


def search_payload(hits: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"results": list(hits), "provider": "openai", "model": "m", "mode": "hybrid"}


def get_payload(path: str, text: str, start: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"status": "ok", "text": text, "path": path}
    if start is not None:
        out["from"] = start
        out["lines"] = len(text.split("\n"))
    return out


def write_jsonl(path: Path, records: Iterable[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_store(
    path: Path,
    sessions: dict[str, list[Any]],
    compressed: set[int] = frozenset(),
    *,
    wal: bool = False,
):
    """An agent database with the release's ``transcript_events`` columns; the rows whose
    (global) number is in ``compressed`` are stored as ``b"Z" + json`` in ``event_zstd``.
    ``wal``: in WAL journal mode, as an agent running beside the reader keeps it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute(
        "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,"
        " event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB,"
        " event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq))"
    )
    n = 0
    for sid, records in sessions.items():
        for seq, rec in enumerate(records):
            text = rec if isinstance(rec, str) else json.dumps(rec)
            if n in compressed:
                row = (sid, seq, None, int(T0 * 1000), b"Z" + text.encode(), len(text.encode()))
            else:
                row = (sid, seq, text, int(T0 * 1000), None, None)
            con.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at,"
                " event_zstd, event_utf8_bytes) VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )
            n += 1
    con.commit()
    con.close()
    return path
