"""The heading-aware Markdown chunker (``chunk_headings``).

Cuts preferably at headings, fences, rules, blank lines and list items, scored
as QMD does (h1 100 … h6 50, fence 80, rule 60, blank 20, list 5, newline 1)
and discounted by ``1 − (distance/window)² × 0.7``; never inside a fenced
code block that fits; every chunk records its heading path. Sizes are
weighted as in ``memlab.chunking.common`` (OpenClaw's ``estimate_chars``).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from memlab.chunking.common import (
    CHARS_PER_TOKEN,
    HEADING_WINDOW_TOKENS,
    LIST_ITEM_RE,
    Chunk,
    char_weight,
    chunk_hash,
    chunk_sizes,
    estimate_chars,
)

__all__ = ["chunk_headings"]

_HEADING_SCORES = {1: 100.0, 2: 90.0, 3: 80.0, 4: 70.0, 5: 60.0, 6: 50.0}
_FENCE_SCORE = 80.0
_HR_SCORE = 60.0
_BLANK_SCORE = 20.0
_LIST_SCORE = 5.0
_NEWLINE_SCORE = 1.0
_PIECE_SCORE = 0.0  # a cut inside an over-long line: only when no line boundary is in reach
_DISCOUNT = 0.7

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_HR_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")


@dataclass(slots=True)
class _Doc:
    """Per-line Markdown facts (0-based line indices)."""

    lines: list[str]
    level: list[int]  # ATX heading level, 0 if none; never set inside a fence
    block: list[int]  # fence block holding the line (opener to closer), -1 if none
    opens: list[bool]
    closes: list[bool]
    blank: list[bool]
    paths: list[str]  # heading path in effect at the line


def _analyse(lines: list[str]) -> tuple[_Doc, list[tuple[int, int]]]:
    n = len(lines)
    doc = _Doc(lines, [0] * n, [-1] * n, [False] * n, [False] * n, [False] * n, [""] * n)
    blocks: list[tuple[int, int]] = []
    fence: tuple[str, int, int] | None = None  # (char, length, opener line)
    stack: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        doc.blank[i] = not line.strip()
        match = _FENCE_RE.match(line)
        if fence is not None:
            doc.block[i] = len(blocks)
            mark = match.group(1) if match else ""
            if (
                match
                and mark[0] == fence[0]
                and len(mark) >= fence[1]
                and not match.group(2).strip()
            ):
                doc.closes[i] = True
                blocks.append((fence[2], i))
                fence = None
        elif match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = (match.group(1)[0], len(match.group(1)), i)
            doc.block[i] = len(blocks)
            doc.opens[i] = True
        else:
            heading = _ATX_RE.match(line.rstrip())
            if heading:
                level = len(heading.group(1))
                title = _ATX_CLOSE_RE.sub("", (heading.group(2) or "").strip()).strip()
                doc.level[i] = level
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
        doc.paths[i] = " > ".join(title for _, title in stack if title)
    if fence is not None:  # an unclosed fence runs to the end of the file
        blocks.append((fence[2], n - 1))
    return doc, blocks


def _sections(doc: _Doc) -> list[int]:
    """First line of each section: an h1/h2 outside fences opens one once content was seen."""
    starts = [0]
    has_content = False
    for i, level in enumerate(doc.level):
        if level in (1, 2) and has_content:
            starts.append(i)
            has_content = False
        elif level == 0 and not doc.blank[i]:
            has_content = True
    return starts


@dataclass(frozen=True, slots=True)
class _Unit:
    line: int  # 0-based
    text: str
    cost: int
    first: bool  # starts its line
    last: bool  # ends its line


def _heading_units(lines: list[str], max_chars: int) -> list[_Unit]:
    units: list[_Unit] = []
    for i, line in enumerate(lines):
        weight = estimate_chars(line)
        if weight + 1 <= max_chars:
            units.append(_Unit(i, line, weight + 1, True, True))
            continue
        # greedy by weight so every piece costs at most maxChars and pairs stay whole
        pieces: list[tuple[str, int]] = []
        start = acc = 0
        for j, ch in enumerate(line):
            w = char_weight(ch)
            if acc + w > max_chars - 1 and j > start:
                pieces.append((line[start:j], acc))
                start, acc = j, 0
            acc += w
        pieces.append((line[start:], acc))
        for k, (piece, w) in enumerate(pieces):
            units.append(_Unit(i, piece, w + 1, k == 0, k == len(pieces) - 1))
    return units


def _join_units(units: list[_Unit]) -> str:
    parts: list[str] = []
    for k, unit in enumerate(units):
        if k and unit.line != units[k - 1].line:
            parts.append("\n")
        parts.append(unit.text)
    return "".join(parts)


def chunk_headings(
    text: str, tokens: int = 400, overlap: int = 60, *, window: int = HEADING_WINDOW_TOKENS
) -> list[Chunk]:
    """Markdown-aware chunker: cuts at the best-scoring break near ``maxChars``.

    Sizes as OpenClaw (``maxChars = max(32, 4 * tokens)``, cost = weight + 1 per line). The
    file is first split into sections at every h1/h2 heading (outside fences) that follows
    some content, so two ``## Person`` sections never share a chunk. Within a section, lines
    are packed until the next one would exceed ``maxChars``; the cut is then chosen among the
    line boundaries at most ``W = 4 * window`` weighted chars before that target, maximising
    ``score × (1 − (d / W)² × 0.7)`` (d = cost between the cut and the target; ties go to the
    later cut). Scores (QMD): heading h1..h6 100/90/80/70/60/50, before a fence opener or
    after a closer 80, horizontal rule 60, after a blank line 20, list item 5, other line 1.
    With no boundary in the window, the latest allowed boundary is used.

    Edge cases: a cut never falls inside a fenced block (``` or ~~~) that fits in
    ``maxChars``; inside a bigger one lines score 1. A line longer than ``maxChars`` is cut
    into pieces by weight (score 0 between pieces, joined without newline so the text stays a
    substring of the source). Overlap: trailing whole lines of the emitted chunk while their
    cost stays ``<= overlapChars`` and leaves room for the next line (or the whole next fence
    block); none when the new chunk starts at a heading, never across a heading or into a
    fence. ``heading`` = path ("H1 > H2 > H3", ATX titles) at the first non-overlap line that
    is neither blank nor a heading (else the first non-overlap line). Chunks whose own
    (non-overlap) part is whitespace are dropped; ``window < 1`` raises ``ValueError``.
    """
    max_chars, overlap_chars = chunk_sizes(tokens, overlap)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    window_chars = CHARS_PER_TOKEN * window
    lines = text.split("\n")
    doc, blocks = _analyse(lines)
    units = _heading_units(lines, max_chars)
    cum = [0]
    for unit in units:
        cum.append(cum[-1] + unit.cost)
    first_unit: dict[int, int] = {}
    for k, unit in enumerate(units):
        first_unit.setdefault(unit.line, k)
    block_cost = [
        cum[first_unit.get(end + 1, len(units))] - cum[first_unit[start]] for start, end in blocks
    ]
    fits = [cost <= max_chars for cost in block_cost]

    def score(c: int) -> float | None:
        unit = units[c]
        if not unit.first:
            return _PIECE_SCORE
        i = unit.line
        b = doc.block[i]
        if b >= 0 and not doc.opens[i]:
            return None if fits[b] else _NEWLINE_SCORE
        best = _NEWLINE_SCORE
        if doc.level[i]:
            best = max(best, _HEADING_SCORES[doc.level[i]])
        if doc.opens[i] or (i > 0 and doc.closes[i - 1]):
            best = max(best, _FENCE_SCORE)
        elif b < 0 and _HR_RE.match(doc.lines[i]):
            best = max(best, _HR_SCORE)
        if i > 0 and doc.blank[i - 1] and not doc.blank[i]:
            best = max(best, _BLANK_SCORE)
        if b < 0 and LIST_ITEM_RE.match(doc.lines[i]) and not _HR_RE.match(doc.lines[i]):
            best = max(best, _LIST_SCORE)
        return best

    def need(c: int) -> int:
        unit = units[c]
        b = doc.block[unit.line]
        if unit.first and doc.opens[unit.line] and fits[b]:
            return block_cost[b]
        return unit.cost

    def carry_from(lo: int, c: int) -> int:
        if units[c].first and doc.level[units[c].line]:
            return c
        room = min(overlap_chars, max_chars - need(c))
        k = c
        while k > lo:
            unit = units[k - 1]
            if not (unit.first and unit.last) or doc.block[unit.line] >= 0:
                break
            if cum[c] - cum[k - 1] > room:
                break
            k -= 1
            if doc.level[unit.line]:
                break
        return k

    chunks: list[Chunk] = []
    section_starts = [first_unit[line] for line in _sections(doc)] + [len(units)]
    for us, ue in itertools.pairwise(section_starts):
        o = s = us
        while s < ue:
            budget = max_chars - (cum[s] - cum[o])
            # the carry leaves room for unit s; max() only guards termination
            e = max(s + 1, bisect.bisect_right(cum, cum[s] + budget, s, ue + 1) - 1)
            c = ue if e >= ue else _best_cut(s, e, cum, score, window_chars)
            own = units[s:c]
            if any(unit.text.strip() for unit in own):
                chunk_text = _join_units(units[o:c])
                label = next(
                    (u.line for u in own if not doc.blank[u.line] and not doc.level[u.line]),
                    units[s].line,
                )
                chunks.append(
                    Chunk(
                        chunk_text,
                        units[o].line + 1,
                        units[c - 1].line + 1,
                        chunk_hash(chunk_text),
                        doc.paths[label],
                    )
                )
            if c >= ue:
                break
            o, s = carry_from(o, c), c
    return chunks


def _best_cut(
    s: int, e: int, cum: list[int], score: Callable[[int], float | None], window_chars: int
) -> int:
    """Cut index in ``(s, e]`` maximising the discounted score (see ``chunk_headings``)."""
    best: tuple[float, int] | None = None
    for c in range(e, s, -1):
        distance = cum[e] - cum[c]
        if distance > window_chars:
            break
        base = score(c)
        if base is None:
            continue
        value = base * (1.0 - (distance / window_chars) ** 2 * _DISCOUNT)
        if best is None or value > best[0]:
            best = (value, c)
    if best is not None:
        return best[1]
    # nothing allowed in the window (a fence in the way): the latest allowed boundary
    return next((c for c in range(e, s, -1) if score(c) is not None), e)
