"""Chunkers: OpenClaw's line packer (exact and bounded) and one line per chunk.

The heading-aware chunker lives in ``memlab.headings`` (re-exported here).

Spec §2. Sizes are weighted characters (``estimate_chars``): 4 per token, a CJK character
weighs 4, anything else its UTF-16 code-unit count. A piece of text costs its weight + 1 (the
joining newline). ``maxChars = max(32, 4 * tokens)``; ``overlapChars = 4 * overlap`` with
``overlap`` clamped to ``[0, tokens - 1]``. Line numbers are 1-based and inclusive.

Python strings hold code points, so no chunker here can split a surrogate pair: where OpenClaw
counts UTF-16 code units, the cut is moved to the nearest code-point boundary (see
``_cut_units``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = [
    "CHARS_PER_TOKEN",
    "Chunk",
    "ChunkerConfig",
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


# --------------------------------------------------------------------------- one line each

_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")


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
            from memlab.headings import chunk_headings

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


def __getattr__(name: str) -> object:
    # chunk_headings is re-exported lazily: memlab.headings imports this module.
    if name == "chunk_headings":
        from memlab.headings import chunk_headings

        return chunk_headings
    raise AttributeError(f"module 'memlab.chunking' has no attribute {name!r}")
