"""Chunking of OpenClaw 2026.9.6 (spec §2) and the chunk's annotations (§8, §9).

Weights are the release's budget heuristic (``estimate_chars``): UTF-16 code units plus an
extra per CJK-like code point of five classes. A chunk holds at most 1600 weighted units
(400 tokens × 4), a piece of text costs its weight + 1 (the joining ``\\n``); an overflowing
piece emits the chunk and carries at most ``min(320, 1600 − cost)`` of its tail, whole pieces
or the weighted tail of the nearest one. ``MEMORY.md``/``USER.md`` are cut per block (a
``- `` entry or a ``#`` heading), never across blocks, and entry chunks keep the entry's span.
``chunk_markdown`` strips the annotation comments first and annotates each chunk from the
original lines of its span (``memlab.chunking.annotations``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlab.chunking.annotations import (
    INVALID_PROJECT_KEY,
    JS_SPACE,
    Annotations,
    js_trim,
    parse_annotations,
    strip_annotations,
)
from memlab.chunking.common import chunk_hash
from memlab.retrieval.textquery import utf16_len

__all__ = [
    "CHUNKING_VERSION",
    "INVALID_PROJECT_KEY",
    "MAX_CHARS",
    "OVERLAP_CHARS",
    "Annotations",
    "CuratedEntry",
    "CurrentChunk",
    "chunk_markdown",
    "chunk_text",
    "estimate_chars",
    "js_trim",
    "parse_annotations",
    "per_entry_path",
    "split_curated_entries",
    "strip_annotations",
    "utf16_prefix",
]

CHUNKING_VERSION = 5
MAX_CHARS = 1600  # 400 tokens × 4, fixed in the release
OVERLAP_CHARS = 320  # 80 tokens × 4
CURATED_ROOTS = ("MEMORY.md", "memory.md", "USER.md")
PER_ENTRY_PATHS = ("MEMORY.md", "USER.md")

# Extra weight per code point, by class (total weight = UTF-16 units + extra).
_EXTRA_RANGES: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = (
    (3, ((0xB7, 0xB7), (0x3000, 0x319F), (0x4E00, 0x9FA5), (0xAC00, 0xD7AF), (0xFF01, 0xFF60))),
    (
        11,
        (
            (0x1100, 0x11FF),
            (0x2E80, 0x2FFF),
            (0x31A0, 0x4DFF),
            (0x9FA6, 0x9FFF),
            (0xA000, 0xA4FF),
            (0xA700, 0xA707),
            (0xA960, 0xA97F),
            (0xD7B0, 0xD7FF),
            (0xF900, 0xFAFF),
        ),
    ),
    (
        7,
        (
            (0x2C7, 0x2C7),
            (0x2C9, 0x2CB),
            (0x2D9, 0x2D9),
            (0x2EA, 0x2EB),
            (0x305, 0x305),
            (0x323, 0x323),
            (0xFE10, 0xFE4F),
            (0xFF61, 0xFFDC),
            (0xFFE0, 0xFFE6),
        ),
    ),
    (10, ((0x1D360, 0x1D371),)),
    (
        14,
        (
            (0x16FE0, 0x16FFF),
            (0x1AFF0, 0x1B16F),
            (0x1F200, 0x1F2FF),
            (0x20000, 0x2FA1F),
            (0x30000, 0x3347F),
        ),
    ),
)
_CLASS_RES = tuple(
    (extra, re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in ranges) + "]"))
    for extra, ranges in _EXTRA_RANGES
)
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")

_SECTION_RE = re.compile(f"#{{1,6}}(?:[{JS_SPACE}]|$)")


def estimate_chars(text: str) -> int:
    """The release's weighted length: UTF-16 units + 3 per common CJK, + 11 per rare BMP CJK,
    + 7 per narrow form, + 10 per U+1D360–1D371, + 14 per supplementary ideograph/kana.

    ASCII text weighs its length. Examples: "你好" 8, "こんにちは" 20, "hello 世界" 14,
    "😀" 2, "한국어" 12, "𠮷" 16, "ᄀ" 12, "ｱ" 8, "" 0.
    """
    if text.isascii():
        return len(text)
    total = utf16_len(text)
    for extra, pattern in _CLASS_RES:
        total += extra * len(pattern.findall(text))
    return total


def utf16_prefix(text: str, limit: int) -> str:
    """Longest prefix of ``text`` within ``limit`` UTF-16 units, never half a pair."""
    if not _ASTRAL_RE.search(text, 0, limit):
        return text[:limit]
    units = 0
    for idx, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:idx]
    return text


def _tail(text: str, budget: int) -> str:
    """Longest suffix of ``text`` whose code points weigh ≤ ``budget`` in total."""
    acc = 0
    start = len(text)
    while start > 0:
        acc += estimate_chars(text[start - 1])
        if acc > budget:
            break
        start -= 1
    return text[start:]


def _pieces(line: str, max_chars: int) -> list[tuple[str, int]]:
    """``line`` cut into ``(piece, weight)``: ≤ max_chars UTF-16 units, re-cut by code point
    to ≤ max_chars weight when heavier; an empty line is one empty piece."""
    if not line:
        return [("", 0)]
    out: list[tuple[str, int]] = []
    start = 0
    while start < len(line):
        coarse = utf16_prefix(line[start:], max_chars)
        weight = estimate_chars(coarse)
        if weight <= max_chars:
            out.append((coarse, weight))
        else:
            part_start, part_chars = 0, 0
            for idx, ch in enumerate(coarse):
                w = estimate_chars(ch)
                if part_chars + w > max_chars:
                    out.append((coarse[part_start:idx], part_chars))
                    part_start, part_chars = idx, 0
                part_chars += w
            out.append((coarse[part_start:], part_chars))
        start += len(coarse)
    return out


def _block_kind(line: str) -> str | None:
    if line.startswith("- "):
        return "entry"
    return "section" if _SECTION_RE.match(line) else None


@dataclass(frozen=True, slots=True)
class CuratedEntry:
    """A block of a curated file: 1-based inclusive lines, its text, ``entry`` or ``section``."""

    start_line: int
    end_line: int
    text: str
    kind: str


def split_curated_entries(content: str) -> list[CuratedEntry]:
    """Blocks of ``content`` (split on ``\\n``): a line starting ``- `` opens an ``entry``, a
    heading ``#``…``######`` + white space/end opens a ``section``; other lines (indented,
    ``-x``, ``* x``, ``#x``) stay in the current block. The first block's kind is ``entry``
    if line 1 starts ``- ``, else ``section``. ``""`` → one empty section at line 1."""
    lines = content.split("\n")
    entries: list[CuratedEntry] = []
    start = 0
    kind = "entry" if lines[0].startswith("- ") else "section"
    for idx in range(1, len(lines) + 1):
        nxt = _block_kind(lines[idx]) if idx < len(lines) else "end"
        if nxt is None:
            continue
        entries.append(CuratedEntry(start + 1, idx, "\n".join(lines[start:idx]), kind))
        start, kind = idx, nxt
    return entries


@dataclass(frozen=True, slots=True)
class CurrentChunk:
    """A chunk as the release indexes it: text, 1-based inclusive lines, sha256 hash, the
    span of its ``- `` entry (None outside entries) and its annotations."""

    text: str
    start_line: int
    end_line: int
    hash: str
    entry_start_line: int | None = None
    entry_end_line: int | None = None
    importance: int | None = None
    triggers: str | None = None
    project_key: str | None = None

    @property
    def excluded(self) -> bool:
        """True when a malformed project annotation takes the chunk out of ranking."""
        return self.project_key == INVALID_PROJECT_KEY


def chunk_text(
    content: str,
    *,
    per_entry: bool = False,
    max_chars: int = MAX_CHARS,
    overlap_chars: int = OVERLAP_CHARS,
) -> list[CurrentChunk]:
    """The release's line packer over ``content`` as given (no stripping, no blank drop).

    Each piece (see ``_pieces``) costs weight + 1; when ``chunk + cost > max_chars`` and the
    chunk is not empty it is emitted and the overlap carried is whole trailing pieces within
    ``window = min(overlap_chars, max(0, max_chars − cost))`` (stopping once ≥ window), or,
    if the last piece alone is wider, its tail of weight ≤ window − 1. With ``per_entry`` a
    new block (``- `` entry or heading, and line 1) starts a new chunk with no overlap, and
    chunks of a ``- `` entry get ``entry_start_line``/``entry_end_line``.
    """
    raw: list[list] = []  # [text, start, end, entry_start, entry_end]
    current: list[tuple[str, int, int]] = []  # (piece, line number, weight)
    current_chars = 0
    entry_start: int | None = None
    entry_first = 0

    def flush() -> None:
        if current:
            raw.append(
                ["\n".join(p for p, _, _ in current), current[0][1], current[-1][1], None, None]
            )

    def carry(window: int) -> None:
        nonlocal current, current_chars
        acc = 0
        kept: list[tuple[str, int, int]] = []
        if window > 0:
            for piece, line_no, weight in reversed(current):
                size = weight + 1
                if size > window - acc:
                    tail = _tail(piece, window - acc - 1) if not kept else ""
                    if tail:
                        tail_weight = estimate_chars(tail)
                        kept.insert(0, (tail, line_no, tail_weight))
                        acc += tail_weight + 1
                    break
                acc += size
                kept.insert(0, (piece, line_no, weight))
                if acc >= window:
                    break
        current, current_chars = kept, acc

    def finish_entry(end_line: int) -> None:
        if entry_start is not None:
            for row in raw[entry_first:]:
                row[3], row[4] = entry_start, end_line

    lines = content.split("\n")
    for idx, line in enumerate(lines):
        line_no = idx + 1
        kind = (_block_kind(line) or ("section" if idx == 0 else None)) if per_entry else None
        if kind:
            flush()
            finish_entry(line_no - 1)
            current, current_chars = [], 0
            entry_start = line_no if kind == "entry" else None
            entry_first = len(raw)
        for piece, weight in _pieces(line, max_chars):
            cost = weight + 1
            if current and current_chars + cost > max_chars:
                flush()
                carry(min(overlap_chars, max(0, max_chars - cost)))
            current.append((piece, line_no, weight))
            current_chars += cost
    flush()
    finish_entry(len(lines))
    return [CurrentChunk(t, s, e, chunk_hash(t), es, ee) for t, s, e, es, ee in raw]


def per_entry_path(path: str) -> bool:
    """True for the files chunked per block: exactly ``MEMORY.md`` or ``USER.md``."""
    return path.replace("\\", "/") in PER_ENTRY_PATHS


def chunk_markdown(text: str, path: str, *, curated_root: bool | None = None) -> list[CurrentChunk]:
    """The chunks the release indexes for memory file ``path`` (workspace-relative) with text
    ``text``: annotations stripped, per-block chunking for ``MEMORY.md``/``USER.md``, blank
    chunks (only JS white space) dropped, and each chunk annotated from the original lines of
    its entry span (else its own lines). ``curated_root`` defaults to ``path`` being a root
    ``MEMORY.md``/``memory.md``/``USER.md``; project keys are read unless ``path`` is ``USER.md``
    (any case).
    """
    norm = path.replace("\\", "/")
    curated = norm in CURATED_ROOTS if curated_root is None else curated_root
    project_scope = norm.upper() != "USER.MD"
    source_lines = text.replace("\r\n", "\n").split("\n")
    out: list[CurrentChunk] = []
    cache: dict[tuple[int, int], Annotations] = {}
    for c in chunk_text(strip_annotations(text), per_entry=per_entry_path(norm)):
        if not js_trim(c.text):
            continue
        span = (c.entry_start_line or c.start_line, c.entry_end_line or c.end_line)
        if span not in cache:
            cache[span] = parse_annotations(
                source_lines[span[0] - 1 : span[1]],
                curated_root=curated,
                project_scope=project_scope,
            )
        a = cache[span]
        out.append(
            CurrentChunk(
                c.text,
                c.start_line,
                c.end_line,
                c.hash,
                c.entry_start_line,
                c.entry_end_line,
                a.importance,
                a.triggers,
                a.project_key,
            )
        )
    return out
