"""A conversation's shape and each line's speaker role, read from the lines themselves.

A chat log line looks like ``[m57] User: text`` or ``[D1:3] Caroline: text``: an optional
bracketed id, then a speaker label and a colon. The shape of a file is
``user-assistant`` when every labelled chunk's speaker is ``User`` or ``Assistant``
(any case), ``named`` when a chunk names another speaker, and ``none`` when no chunk
has a label. Nothing here reads a data set's name: the same workspace gives the same
shape wherever it comes from. A file is a *conversation* (`conversation_files`) when
at least half of its chunks carry a speaker label. Engine layer; used by the neighbour
stage (``memlab.stages.context``) when ``neighbor_shape`` is on and by the file-context
stage (``memlab.stages.file_context``), which runs only in conversations.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.store.table import ChunkTable

__all__ = [
    "NOTE_LINE",
    "ROLE_ASSISTANT",
    "ROLE_NAMED",
    "ROLE_NONE",
    "ROLE_USER",
    "SPEAKER_LINE",
    "chunk_roles",
    "conversation_files",
    "file_ids",
    "file_shapes",
    "first_lines",
    "speaker_role",
    "transcript_line",
    "user_assistant_files",
]

# An optional "[id]" then a speaker label of 1–40 characters (no colon, bracket or '#')
# and ": ". The label is matched lazily so "User: a: b" gives "User".
SPEAKER_LINE = re.compile(r"^\s*(?:\[[^\]\n]*\]\s*)?([^:\[\]#\n]{1,40}?):\s")
ROLE_NONE, ROLE_USER, ROLE_ASSISTANT, ROLE_NAMED = 0, 1, 2, 3
_ROLE_WORDS = {"user": ROLE_USER, "assistant": ROLE_ASSISTANT}


def speaker_role(text: str) -> int:
    """The role of a chunk from its first non-blank line: ``ROLE_USER`` / ``ROLE_ASSISTANT``
    for a ``User:`` / ``Assistant:`` label (any case, after an optional ``[id]``),
    ``ROLE_NAMED`` for any other label, ``ROLE_NONE`` for no label (a heading, prose)."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    m = SPEAKER_LINE.match(first)
    if m is None:
        return ROLE_NONE
    return _ROLE_WORDS.get(m.group(1).strip().lower(), ROLE_NAMED)


# A Markdown list item or quote ("- Hana: backend lead", "1. Step: ...", "> Note: ...") is a
# note that happens to hold a colon, never a line of a transcript.
NOTE_LINE = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s")


def transcript_line(text: str) -> bool:
    """Whether a chunk's first non-blank line is a transcript line: a speaker label
    (`SPEAKER_LINE`) that does not start a Markdown list item or quote (`NOTE_LINE`)."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return SPEAKER_LINE.match(first) is not None and NOTE_LINE.match(first) is None


def first_lines(cs: CandidateSet) -> list[str]:
    """Each chunk's first non-blank line ("" for a blank chunk), for every chunk of the
    candidate set's table: the one read of every chunk's text that `chunk_roles` and
    `conversation_files` share (cached on the table)."""

    def compute(table: object) -> list[str]:
        n = len(cs.table)
        texts = cs.texts(np.arange(n)) if n else []
        return [next((ln for ln in t.splitlines() if ln.strip()), "") for t in texts]

    return cs.table.derived("first_lines", compute)


def chunk_roles(cs: CandidateSet) -> np.ndarray:
    """``speaker_role`` of every chunk of the candidate set's table: int8 [N] (from
    `first_lines`; cached on the table)."""

    def compute(table: object) -> np.ndarray:
        return np.array([speaker_role(t) for t in first_lines(cs)], dtype=np.int8)

    return cs.table.derived("speaker_roles", compute)


def file_ids(table: ChunkTable) -> np.ndarray:
    """A file number per chunk: int64 [N], equal for two chunks exactly when they share a
    path and a segment (``ChunkTable.segments``; none = one index): chunks of two merged
    indexes never share a file. Cached on the table."""

    def compute(t: ChunkTable) -> np.ndarray:
        n = len(t)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        seg = np.zeros(n, dtype=np.int64) if t.segments is None else np.asarray(t.segments)
        keys = np.array([f"{s}\0{p}" for s, p in zip(seg.tolist(), list(t.paths), strict=True)])
        return np.unique(keys, return_inverse=True)[1].astype(np.int64)

    return table.derived("file_ids", compute)


def conversation_files(cs: CandidateSet) -> np.ndarray:
    """Whether each chunk's file is a conversation transcript: bool [N]. A file is one when
    ``transcript chunks ≥ chunks / 2`` — at least half of its chunks start with a
    `transcript_line` (a speaker label, not a list item); a session heading or two do not
    change that, while a curated ``MEMORY.md`` or a log of notes (``- Hana: backend
    lead`` is a list item) is not a conversation. From `first_lines`; cached on the table."""

    def compute(table: object) -> np.ndarray:
        t = cs.table
        n = len(t)
        if n == 0:
            return np.zeros(0, dtype=bool)
        fid = file_ids(t)
        lines = np.array([transcript_line(x) for x in first_lines(cs)], dtype=bool)
        labelled = np.bincount(fid, weights=lines)
        total = np.bincount(fid)
        return (2 * labelled >= total)[fid]

    return cs.table.derived("conversation_files", compute)


def user_assistant_files(cs: CandidateSet) -> np.ndarray:
    """Whether each chunk's file is a user–assistant conversation: bool [N].

    A file (a path within one segment of the table) is one when at least one of its
    chunks has a speaker label and every labelled chunk is ``User`` or ``Assistant``.
    """

    def compute(table: object) -> np.ndarray:
        t = cs.table
        roles = chunk_roles(cs)
        if len(t) == 0:
            return np.zeros(0, dtype=bool)
        file_id = file_ids(t)
        labelled = np.bincount(file_id, weights=roles != ROLE_NONE)
        named = np.bincount(file_id, weights=roles == ROLE_NAMED)
        ok = (labelled > 0) & (named == 0)
        return ok[file_id]

    return cs.table.derived("user_assistant_files", compute)


def file_shapes(cs: CandidateSet) -> dict[str, int]:
    """How many files of the candidate set's table the shape-aware stages see as what, as
    two independent tests: ``conversations`` (`conversation_files`: where ``file_context``
    adds the file's best score) and ``user_assistant`` (`user_assistant_files`: where
    ``neighbor_shape="roles"`` uses the role rule; every other file keeps the prev/next
    window), out of ``files``. A user–assistant file need not be a conversation (one
    ``User:`` line among prose), so the two counts do not nest. A file counts once
    whatever its number of chunks; an empty table gives zeros."""
    t = cs.table
    if len(t) == 0:
        return {"files": 0, "conversations": 0, "user_assistant": 0}
    fid = file_ids(t)
    first = np.unique(fid, return_index=True)[1]
    return {
        "files": int(first.size),
        "conversations": int(conversation_files(cs)[first].sum()),
        "user_assistant": int(user_assistant_files(cs)[first].sum()),
    }
