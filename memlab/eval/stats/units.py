"""The units a dataset's statistics read: every non-blank line of every memory file.

One ``GroupUnits`` per workspace group: the lines in discovery order (OpenClaw 2026-04's
rule, ``memlab.files.workspace.discover_memory_files``: ``MEMORY.md``, then ``memory/**``), each
with its file, line number, text, stemmed content terms (``lexicon.content_words``) and
whether it is a transcript line (``memlab.stages.shape.transcript_line``: a speaker label
that does not start a list item). Headings are lines too: a file-level evidence span (a
day's log, a session) holds its title. Each file carries its time
(``memlab.store.asof.unit_time``; NaN for an undated file), which the time cut-off of a
question reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memlab.datasets.synthetic.lexicon import content_words
from memlab.files.workspace import MemoryFileError, decode_memory_text, discover_memory_files
from memlab.stages.shape import transcript_line
from memlab.store.asof import unit_time

__all__ = ["GroupUnits", "dataset_units", "group_units", "word_tokens"]

_TOKEN = re.compile(r"\w+")


def word_tokens(text: str) -> int:
    """Tokens of ``text`` as the statistics count them: runs of word characters (``\\w+``,
    any script; a CJK run is one token). ``""`` → 0."""
    return len(_TOKEN.findall(text))


@dataclass
class GroupUnits:
    """The lines of one workspace (parallel lists / arrays, one entry per line), its files
    and term postings (term → ascending line indices; file term → file indices)."""

    files: list[str]
    file_times: np.ndarray
    file_of: np.ndarray
    lines: np.ndarray
    texts: list[str]
    terms: list[frozenset[str]]
    transcript: np.ndarray
    postings: dict[str, np.ndarray] = field(default_factory=dict)
    file_postings: dict[str, np.ndarray] = field(default_factory=dict)
    where: dict[str, dict[int, int]] = field(default_factory=dict)  # path → line → index

    def __len__(self) -> int:
        return len(self.texts)

    def in_spans(self, spans: Any) -> np.ndarray:
        """bool [units]: the lines inside any of ``spans`` (rows with ``path``,
        ``start_line``, ``end_line``; lines 1-based, inclusive)."""
        out = np.zeros(len(self), dtype=bool)
        for path, start, end in spans:
            at = self.where.get(str(path), {})
            for line in range(int(start), int(end) + 1):
                i = at.get(line)
                if i is not None:
                    out[i] = True
        return out


def group_units(workspace: str | Path) -> GroupUnits:
    """The ``GroupUnits`` of one workspace folder: its files decoded and cut into lines as
    the index does (``decode_memory_text``, lines split on ``\\n``), so unit line numbers
    are the evidence's; a file the index refuses is read as UTF-8 with invalid bytes
    replaced (a statistic never stops at one bad byte)."""
    files, times, file_of, lines, texts, terms, talk = [], [], [], [], [], [], []
    where: dict[str, dict[int, int]] = {}
    for f in discover_memory_files(workspace):
        fi = len(files)
        files.append(f.path)
        times.append(unit_time(f.path))
        at = where.setdefault(f.path, {})
        data = Path(f.abspath).read_bytes()
        try:
            text = decode_memory_text(data, f.path)  # the lines as the index numbers them
        except MemoryFileError:
            text = data.decode("utf-8", errors="replace")
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            at[n] = len(texts)
            file_of.append(fi)
            lines.append(n)
            texts.append(line)
            terms.append(frozenset(content_words(line, stems=True)))
            talk.append(transcript_line(line))
    g = GroupUnits(
        files=files,
        file_times=np.asarray(times, dtype=np.float64),
        file_of=np.asarray(file_of, dtype=np.int64),
        lines=np.asarray(lines, dtype=np.int64),
        texts=texts,
        terms=terms,
        transcript=np.asarray(talk, dtype=bool),
        where=where,
    )
    g.postings = _postings(terms)
    per_file: list[set[str]] = [set() for _ in files]
    for fi, t in zip(g.file_of.tolist(), terms, strict=True):
        per_file[fi] |= t
    g.file_postings = _postings(per_file)
    return g


def _postings(term_sets: list[Any]) -> dict[str, np.ndarray]:
    acc: dict[str, list[int]] = {}
    for i, ts in enumerate(term_sets):
        for t in ts:
            acc.setdefault(t, []).append(i)
    return {t: np.asarray(ix, dtype=np.int64) for t, ix in acc.items()}


def dataset_units(ds: Any) -> dict[str, GroupUnits]:
    """``group_units`` of every workspace of ``ds`` (a ``Dataset``), by group name."""
    return {g: group_units(ws) for g, ws in ds.workspaces.items()}
