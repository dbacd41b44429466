"""Session transcripts as a memory source (spec section 4, opt-in).

A transcript ``sessions/*.jsonl`` holds one JSON object per line. memlab keeps
the user and assistant messages, one line each (``User: …`` /
``Assistant: …``), newlines inside a message folded to spaces so that line
numbers stay meaningful. Lines that are not JSON or not messages are skipped.
"""

from __future__ import annotations

import json
import os
from typing import Any

ROLES = {"user": "User", "assistant": "Assistant"}


def message_text(content: Any) -> str:
    """Plain text of a message ``content``: a string, or the ``text`` parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and p.get("type") in (None, "text")
        ]
        return " ".join(p for p in parts if isinstance(p, str))
    return ""


def transcript_lines(raw: str) -> list[str]:
    """``User: …`` / ``Assistant: …`` lines of a JSONL transcript, in order.

    Accepts ``{"role", "content"}`` objects and ``{"message": {"role", "content"}}``
    wrappers; empty messages and other records are skipped. Records are split on
    ``\\n`` only (JSONL): ``str.splitlines`` would also split at U+2028, U+0085 and
    other characters JSON allows unescaped inside a string, losing that record.
    """
    out: list[str] = []
    for line in raw.split("\n"):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else rec
        role = ROLES.get(str(msg.get("role", "")))
        if role is None:
            continue
        text = " ".join(message_text(msg.get("content")).split())
        if text:
            out.append(f"{role}: {text}")
    return out


def read_session_text(path: str | os.PathLike[str]) -> tuple[str, float, int]:
    """(indexed text, mtime, size) of a transcript file; invalid UTF-8 is replaced.

    Read like a memory file (``memlab.workspace.read_file_bytes``): never through a
    symlink, never blocking on a FIFO; raises ``MemoryFileError`` when unreadable.
    """
    from memlab.workspace import read_file_bytes

    data, st = read_file_bytes(path)
    raw = data.decode("utf-8", errors="replace")
    return "\n".join(transcript_lines(raw)), st.st_mtime, st.st_size
