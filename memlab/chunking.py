"""Chunkers: OpenClaw's line packer (exact and bounded), a heading-aware one, one line per chunk.

Spec §2. Sizes are weighted characters (``estimate_chars``): 4 per token, a CJK character
weighs 4, anything else its UTF-16 code-unit count. A piece of text costs its weight + 1 (the
joining newline). ``maxChars = max(32, 4 * tokens)``; ``overlapChars = 4 * overlap`` with
``overlap`` clamped to ``[0, tokens - 1]``. Line numbers are 1-based and inclusive.

Python strings hold code points, so no chunker here can split a surrogate pair: where OpenClaw
counts UTF-16 code units, the cut is moved to the nearest code-point boundary (see
``_cut_units``).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "CHARS_PER_TOKEN",
    "Chunk",
    "ChunkerConfig",
    "chunk_headings",
    "chunk_lines",
    "chunk_markdown",
    "estimate_chars",
]

CHARS_PER_TOKEN = 4
MIN_MAX_CHARS = 32
HEADING_WINDOW_TOKENS = 200

_CJK_BMP_RE = re.compile("[\u2e80-\u9fff\ua000-\ua4ff\uac00-\ud7af\uf900-\ufaff]")
_CJK_ASTRAL_RE = re.compile("[\U00020000-\U0002fa1f]")
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of a Markdown file: its text, 1-based inclusive line range and sha256 hex hash.

    ``heading`` is the heading path (``"Project X > Decisions"``) for chunks made by
    ``chunk_headings``; the other chunkers leave it ``""``.
    """

    text: str
    start_line: int
    end_line: int
    hash: str
    heading: str = ""


def _sha256(text: str) -> str:
    # surrogatepass: a lone surrogate in the input must not crash indexing
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def estimate_chars(text: str) -> int:
    """OpenClaw's weighted length: ``Σ 4`` per CJK character + UTF-16 code units of the rest.

    CJK = U+2E80–9FFF, A000–A4FF, AC00–D7AF, F900–FAFF, 20000–2FA1F (an astral CJK character
    weighs 4, not 2 + 4). Other astral characters (emoji) weigh 2, BMP characters 1.
    Examples: ``"你好"`` → 8, ``"こんにちは"`` → 20, ``"hello 世界"`` → 14, ``"😀"`` → 2,
    ``""`` → 0.
    """
    if text.isascii():
        return len(text)
    n_astral = len(_ASTRAL_RE.findall(text))
    n_cjk_bmp = len(_CJK_BMP_RE.findall(text))
    n_cjk_astral = len(_CJK_ASTRAL_RE.findall(text))
    # a BMP CJK char already counts 1 in len(); an astral one counts 1 + 1 (n_astral)
    return len(text) + n_astral + 3 * n_cjk_bmp + 2 * n_cjk_astral


def _char_weight(ch: str) -> int:
    cp = ord(ch)
    if (
        0x2E80 <= cp <= 0x9FFF
        or 0xA000 <= cp <= 0xA4FF
        or 0xAC00 <= cp <= 0xD7AF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x2FA1F
    ):
        return 4
    return 2 if cp > 0xFFFF else 1


def _check_tokens(tokens: int) -> None:
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        raise TypeError(f"tokens must be an integer, got {tokens!r}")
    if tokens < 1:
        raise ValueError(f"tokens must be >= 1, got {tokens}")


def _sizes(tokens: int, overlap: int) -> tuple[int, int]:
    """``(maxChars, overlapChars)`` with the overlap clamped to ``[0, tokens - 1]``."""
    _check_tokens(tokens)
    if isinstance(overlap, bool) or not isinstance(overlap, int):
        raise TypeError(f"overlap must be an integer, got {overlap!r}")
    clamped = max(0, min(overlap, tokens - 1))
    return max(MIN_MAX_CHARS, CHARS_PER_TOKEN * tokens), CHARS_PER_TOKEN * clamped


# --------------------------------------------------------------------------- OpenClaw packer


def _cut_units(text: str, size: int, *, extend: bool) -> list[str]:
    """Cut ``text`` into slices of ``size`` UTF-16 code units.

    When a boundary would fall inside a surrogate pair, ``extend`` moves it after the pair
    (slice of ``size + 1`` units, OpenClaw's rule for its CJK re-cut); otherwise it moves it
    before the pair (``size - 1`` units), so the slice never outgrows ``size``.
    """
    if not _ASTRAL_RE.search(text):
        return [text[i : i + size] for i in range(0, len(text), size)]
    pieces: list[str] = []
    start = 0
    units = 0
    for idx, ch in enumerate(text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > size:  # only an astral char can straddle the boundary
            if extend or units == 0:
                pieces.append(text[start : idx + 1])
                start, units = idx + 1, 0
                continue
            pieces.append(text[start:idx])
            start, units = idx, 0
        units += width
        if units >= size:
            pieces.append(text[start : idx + 1])
            start, units = idx + 1, 0
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _openclaw_pieces(line: str, max_chars: int, tokens: int) -> list[str]:
    if not line:
        return [""]
    pieces: list[str] = []
    for coarse in _cut_units(line, max_chars, extend=False):
        if estimate_chars(coarse) > max_chars:
            pieces.extend(_cut_units(coarse, tokens, extend=True))
        else:
            pieces.append(coarse)
    return pieces


def _pack_chunk(entries: list[tuple[str, int, int]]) -> Chunk:
    text = "\n".join(piece for piece, _, _ in entries)
    return Chunk(text, entries[0][1], entries[-1][1], _sha256(text))


def chunk_markdown(
    text: str, tokens: int = 400, overlap: int = 80, *, bounded: bool = True
) -> list[Chunk]:
    """OpenClaw's chunker (spec §2): pack line pieces until ``maxChars``, carry an overlap.

    Lines come from ``text.split("\\n")`` (a trailing newline yields a final empty line). A
    line longer than ``maxChars`` UTF-16 units is cut into ``maxChars``-unit slices; a slice
    whose weight still exceeds ``maxChars`` (CJK) is re-cut into ``tokens``-unit pieces.
    Each piece costs ``estimate_chars(piece) + 1``. When ``size + cost > maxChars`` and the
    chunk is non-empty, the chunk is emitted (text = pieces joined by ``"\\n"``, lines = first
    and last piece's lines, hash = sha256) and trailing pieces are carried:

    - ``bounded=False`` (OpenClaw exact mode): walk back accumulating cost, the piece that
      makes it reach ``>= overlapChars`` included. A long carried piece is re-emitted, so
      pieces of 1500/200/200 chars give chunks of 1500, 1701, 1902 chars (known defect).
    - ``bounded=True`` (memlab default): walk back while the carried cost stays
      ``<= min(overlapChars, maxChars - cost(new piece))``; then every chunk weighs at most
      ``maxChars`` and every carried overlap at most ``overlapChars``.

    Edge cases: ``overlap`` is clamped to ``[0, tokens - 1]`` (0 carries nothing);
    ``tokens < 1`` raises ``ValueError`` (a non-integer ``TypeError``); empty or
    whitespace-only chunks are dropped, so
    ``""`` → ``[]``. Deviation from OpenClaw: a ``maxChars`` slice boundary that would split
    a surrogate pair is moved before the pair (OpenClaw splits it).
    """
    max_chars, overlap_chars = _sizes(tokens, overlap)
    chunks: list[Chunk] = []
    current: list[tuple[str, int, int]] = []  # (piece, line number, cost)
    size = 0
    for line_no, line in enumerate(text.split("\n"), start=1):
        for piece in _openclaw_pieces(line, max_chars, tokens):
            cost = estimate_chars(piece) + 1
            if current and size + cost > max_chars:
                chunks.append(_pack_chunk(current))
                if bounded:
                    budget = min(overlap_chars, max_chars - cost)
                    keep = len(current)
                    carried = 0
                    while keep > 0 and carried + current[keep - 1][2] <= budget:
                        keep -= 1
                        carried += current[keep][2]
                else:
                    keep = len(current)
                    carried = 0
                    while overlap_chars > 0 and keep > 0:
                        keep -= 1
                        carried += current[keep][2]
                        if carried >= overlap_chars:
                            break
                current = current[keep:]
                size = carried
            current.append((piece, line_no, cost))
            size += cost
    if current:
        chunks.append(_pack_chunk(current))
    return [chunk for chunk in chunks if chunk.text.strip()]


# --------------------------------------------------------------------------- heading-aware

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
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")


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
            w = _char_weight(ch)
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
    max_chars, overlap_chars = _sizes(tokens, overlap)
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
        if b < 0 and _LIST_RE.match(doc.lines[i]) and not _HR_RE.match(doc.lines[i]):
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
                        _sha256(chunk_text),
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


# --------------------------------------------------------------------------- one line each


def chunk_lines(text: str) -> list[Chunk]:
    """One chunk per non-blank line; a list item keeps its indented continuation lines.

    A list item is a line matching ``^\\s*([-*+]|\\d+[.)])\\s``; the non-blank lines right
    after it that start with whitespace join its chunk (a blank line ends it). Text = the
    source lines joined by ``"\\n"``, unchanged; there is no size cap. ``""`` → ``[]``.
    """
    lines = text.split("\n")
    chunks: list[Chunk] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i + 1
        if _LIST_RE.match(lines[i]):
            while j < len(lines) and lines[j][:1].isspace() and lines[j].strip():
                j += 1
        chunk_text = "\n".join(lines[i:j])
        chunks.append(Chunk(chunk_text, i + 1, j, _sha256(chunk_text)))
        i = j
    return chunks


# --------------------------------------------------------------------------- configuration

_KINDS = ("openclaw", "openclaw-exact", "heading", "line")


@dataclass(frozen=True)
class ChunkerConfig:
    """Which chunker the index uses, and its size parameters.

    ``kind``: ``"openclaw"`` (bounded overlap, memlab's default), ``"openclaw-exact"``
    (OpenClaw as pinned, overlap defect included), ``"heading"`` (``chunk_headings`` with
    its default window) or ``"line"`` (``chunk_lines``; sizes ignored). ``tokens >= 1`` and
    ``overlap >= 0`` are checked here; an overlap above ``tokens - 1`` is clamped by the
    chunkers, as in OpenClaw.
    """

    kind: str = "openclaw"
    tokens: int = 400
    overlap: int = 80

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {', '.join(_KINDS)}; got {self.kind!r}")
        for name, value, low in (("tokens", self.tokens, 1), ("overlap", self.overlap, 0)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")

    def chunk(self, text: str) -> list[Chunk]:
        """Chunk ``text`` with the configured chunker (see the class docstring)."""
        if self.kind == "line":
            return chunk_lines(text)
        if self.kind == "heading":
            return chunk_headings(text, self.tokens, self.overlap)
        return chunk_markdown(text, self.tokens, self.overlap, bounded=self.kind == "openclaw")

    def fingerprint(self) -> str:
        """Stable name of the chunking, e.g. ``"openclaw:v1:tokens=400:overlap=80"``.

        Equal for configurations that chunk identically by construction; ``"line:v1"``
        ignores the sizes; the heading chunker includes its window. Bump ``v1`` when a
        chunker's output changes, so indexes rebuild.
        """
        if self.kind == "line":
            return "line:v1"
        name = f"{self.kind}:v1:tokens={self.tokens}:overlap={self.overlap}"
        if self.kind == "heading":
            name += f":window={HEADING_WINDOW_TOKENS}"
        return name
