"""Session transcripts as a memory source (spec section 4, opt-in).

A transcript ``sessions/*.jsonl`` holds one JSON object per line. memlab keeps
the user and assistant messages, one line each (``User: …`` /
``Assistant: …``), newlines inside a message folded to spaces so that line
numbers stay meaningful. Lines that are not JSON or not messages are skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
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
    wrappers; empty messages and other records are skipped.
    """
    out: list[str] = []
    for line in raw.splitlines():
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
    """(indexed text, mtime, size) of a transcript file; invalid UTF-8 is replaced."""
    p = Path(path)
    st = p.lstat()
    raw = p.read_bytes().decode("utf-8", errors="replace")
    return "\n".join(transcript_lines(raw)), st.st_mtime, st.st_size
