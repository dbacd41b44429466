"""QMD's retrieval without its models (tobi/qmd ``src/store.ts``, v2.8.3), as the
``qmd-like`` preset runs it.

- ``query``: QMD's lexical query syntax (``build_fts5_query``: prefix terms ANDed,
  ``"phrases"``, ``-negation``, hyphenated and dotted tokens, CJK runs) and its best chunk
  of a document (``best_chunk``: the most query words held; the first on a tie).
- ``documents``: QMD's keyword search over whole documents (``DocumentSearch``: an FTS5
  table ``documents(filepath, title, body)`` with ``porter unicode61`` and column weights
  1.5 / 4.0 / 1.0; ``document_title``), its documents rebuilt from an index's chunks.

The keyword leg ``keyword_mode="qmd"`` (``memlab.retrieval.candidates``) and the ``qmd_documents``
stage (``memlab.stages.documents``: best chunk per document, RRF with the original
query's lists weighted 2 and the top-rank bonus) run them; docs/presets.md says where
``qmd-like`` still differs from QMD.
"""

from __future__ import annotations

from memlab.qmd.documents import DocumentSearch, document_title, documents_of
from memlab.qmd.query import QMD_LIST_LIMIT, best_chunk, build_fts5_query, query_words

__all__ = [
    "QMD_LIST_LIMIT",
    "DocumentSearch",
    "best_chunk",
    "build_fts5_query",
    "document_title",
    "documents_of",
    "query_words",
]
