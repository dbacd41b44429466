"""Why a corpus of ``memory_search`` has nothing to search in an index, said the same way
by the tool's ``warning`` (``memlab.tools.search_corpus``) and ``memlab search``'s "no
results" line: `empty_corpus_note`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlab.store import MemoryIndex

__all__ = ["empty_corpus_note"]


def empty_corpus_note(index: MemoryIndex, corpus: str | None) -> str | None:
    """Why ``corpus`` has nothing to search in ``index``, naming where memlab looked; None
    when it may have something. ``sessions``: the index does not take transcripts (its
    sources), or takes them but its transcript folder holds no ``*.jsonl``; ``memory``: the
    index does not cover memory files."""
    if corpus not in ("memory", "sessions"):
        return None
    if corpus not in index.sources:
        note = f"this index does not cover {corpus} (sources: {', '.join(index.sources)})"
        if corpus == "sessions":
            note += (
                "; no session transcripts are indexed: a config with sources"
                " [memory, sessions] (--config) indexes the transcripts of"
                f" {index.sessions_dir} (*.jsonl)"
            )
        return note
    if corpus == "sessions":
        folder = index.sessions_dir
        if not folder.is_dir() or not any(folder.glob("*.jsonl")):
            where = "does not exist" if not folder.is_dir() else "holds no *.jsonl transcript"
            return f"no session transcripts: memlab looked in {folder}, which {where}"
    return None
