"""Trigger recall of OpenClaw 2026.9.6 (spec §10): which annotated memories a message calls up.

The release gathers candidates (trigger-annotated ``MEMORY.md``/``USER.md`` chunks and a
keyword-only search of the message) and keeps the strong matches; ``trigger_matches`` is
that selection over candidates the caller gives (each with the search score it had, 0 for a
listed-only candidate), ``trigger_context`` the text block it injects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memlab.openclaw_current.chunks import js_trim, strip_annotations, utf16_prefix
from memlab.textquery import utf16_len

__all__ = [
    "MAX_CONTEXT_CHARS",
    "STRONG_MATCH",
    "TOP_MATCHES",
    "TriggerEntry",
    "TriggerMatch",
    "phrase_score",
    "trigger_context",
    "trigger_matches",
]

STRONG_MATCH = 0.65  # the docs say 0.72; the release's constant is 0.65
TOP_MATCHES = 3
MAX_CONTEXT_CHARS = 1800
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
