"""Chunkers (spec §2): OpenClaw's line packer, one line per chunk, and the heading-aware one.

- ``common``: ``Chunk``, OpenClaw's weighted length ``estimate_chars``, ``chunk_sizes``
  (``maxChars = max(32, 4 * tokens)``, ``overlapChars = 4 * clamp(overlap, 0, tokens - 1)``),
  ``chunk_hash`` and the other pieces the chunkers share.
- ``openclaw``: ``chunk_markdown``, OpenClaw's packer (exact, or bounded: memlab's default).
- ``lines``: ``chunk_lines``, one chunk per non-blank line.
- ``headings``: ``chunk_headings``, cuts at QMD-scored Markdown breaks, records heading paths.
- ``config``: ``ChunkerConfig``, which chunker an index uses (``memlab.config.vocab.CHUNKERS``).
"""

from __future__ import annotations

from memlab.chunking.common import (
    CHARS_PER_TOKEN,
    HEADING_WINDOW_TOKENS,
    MIN_MAX_CHARS,
    Chunk,
    estimate_chars,
)
from memlab.chunking.config import ChunkerConfig
from memlab.chunking.headings import chunk_headings
from memlab.chunking.lines import chunk_lines
from memlab.chunking.openclaw import chunk_markdown

__all__ = [
    "CHARS_PER_TOKEN",
    "HEADING_WINDOW_TOKENS",
    "MIN_MAX_CHARS",
    "Chunk",
    "ChunkerConfig",
    "chunk_headings",
    "chunk_lines",
    "chunk_markdown",
    "estimate_chars",
]
