"""OpenClaw's line packer (spec §2), in OpenClaw's exact mode and memlab's bounded mode.

Sizes as in ``memlab.chunking.common``. Python strings hold code points, so no chunker here
can split a surrogate pair: where OpenClaw counts UTF-16 code units, the cut is moved to the
nearest code-point boundary (see ``_cut_units``).
"""

from __future__ import annotations

from memlab.chunking.common import ASTRAL_RE, Chunk, chunk_hash, chunk_sizes, estimate_chars

__all__ = ["chunk_markdown"]


def _cut_units(text: str, size: int, *, extend: bool) -> list[str]:
    """Cut ``text`` into slices of ``size`` UTF-16 code units.

    When a boundary would fall inside a surrogate pair, ``extend`` moves it after the pair
    (slice of ``size + 1`` units, OpenClaw's rule for its CJK re-cut); otherwise it moves it
    before the pair (``size - 1`` units), so the slice never outgrows ``size``.
    """
    if not ASTRAL_RE.search(text):
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
    return Chunk(text, entries[0][1], entries[-1][1], chunk_hash(text))


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
    max_chars, overlap_chars = chunk_sizes(tokens, overlap)
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
