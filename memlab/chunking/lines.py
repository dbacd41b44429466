"""One chunk per non-blank line (a list item keeps its indented continuation lines)."""

from __future__ import annotations

from memlab.chunking.common import LIST_ITEM_RE, Chunk, chunk_hash

__all__ = ["chunk_lines"]


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
        if LIST_ITEM_RE.match(lines[i]):
            while j < len(lines) and lines[j][:1].isspace() and lines[j].strip():
                j += 1
        chunk_text = "\n".join(lines[i:j])
        chunks.append(Chunk(chunk_text, i + 1, j, chunk_hash(chunk_text)))
        i = j
    return chunks
