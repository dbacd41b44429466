"""QMD's keyword search over whole documents (tobi/qmd ``src/store.ts``: ``documents_fts``,
``searchFTS``, ``extractTitle``), over the memory files of an index.

QMD indexes each file whole in an FTS5 table ``documents_fts(filepath, title, body)``
tokenized ``porter unicode61`` (CJK runs spaced out per character), and ranks a query's
matches by ``bm25(documents_fts, 1.5, 4.0, 1.0)`` (path, title, body), best first, the
score shown being ``|bm25| / (1 + |bm25|)``. `DocumentSearch` is that table, in memory,
built from the chunks of a memlab index: a file's text is rebuilt from its chunks' line
ranges (line-based chunkers cover every line, so the text is the file's own).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memlab.qmd.query import normalize_cjk

__all__ = ["DocumentSearch", "document_title", "documents_of"]

# QMD's column weights of bm25(): filepath, title, body.
BM25_WEIGHTS = (1.5, 4.0, 1.0)
_TITLE = re.compile(r"^##?\s+(.+)$", re.MULTILINE)
_H2 = re.compile(r"^##\s+(.+)$", re.MULTILINE)


def document_title(text: str, path: str) -> str:
    """QMD's ``extractTitle`` of a Markdown file: its first ``#`` or ``##`` heading (when
    that is ``Notes`` or ``📝 Notes``, the first ``##`` heading instead), else the file
    name without its extension."""
    m = _TITLE.search(text)
    if m:
        title = m.group(1).strip()
        if title in ("📝 Notes", "Notes"):
            h2 = _H2.search(text)
            if h2:
                return h2.group(1).strip()
        return title
    name = path.rsplit("/", 1)[-1]
    return re.sub(r"\.[^.]+$", "", name) or name


def documents_of(
    paths: np.ndarray,
    start_lines: np.ndarray,
    rows: np.ndarray,
    texts: Callable[[np.ndarray], list[str]],
) -> dict[str, tuple[str, np.ndarray, list[str]]]:
    """{path: (text, positions, chunk texts)} of the files holding the chunks at ``rows``:
    each file's text rebuilt line by line from its chunks (``texts(positions)`` gives
    their texts; overlapping chunks agree on a shared line), lines missing from every
    chunk empty; positions and chunk texts in line order."""
    order = np.lexsort((start_lines[rows], paths[rows]))
    rows = rows[order]
    out: dict[str, tuple[str, np.ndarray, list[str]]] = {}
    if rows.size == 0:
        return out
    chunk_texts = texts(rows)
    by_path: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_path.setdefault(str(paths[r]), []).append(i)
    for path, idx in by_path.items():
        lines: dict[int, str] = {}
        for i in idx:
            first = int(start_lines[rows[i]])
            for j, line in enumerate(chunk_texts[i].split("\n")):
                lines.setdefault(first + j, line)
        last = max(lines)
        text = "\n".join(lines.get(n, "") for n in range(1, last + 1))
        out[path] = (text, rows[idx], [chunk_texts[i] for i in idx])
    return out


@dataclass
class DocumentSearch:
    """An in-memory FTS5 table of whole documents, QMD's columns and tokenizer.

    ``paths`` in the table's order; ``search(fts_query, limit)`` → [(path, bm25)], best
    first (bm25 ascending, as FTS5 gives it: negative, lower is better)."""

    conn: sqlite3.Connection
    paths: list[str]

    @classmethod
    def build(cls, docs: dict[str, str]) -> DocumentSearch:
        """The table of ``docs`` ({path: text}): filepath, title (`document_title`) and
        body of each, CJK spaced out as QMD's ``normalizeCjkForFTS`` does."""
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(
            "CREATE VIRTUAL TABLE documents_fts USING fts5("
            "filepath, title, body, tokenize='porter unicode61')"
        )
        paths = list(docs)
        conn.executemany(
            "INSERT INTO documents_fts(rowid, filepath, title, body) VALUES (?, ?, ?, ?)",
            [
                (i, normalize_cjk(p), normalize_cjk(document_title(t, p)), normalize_cjk(t))
                for i, (p, t) in enumerate(docs.items())
            ],
        )
        return cls(conn, paths)

    def search(self, fts_query: str | None, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best documents for ``fts_query`` (`memlab.qmd.build_fts5_query`):
        [(path, bm25)] by ``bm25(documents_fts, 1.5, 4.0, 1.0)`` ascending; [] for no
        query or a query FTS5 cannot parse (QMD's search then finds nothing either)."""
        if not fts_query or not self.paths:
            return []
        w = ", ".join(str(x) for x in BM25_WEIGHTS)
        try:
            rows = self.conn.execute(
                f"SELECT rowid, bm25(documents_fts, {w}) AS s FROM documents_fts"
                " WHERE documents_fts MATCH ? ORDER BY s ASC, rowid ASC LIMIT ?",
                (fts_query, int(limit)),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        return [(self.paths[r], float(s)) for r, s in rows]
