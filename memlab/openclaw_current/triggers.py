"""Trigger recall of OpenClaw 2026.9.6 (spec §10): which annotated memories a message calls up.

The release gathers candidates (trigger-annotated ``MEMORY.md``/``USER.md`` chunks and a
keyword-only search of the message) and keeps the strong matches; ``trigger_matches`` is
that selection over candidates the caller gives (each with the search score it had, 0 for a
listed-only candidate), ``trigger_context`` the text block it injects.
``listed_trigger_candidates`` and ``merge_trigger_candidates`` gather the candidates as the
release does, and ``recall_triggers(message, workspace)`` runs the whole recall on a
workspace's ``MEMORY.md``/``USER.md`` (a notebook's one call).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memlab.chunking.annotations import INVALID_PROJECT_KEY
from memlab.chunking.release import chunk_markdown, js_trim, strip_annotations, utf16_prefix
from memlab.retrieval.textquery import utf16_len
from memlab.store.release_files import list_memory_files

__all__ = [
    "LISTED_LIMIT",
    "MAX_CONTEXT_CHARS",
    "SEARCH_LIMIT",
    "STRONG_MATCH",
    "TOP_MATCHES",
    "TriggerEntry",
    "TriggerMatch",
    "listed_trigger_candidates",
    "merge_trigger_candidates",
    "phrase_score",
    "recall_triggers",
    "trigger_context",
    "trigger_matches",
    "workspace_trigger_entries",
]

STRONG_MATCH = 0.65  # the docs say 0.72; the release's constant is 0.65
TOP_MATCHES = 3
MAX_CONTEXT_CHARS = 1800
LISTED_LIMIT = 512  # listed trigger candidates read from the index
SEARCH_LIMIT = 24  # the keyword-only search of the message (minScore 0, memory only)
CURATED_PATHS = ("MEMORY.md", "USER.md")
_WORD_RE = re.compile(r"[^\W]+")  # letters, digits (Unicode L and N) and "_"
_PHRASE_SPLIT_RE = re.compile("[\n;|]+")


@dataclass(frozen=True, slots=True)
class TriggerEntry:
    """A recall candidate: location, snippet, its search score, stored triggers and project
    key, source (``memory``/``sessions``) and origin class (``owner``/``agent``/…)."""

    path: str
    start_line: int
    end_line: int
    snippet: str = ""
    score: float = 0.0
    triggers: str | None = None
    project_key: str | None = None
    source: str = "memory"
    origin_class: str = "agent"
    importance: float | None = None


@dataclass(frozen=True, slots=True)
class TriggerMatch:
    """A strong match: the candidate and its match score (0.8 · phrase + 0.2 · relevance)."""

    entry: TriggerEntry
    match_score: float


def _words(text: str) -> list[str]:
    # Lower-cased runs longer than one UTF-16 unit, as the release counts length.
    return [w for w in _WORD_RE.findall(text.lower()) if utf16_len(w) > 1]


def phrase_score(phrase: str, message_words: set[str]) -> float:
    """Score of one trigger phrase against the message's word set.

    Words = distinct lower-cased letter/digit/``_`` runs longer than 1. No words → 0; one
    word → 0.85 if in the message else 0; else with ``f`` of ``n`` words found: 0 if
    ``f = 0``, else ``f/n · 0.8 + min(1, f/2) · 0.2``.
    """
    words = list(dict.fromkeys(_words(phrase)))
    if not words:
        return 0.0
    if len(words) == 1:
        return 0.85 if words[0] in message_words else 0.0
    found = sum(w in message_words for w in words)
    if found == 0:
        return 0.0
    return found / len(words) * 0.8 + min(1.0, found / 2) * 0.2


def _eligible(entry: TriggerEntry, active: Sequence[str]) -> bool:
    # Automatic injection needs a memory source, a trusted origin and, for a tagged entry,
    # every one of its project keys active.
    if entry.project_key:
        keys = list(
            dict.fromkeys(k for k in (js_trim(k) for k in entry.project_key.split(";")) if k)
        )
        if not keys or not all(k in active for k in keys):
            return False
    return entry.source == "memory" and entry.origin_class in ("owner", "agent")


def _match_score(entry: TriggerEntry, message_words: set[str]) -> float:
    if not entry.triggers:
        return 0.0
    phrases = [p for p in (js_trim(x) for x in _PHRASE_SPLIT_RE.split(entry.triggers)) if p]
    best = max([0.0, *(phrase_score(p, message_words) for p in phrases)])
    return best * 0.8 + max(0.0, min(1.0, entry.score)) * 0.2


def trigger_matches(
    message: str, entries: Iterable[TriggerEntry], active: Sequence[str] = ()
) -> list[TriggerMatch]:
    """The release's strong trigger matches of ``message``: at most 3, best first.

    Eligible entries (``source == "memory"``, origin ``owner``/``agent``, all project keys in
    ``active``) score ``0.8 · best phrase + 0.2 · clamp(score, 0, 1)`` (phrases = the stored
    triggers split on newline, ``;`` or ``|``; see ``phrase_score``; no triggers → 0); kept
    when ≥ 0.65, ordered by score, then path, then start line. The release breaks path ties
    with ``localeCompare``; memlab compares case-folded paths, then the paths (equal for
    ASCII paths that differ beyond case only in rare orders).
    """
    words = set(_words(message))
    scored = [
        TriggerMatch(e, _match_score(e, words)) for e in entries if _eligible(e, tuple(active))
    ]
    strong = [m for m in scored if m.match_score >= STRONG_MATCH]
    strong.sort(
        key=lambda m: (-m.match_score, m.entry.path.casefold(), m.entry.path, m.entry.start_line)
    )
    return strong[:TOP_MATCHES]


def trigger_context(matches: Sequence[TriggerMatch]) -> str | None:
    """The recalled lines: ``- {snippet without annotations, trimmed} (Source: path#L{start})``
    per match, joined by newlines, cut to 1800 UTF-16 units (never half a surrogate pair);
    None when there is no match. (The release prefixes its own prompt header.)"""
    if not matches:
        return None
    text = "\n".join(
        f"- {js_trim(strip_annotations(m.entry.snippet))} (Source: {m.entry.path}#L{m.entry.start_line})"
        for m in matches
    )
    return utf16_prefix(text, MAX_CONTEXT_CHARS)


def listed_trigger_candidates(
    entries: Iterable[TriggerEntry], active: Sequence[str] = (), limit: int = LISTED_LIMIT
) -> list[TriggerEntry]:
    """The candidates the release lists from its index before any search (§10).

    Kept: ``path`` ``MEMORY.md`` or ``USER.md``, ``source == "memory"``, origin ``owner`` or
    ``agent``, non-empty ``triggers``, no malformed project annotation, and either untagged
    or every project key (split on ``;``, trimmed) in ``active`` (an empty ``active`` keeps
    untagged entries only). Order: importance descending (none counts 0), then path, then
    start line (the release's last key is its chunk id, a hash memlab does not share: it
    only matters among more than ``limit`` equal candidates). At most ``limit`` (1–512);
    each with score 0, as the release lists them.
    """
    on = {k.strip() for k in active if k.strip()}
    kept = []
    for e in entries:
        if e.path not in CURATED_PATHS or e.source != "memory":
            continue
        if e.origin_class not in ("owner", "agent") or not (e.triggers or "").strip():
            continue
        if e.project_key is not None:
            keys = [k.strip() for k in e.project_key.split(";") if k.strip()]
            if INVALID_PROJECT_KEY in keys or not keys or not all(k in on for k in keys):
                continue
        kept.append(e)
    kept.sort(key=lambda e: (-(e.importance or 0), e.path, e.start_line, e.end_line))
    n = max(1, min(LISTED_LIMIT, int(limit)))
    return [_with_score(e, 0.0) for e in kept[:n]]


def _with_score(e: TriggerEntry, score: float) -> TriggerEntry:
    return TriggerEntry(e.path, e.start_line, e.end_line, e.snippet, score, e.triggers,
                        e.project_key, e.source, e.origin_class, e.importance)  # fmt: skip


def merge_trigger_candidates(
    listed: Iterable[TriggerEntry], retrieved: Iterable[TriggerEntry] = ()
) -> list[TriggerEntry]:
    """Listed candidates, then the keyword-only search's (``SEARCH_LIMIT`` of them), one per
    ``(source, path, start_line, end_line)``: a later entry replaces an earlier one with the
    same key in the earlier one's place (so a listed entry the search also found carries the
    search score)."""
    merged: dict[tuple[str, str, int, int], TriggerEntry] = {}
    for e in [*listed, *retrieved]:
        merged[(e.source, e.path, e.start_line, e.end_line)] = e
    return list(merged.values())


def workspace_trigger_entries(workspace: str | os.PathLike[str]) -> list[TriggerEntry]:
    """A ``TriggerEntry`` per chunk of the workspace's root ``MEMORY.md`` and ``USER.md`` as
    the release chunks them (``chunk_markdown``: annotations stripped from the snippet,
    triggers and importance kept, project keys outside ``USER.md``), score 0, origin
    ``agent`` (memlab records no ``owner``). Files the release does not index (a symlink, a
    missing file) give nothing."""
    out: list[TriggerEntry] = []
    for f in list_memory_files(workspace):
        if f.path not in CURATED_PATHS:
            continue
        text = f.abspath.read_text(encoding="utf-8", errors="replace")
        for c in chunk_markdown(text, f.path):
            out.append(TriggerEntry(f.path, c.start_line, c.end_line, c.text, 0.0, c.triggers,
                                    c.project_key, f.source, f.origin_class, c.importance))  # fmt: skip
    return out


def recall_triggers(
    message: str,
    workspace: str | os.PathLike[str],
    active: Sequence[str] = (),
    retrieved: Iterable[TriggerEntry] = (),
) -> list[TriggerMatch]:
    """The release's trigger recall of ``message`` on a workspace (§10): the listed
    candidates of ``workspace_trigger_entries`` merged with ``retrieved`` (the keyword-only
    search's hits with their scores; none given: every candidate scores 0, so a match needs a
    phrase score ≥ 0.8125), then ``trigger_matches`` (≥ 0.65, at most 3). Pass the matches to
    ``trigger_context`` for the injected text."""
    listed = listed_trigger_candidates(workspace_trigger_entries(workspace), active)
    return trigger_matches(message, merge_trigger_candidates(listed, retrieved), active)
