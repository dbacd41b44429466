"""Curated annotations of OpenClaw 2026.9.6 (spec §2, §8, §9): stripping and parsing.

``<!-- trigger|importance|project: … -->`` comments are removed from memory text before
chunking (only those closed on their own line) and read per chunk span from the original
lines: importance and triggers only in curated roots, from lines ending in ``-->``; project
keys in every memory file but ``USER.md``, a malformed one → ``INVALID_PROJECT_KEY`` (the
chunk leaves ranking). JavaScript semantics kept: ``trim`` strips ECMAScript white space
(``JS_SPACE``), digits are ASCII, the markers match ASCII case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "INVALID_PROJECT_KEY",
    "JS_SPACE",
    "Annotations",
    "js_trim",
    "normalize_project_key",
    "parse_annotations",
    "strip_annotations",
]

INVALID_PROJECT_KEY = "!invalid-project-annotation"
# ECMAScript WhiteSpace + LineTerminator (what String.prototype.trim removes).
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TRIM_RE = re.compile(f"^[{JS_SPACE}]+|[{JS_SPACE}]+$")
_TRIM_END_RE = re.compile(f"[{JS_SPACE}]+$")
_ANY_MARKER_RE = re.compile(
    f"<!--[{JS_SPACE}]*(trigger|importance|project)[{JS_SPACE}]*:", re.I | re.A
)
_PROJECT_MARKER_RE = re.compile(f"<!--[{JS_SPACE}]*(project)[{JS_SPACE}]*:", re.I | re.A)
_LINE_BREAK_RE = re.compile("[\r\n]")
_TRAILING_SPACE_RE = re.compile("[ \t]+(?=[\r\n\u2028\u2029]|$)")
_DIGITS_RE = re.compile("[0-9]+")


def js_trim(text: str) -> str:
    """``text`` without leading/trailing ECMAScript white space (JavaScript's ``trim``)."""
    return _TRIM_RE.sub("", text)


def _scan(
    text: str, marker: re.Pattern[str], line_scoped: bool = False
) -> Iterator[tuple[int, int, str, str]]:
    """Yield ``(start, end, kind, value)`` of each ``marker … -->`` annotation, in order.

    Stops at the first marker with no ``-->`` after it. ``line_scoped``: a marker whose
    closing lies beyond the next ``\\r``/``\\n`` is not an annotation (scanning resumes
    right after the marker).
    """
    pos = 0
    while (m := marker.search(text, pos)) is not None:
        value_start = m.end()
        closing = text.find("-->", value_start)
        if closing < 0:
            return
        if line_scoped:
            brk = _LINE_BREAK_RE.search(text, value_start)
            if (brk.start() if brk else len(text)) < closing:
                pos = value_start
                continue
        yield m.start(), closing + 3, m.group(1).lower(), js_trim(text[value_start:closing])
        pos = closing + 3


def strip_annotations(text: str) -> str:
    """``text`` without ``<!-- trigger|importance|project: … -->`` comments closed on their
    own line (markers ASCII case-insensitive). When any was removed, runs of spaces/tabs
    before a line break (``\\r``, ``\\n``, U+2028/2029) or the end go too; else ``text``
    is returned unchanged (trailing spaces kept). Line count never changes."""
    parts: list[str] = []
    cursor = 0
    for start, end, _, _ in _scan(text, _ANY_MARKER_RE, line_scoped=True):
        parts.append(text[cursor:start])
        cursor = end
    if cursor == 0:
        return text
    parts.append(text[cursor:])
    return _TRAILING_SPACE_RE.sub("", "".join(parts))


def normalize_project_key(value: str) -> str | None:
    """A project key as stored: trimmed; ``path:…`` kept; else the part before the first
    ``/`` (if it is not at position 0) lower-cased. Empty or holding CR/LF/``<``/``>`` → None."""
    key = js_trim(value)
    if not key or re.search("[\r\n<>]", key):
        return None
    if key.startswith("path:"):
        return key
    sep = key.find("/")
    return key if sep < 1 else key[:sep].lower() + key[sep:]


@dataclass(frozen=True, slots=True)
class Annotations:
    """Recall metadata of one chunk span: importance 1–10 or None, triggers ``"a; b"`` or None,
    project key ``"k1; k2"``, None, or ``INVALID_PROJECT_KEY`` (malformed)."""

    importance: int | None = None
    triggers: str | None = None
    project_key: str | None = None


def _project_key(text: str) -> str | None:
    markers = len(_PROJECT_MARKER_RE.findall(text))
    if markers == 0:
        return None
    keys: dict[str, None] = {}
    parsed = raw = valid = 0
    for _, _, _, value in _scan(text, _PROJECT_MARKER_RE):
        parsed += 1
        for part in value.split(";"):
            raw += 1
            key = normalize_project_key(part)
            if key:
                keys[key] = None
                valid += 1
    if parsed != markers or raw == 0 or raw != valid:
        return INVALID_PROJECT_KEY
    return "; ".join(keys) or None


def parse_annotations(
    lines: Sequence[str], *, curated_root: bool = False, project_scope: bool = True
) -> Annotations:
    """Annotations of a chunk's source lines (original text, CRLF → LF).

    Importance/triggers only when ``curated_root``, from lines that end in ``-->`` (after
    trailing white space): ``importance: N`` with N ASCII digits in 1–10 (several → max;
    0, 11, 7.5 → none); ``trigger: a, b; c`` → ``"a; b; c"`` (split on ``,``/``;``, trimmed,
    deduplicated in order). Project keys when ``project_scope`` (every memory file but
    ``USER.md``), over the joined lines, comments may span lines: keys split on ``;`` and
    normalised; an unclosed marker, an empty or a bad key → ``INVALID_PROJECT_KEY``.
    """
    importance: int | None = None
    phrases: dict[str, None] = {}
    for line in lines if curated_root else ():
        if not _TRIM_END_RE.sub("", line).endswith("-->"):
            continue
        for _, _, kind, value in _scan(line, _ANY_MARKER_RE):
            if kind == "trigger":
                for phrase in re.split("[,;]", value):
                    if phrase := js_trim(phrase):
                        phrases[phrase] = None
            elif kind == "importance" and _DIGITS_RE.fullmatch(value):
                n = int(value)
                if 1 <= n <= 10:
                    importance = n if importance is None else max(importance, n)
    project = _project_key("\n".join(lines)) if project_scope else None
    return Annotations(importance, "; ".join(phrases) or None, project)
