"""A transcript's line spans placed in the workspace as it is now: anchored by text.

A transcript names lines of a memory file as they were when the agent searched (a hit's
``startLine``–``endLine``, a ``memory_get``'s ``from``, a ``Source: path#L5-L7``
citation), with the text the tool returned for them. The file may have changed since: the
span is placed where that text is now, whole or, when a few of its lines changed, where
most of it is (:func:`anchor`), or dropped when it is gone.

Lines are compared normalised (:func:`norm_line`): the release's annotation comments
removed (its snippets strip them) and whitespace collapsed. The last shown line may be a
prefix of the file's line when the tool cut the text (a snippet is the first 700
characters of its chunk).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from memlab.store.asof import unit_time

__all__ = ["WorkspaceFiles", "anchor", "norm_line"]

# The release's annotation carriers (<!-- importance: N -->, trigger, project), which its
# snippets strip (curated-annotations.ts stripMemoryAnnotationCarriers).
_ANNOTATION = re.compile(r"<!--\s*(?:trigger|importance|project)\s*:.*?-->", re.IGNORECASE)


def norm_line(line: str) -> str:
    """``line`` as anchoring compares it: annotation comments removed, runs of whitespace
    made one space, ends stripped (``"  a\\tb <!-- importance: 8 -->"`` → ``"a b"``)."""
    if "<!--" in line:
        line = _ANNOTATION.sub("", line)
    return " ".join(line.split())


def anchor(
    lines: Sequence[str],
    start: int,
    shown: Sequence[str],
    *,
    prefix_last: bool = False,
    index: Mapping[str, Sequence[int]] | None = None,
) -> int | None:
    """The 1-based line where ``shown`` (normalised lines the tool returned as lines
    ``start``, ``start + 1``, …) is now in ``lines`` (the file's normalised lines); None
    when it is not there any more.

    1. Whole: every shown line equals the file's line at the same offset (the last may be
       a prefix of it with ``prefix_last``: a cut text) — at ``start`` itself when it
       still fits there, else at the fitting position nearest to ``start`` (the earlier
       on a tie).
    2. Mostly: else the offset at which more than half of the non-empty shown lines are
       found (each line voting for every place it occurs; the offset with most votes,
       nearest to ``start`` on a tie) — a few lines of a chunk edited, inserted or deleted
       since. One line shown has no majority but itself.

    Blank shown lines never vote; ``shown`` without a non-empty line matches nothing.
    ``index`` (line → 0-based positions, :meth:`WorkspaceFiles.index`) speeds the search.
    """
    k = len(shown)
    filled = [i for i, s in enumerate(shown) if s]
    if not filled:
        return None
    n = len(lines)

    def same(p: int, i: int) -> bool:
        if i == k - 1 and prefix_last:
            return lines[p].startswith(shown[i])
        return lines[p] == shown[i]

    def fits(p: int) -> bool:
        return p >= 0 and p + k <= n and all(same(p + i, i) for i in range(k))

    def places(i: int) -> Sequence[int]:
        if i == k - 1 and prefix_last:
            return [p for p in range(n) if lines[p].startswith(shown[i])]
        if index is not None:
            return index.get(shown[i], ())
        return [p for p in range(n) if lines[p] == shown[i]]

    def nearest(offsets: Sequence[int]) -> int:
        return min(offsets, key=lambda p: (abs(p - (start - 1)), p))

    if fits(start - 1):
        return start
    first = filled[0]
    whole = [q - first for q in places(first) if fits(q - first)]
    if whole:
        return nearest(whole) + 1
    votes: dict[int, int] = {}
    for i in filled:
        for q in places(i):
            votes[q - i] = votes.get(q - i, 0) + 1
    if not votes:
        return None
    top = max(votes.values())
    if 2 * top <= len(filled):
        return None
    return nearest([o for o, v in votes.items() if v == top]) + 1


class WorkspaceFiles:
    """The memory files of a workspace as harvest places spans in them: every file either
    memory-file rule finds (``memlab.store.filerules.discover_files`` under each of
    ``vocab.MEMORY_FILE_RULES``, no extra paths), their lines read once."""

    def __init__(self, workspace: Path) -> None:
        from memlab.config.vocab import MEMORY_FILE_RULES
        from memlab.store.filerules import discover_files

        self.root = Path(workspace).resolve()
        self.files: dict[str, Path] = {}
        for rule in MEMORY_FILE_RULES:
            for f in discover_files(rule, self.root, ()):
                if not f.path.startswith("../"):
                    self.files.setdefault(f.path, f.abspath)
        self._lines: dict[str, list[str] | None] = {}
        self._numbered: dict[str, int] = {}
        self._norm: dict[str, list[str]] = {}
        self._index: dict[str, dict[str, list[int]]] = {}
        self.dated = sorted(
            (t, p) for p in self.files if not math.isnan(t := unit_time(p))
        )  # (unit time, path) of the dated daily logs

    def relative(self, raw: str) -> str:
        """A path a transcript names, as a workspace-relative ``/`` path: ``\\`` read as
        ``/``, ``./`` dropped, an absolute path inside the workspace made relative (one
        outside it is returned as given)."""
        p = raw.strip().replace("\\", "/")
        if p.startswith("/"):
            try:
                return PurePosixPath(Path(p).resolve().relative_to(self.root)).as_posix()
            except (ValueError, OSError):
                return p
        parts = [s for s in p.split("/") if s not in ("", ".")]
        return "/".join(parts)

    def lines(self, path: str) -> list[str] | None:
        """The file's lines (its text split on ``\\n``, without the empty piece after a
        final newline), or None when ``path`` is no memory file of the workspace or cannot
        be read as one."""
        if path not in self._lines:
            from memlab.files.workspace import MemoryFileError, read_memory_file

            abspath = self.files.get(path)
            text = None
            if abspath is not None:
                try:
                    text = read_memory_file(abspath, path, root=self.root).text
                except MemoryFileError:
                    text = None
            if text is None:
                self._lines[path] = None
            else:
                split = text.split("\n")
                self._numbered[path] = len(split)
                if len(split) > 1 and split[-1] == "":
                    split.pop()
                self._lines[path] = split
        return self._lines[path]

    def numbered(self, path: str) -> int | None:
        """How many lines OpenClaw numbers in the file (its text split on ``\\n``: a final
        newline opens an empty last line, which a chunk's range may end on), or None as
        :meth:`lines`."""
        return None if self.lines(path) is None else self._numbered[path]

    def normalised(self, path: str) -> list[str] | None:
        """The file's lines through :func:`norm_line` (None as :meth:`lines`)."""
        if path not in self._norm:
            raw = self.lines(path)
            if raw is None:
                return None
            self._norm[path] = [norm_line(x) for x in raw]
        return self._norm[path]

    def index(self, path: str) -> dict[str, list[int]]:
        """Normalised line → its 0-based positions in the file (built once)."""
        if path not in self._index:
            idx: dict[str, list[int]] = {}
            for i, line in enumerate(self.normalised(path) or []):
                idx.setdefault(line, []).append(i)
            self._index[path] = idx
        return self._index[path]

    def place(
        self, path: str, start: int, end: int, shown: Sequence[str], *, prefix_last: bool
    ) -> tuple[int, int] | None:
        """Lines ``start``–``end`` of ``path`` as the tool showed them (``shown``, raw lines
        from ``start`` on), placed in the file as it is now: ``(start', end')`` with the
        same length (cut at the file's end), or None when the shown text is gone."""
        raw = self.lines(path)
        if raw is None:
            return None
        # the common case first: the very text still at the very lines (no normalising)
        k = len(shown)
        here = raw[start - 1 : start - 1 + k] if start >= 1 else []
        if k and len(here) == k and here[:-1] == list(shown[:-1]) and any(shown):
            last = here[-1].startswith(shown[-1]) if prefix_last else here[-1] == shown[-1]
            if last and any(s.strip() for s in shown):
                return start, min(end, len(raw))
        lines = self.normalised(path)
        assert lines is not None
        at = anchor(
            lines,
            start,
            [norm_line(s) for s in shown],
            prefix_last=prefix_last,
            index=self.index(path),
        )
        if at is None:
            return None
        return at, min(at + (end - start), len(lines))

    def same_day_log(self, cutoff: float) -> bool:
        """Whether a daily log of ``cutoff``'s own UTC day is visible as of ``cutoff``
        (its unit time is before it, ``memlab.store.asof``): such a file may hold lines
        written later that day, after the question (often the agent's own summary)."""
        if math.isnan(cutoff):
            return False
        day = math.floor(cutoff / 86400.0)
        return any(t < cutoff and math.floor(t / 86400.0) == day for t, _ in self.dated)
