"""Pieces every chunker shares: the ``Chunk`` type, OpenClaw's weighted length, sizes, hashes.

Spec §2. Sizes are weighted characters (``estimate_chars``): 4 per token, a CJK character
weighs 4, anything else its UTF-16 code-unit count. A piece of text costs its weight + 1 (the
joining newline). ``maxChars = max(32, 4 * tokens)``; ``overlapChars = 4 * overlap`` with
``overlap`` clamped to ``[0, tokens - 1]`` (``chunk_sizes``). Line numbers are 1-based and
inclusive.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = [
    "ASTRAL_RE",
    "CHARS_PER_TOKEN",
    "HEADING_WINDOW_TOKENS",
    "LIST_ITEM_RE",
    "MIN_MAX_CHARS",
    "Chunk",
    "char_weight",
    "check_tokens",
    "chunk_hash",
    "chunk_sizes",
    "estimate_chars",
]

CHARS_PER_TOKEN = 4
MIN_MAX_CHARS = 32
# Default look-back window of the heading chunker, in tokens (part of its fingerprint).
HEADING_WINDOW_TOKENS = 200

_CJK_BMP_RE = re.compile("[\u2e80-\u9fff\ua000-\ua4ff\uac00-\ud7af\uf900-\ufaff]")
_CJK_ASTRAL_RE = re.compile("[\U00020000-\U0002fa1f]")
# Any character outside the BMP (two UTF-16 code units).
ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")
# A Markdown list item: ``-``, ``*``, ``+`` or ``1.``/``1)`` then whitespace or end of line.
LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")


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


def chunk_hash(text: str) -> str:
    """Hex sha256 of ``text`` encoded as UTF-8 (``surrogatepass``: a lone surrogate hashes
    instead of crashing indexing). ``""`` → the sha256 of no bytes."""
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
    n_astral = len(ASTRAL_RE.findall(text))
    n_cjk_bmp = len(_CJK_BMP_RE.findall(text))
    n_cjk_astral = len(_CJK_ASTRAL_RE.findall(text))
    # a BMP CJK char already counts 1 in len(); an astral one counts 1 + 1 (n_astral)
    return len(text) + n_astral + 3 * n_cjk_bmp + 2 * n_cjk_astral


def char_weight(ch: str) -> int:
    """Weight of one character as in ``estimate_chars``: 4 for CJK, 2 astral, else 1.

    ``sum(char_weight(c) for c in s) == estimate_chars(s)`` for every string ``s``.
    """
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


def check_tokens(tokens: int) -> None:
    """Raise ``TypeError`` unless ``tokens`` is an int (a bool is not), ``ValueError`` if < 1."""
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        raise TypeError(f"tokens must be an integer, got {tokens!r}")
    if tokens < 1:
        raise ValueError(f"tokens must be >= 1, got {tokens}")


def chunk_sizes(tokens: int, overlap: int) -> tuple[int, int]:
    """``(maxChars, overlapChars)`` = ``(max(32, 4 * tokens), 4 * clamp(overlap, 0, tokens - 1))``.

    ``tokens`` is checked by ``check_tokens``; a non-integer ``overlap`` raises ``TypeError``;
    a negative one clamps to 0.
    """
    check_tokens(tokens)
    if isinstance(overlap, bool) or not isinstance(overlap, int):
        raise TypeError(f"overlap must be an integer, got {overlap!r}")
    clamped = max(0, min(overlap, tokens - 1))
    return max(MIN_MAX_CHARS, CHARS_PER_TOKEN * tokens), CHARS_PER_TOKEN * clamped
