"""``ChunkerConfig``: which chunker an index uses, its sizes, and its fingerprint."""

from __future__ import annotations

from dataclasses import dataclass

from memlab.chunking.common import HEADING_WINDOW_TOKENS, Chunk
from memlab.chunking.headings import chunk_headings
from memlab.chunking.lines import chunk_lines
from memlab.chunking.openclaw import chunk_markdown
from memlab.config.vocab import CHUNKERS

__all__ = ["ChunkerConfig"]


@dataclass(frozen=True)
class ChunkerConfig:
    """Which chunker the index uses, and its size parameters.

    ``kind`` (one of ``memlab.config.vocab.CHUNKERS``): ``"openclaw"`` (bounded overlap, memlab's
    default), ``"openclaw-exact"`` (OpenClaw as pinned, overlap defect included),
    ``"heading"`` (``chunk_headings`` with its default window) or ``"line"``
    (``chunk_lines``; sizes ignored). ``tokens >= 1`` and ``overlap >= 0`` are checked here;
    an overlap above ``tokens - 1`` is clamped by the chunkers, as in OpenClaw.
    """

    kind: str = "openclaw"
    tokens: int = 400
    overlap: int = 80

    def __post_init__(self) -> None:
        if self.kind not in CHUNKERS:
            raise ValueError(f"kind must be one of {', '.join(CHUNKERS)}; got {self.kind!r}")
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

    @classmethod
    def from_fingerprint(cls, text: str) -> ChunkerConfig:
        """The configuration a `fingerprint` names (``"openclaw:v1:tokens=400:overlap=80"``,
        ``"line:v1"``, ``"heading:v1:tokens=900:overlap=135:window=200"``): the inverse of
        `fingerprint` for every chunker; anything else is a ``ValueError``."""
        kind, _, rest = str(text).partition(":v1")
        fields = dict(part.split("=", 1) for part in rest.split(":") if "=" in part)
        try:
            config = cls(kind, int(fields.get("tokens", 400)), int(fields.get("overlap", 80)))
        except ValueError as exc:
            raise ValueError(f"not a chunker fingerprint: {text!r} ({exc})") from None
        if config.fingerprint() != text:
            raise ValueError(f"not a chunker fingerprint: {text!r}")
        return config

    def as_dict(self) -> dict[str, object]:
        """``{kind, tokens, overlap}`` (``{kind}`` for the line chunker, which has no sizes):
        how a preset file names the chunker (``memlab.config.preset_file``)."""
        if self.kind == "line":
            return {"kind": "line"}
        return {"kind": self.kind, "tokens": self.tokens, "overlap": self.overlap}
