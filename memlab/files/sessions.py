"""Session transcripts: where an agent's are (``transcript_places``), and as a memory source.

Where: one rule for every reader (``memlab harvest``, ``memlab search --corpus sessions``,
``MemoryIndex``'s sessions source): :func:`transcript_places`.

As a source (spec section 4, opt-in): a transcript ``sessions/*.jsonl`` holds one JSON
object per line. memlab keeps the user and assistant messages, one line each (``User: …``
/ ``Assistant: …``), newlines inside a message folded to spaces so that line numbers stay
meaningful. Lines that are not JSON or not messages are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROLES = {"user": "User", "assistant": "Assistant"}

# Where each answer of transcript_places comes from (its ``origin``).
ORIGIN_GIVEN = "given"  # an explicit folder (--sessions DIR, sessions_dir=)
ORIGIN_OPENCLAW = "openclaw"  # OpenClaw's state folder for a named agent
ORIGIN_WORKSPACE = "workspace"  # WORKSPACE/sessions


@dataclass(frozen=True)
class TranscriptPlaces:
    """Where one agent's session transcripts are.

    ``jsonl_dir``: the folder of JSONL transcripts (``<session id>.jsonl``; it may not
    exist). ``store``: OpenClaw 2026.9.6's agent database
    (``<state>/agents/<id>/agent/openclaw-agent.sqlite``, table ``transcript_events``),
    only for a named agent (None otherwise; it may not exist either). ``origin``: which
    rule of :func:`transcript_places` answered (``given``, ``openclaw``, ``workspace``);
    ``agent``: the normalised agent id when one was named.
    """

    jsonl_dir: Path
    store: Path | None
    origin: str
    agent: str | None = None

    def describe(self) -> str:
        """The places in words, for messages: ``/s (JSONL) and /db.sqlite (agent database)``."""
        parts = [f"{self.jsonl_dir} (JSONL)"]
        if self.store is not None:
            parts.append(f"{self.store} (agent database)")
        return " and ".join(parts)


def transcript_places(
    workspace: str | os.PathLike[str],
    *,
    sessions: str | os.PathLike[str] | None = None,
    agent: str | None = None,
    env: Mapping[str, str] | None = None,
) -> TranscriptPlaces:
    """Where the transcripts of the agent of ``workspace`` are: the one rule.

    1. ``sessions`` given: that folder's JSONL files (``~`` expanded), nothing else.
    2. ``agent`` given: OpenClaw's layout under its state folder
       (``memlab.config.release.openclaw_state_dir``: ``$OPENCLAW_STATE_DIR``, else
       ``~/.openclaw``): the JSONL transcripts ``<state>/agents/<id>/sessions/*.jsonl``
       (2026-04, and the release's "legacy" files its doctor has not imported yet) and the
       release's agent database ``<state>/agents/<id>/agent/openclaw-agent.sqlite``, the id
       normalised as the release does.
    3. Otherwise ``WORKSPACE/sessions`` (memlab's own layout).

    Only paths are computed: nothing is opened, and a place need not exist.
    """
    if sessions is not None and str(sessions).strip():
        return TranscriptPlaces(Path(sessions).expanduser(), None, ORIGIN_GIVEN)
    if agent is not None and agent.strip():
        from memlab.config.release import agent_store_path, normalize_agent_id

        store = agent_store_path(agent, env)
        agent_dir = store.parent.parent  # <state>/agents/<id>
        return TranscriptPlaces(
            agent_dir / "sessions", store, ORIGIN_OPENCLAW, normalize_agent_id(agent)
        )
    return TranscriptPlaces(Path(workspace).expanduser() / "sessions", None, ORIGIN_WORKSPACE)


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

    Read like a memory file (``memlab.files.workspace.read_file_bytes``): never through a
    symlink, never blocking on a FIFO; raises ``MemoryFileError`` when unreadable.
    """
    from memlab.files.workspace import read_file_bytes

    data, st = read_file_bytes(path)
    raw = data.decode("utf-8", errors="replace")
    return "\n".join(transcript_lines(raw)), st.st_mtime, st.st_size
