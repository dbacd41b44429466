"""QMD's lexical query syntax and its best chunk of a document (tobi/qmd ``src/store.ts``:
``buildFTS5Query``, ``sanitizeFTS5Term``, ``hybridQuery`` step 5), in Python.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memlab.retrieval.textquery import utf16_len

__all__ = [
    "CANDIDATE_LIMIT",
    "QMD_LIST_LIMIT",
    "VECTOR_CHUNK_LIMIT",
    "best_chunk",
    "build_fts5_query",
    "normalize_cjk",
    "query_words",
]

# QMD's hybrid query: 20 documents per list (``searchFTS(query, 20)``, ``searchVec(.., 20)``),
# the vector list drawn from the nearest ``3 × 20`` chunks, the fused list cut at 40
# (``RERANK_CANDIDATE_LIMIT``) before the reranker (or, without it, before ``limit``).
QMD_LIST_LIMIT = 20
VECTOR_CHUNK_LIMIT = 3 * QMD_LIST_LIMIT
CANDIDATE_LIMIT = 40

# QMD's CJK_RUN_PATTERN: runs of Han, Hiragana, Katakana and Hangul, spaced out per
# character before FTS (``normalizeCjkForFTS``) so each character is a token.
_CJK_RUN = re.compile(
    r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    r"\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\U00020000-\U0002fa1f]+"
)
_HYPHENATED = re.compile(r"^[^\W_](?:[^\W_]|['-])*-[^\W_](?:[^\W_]|['-])*$")
_PART = re.compile(r"^\w+$")


def normalize_cjk(text: str) -> str:
    """QMD's ``normalizeCjkForFTS``: each CJK run becomes its characters separated by
    spaces, with a space on each side (``"找到会议"`` → ``" 找 到 会 议 "``)."""
    return _CJK_RUN.sub(lambda m: " " + " ".join(m.group(0)) + " ", text)


def _term(term: str) -> str:
    # sanitizeFTS5Term: keep letters, digits, ' and _; lower case.
    return re.sub(r"[^\w']", "", term).lower()


def _dotted(token: str) -> bool:
    parts = token.split(".")
    return len(parts) >= 2 and all(p and _PART.match(p) for p in parts)


def _phrase(phrase: str) -> str:
    # sanitizeFTS5Phrase: CJK spaced out, dotted tokens split into their parts.
    out: list[str] = []
    for t in normalize_cjk(phrase).split():
        if _dotted(t):
            out += [p for p in (_term(x) for x in t.split(".")) if p]
        elif s := _term(t):
            out.append(s)
    return " ".join(out)


def build_fts5_query(query: str) -> str | None:
    """QMD's FTS5 MATCH string of a query (``buildFTS5Query``): every positive term ANDed,
    each negative one appended as ``NOT``; None when nothing positive remains.

    Terms, split on white space: ``"a phrase"`` → ``"a phrase"`` (exact); a hyphenated
    token (``DEC-0054``, ``multi-agent``) → the phrase of its parts (``"dec 0054"``); a
    dotted token (``2026.4.10``) → each part a prefix term (``"2026"* AND "4"* AND
    "10"*``); a token holding CJK → its characters as a phrase; any other → a prefix
    term ``"term"*`` of its letters, digits, ``'`` and ``_``, lower-cased. A leading
    ``-`` negates. ``how do I deploy`` → ``"how"* AND "do"* AND "i"* AND "deploy"*``.
    """
    positive: list[str] = []
    negative: list[str] = []
    s = query.strip()
    i = 0
    while i < len(s):
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            break
        negated = s[i] == "-"
        if negated:
            i += 1
        found: list[str] = []
        if i < len(s) and s[i] == '"':
            end = s.find('"', i + 1)
            end = len(s) if end < 0 else end
            phrase = s[i + 1 : end].strip()
            i = end + 1
            if phrase and (p := _phrase(phrase)):
                found = [f'"{p}"']
        else:
            start = i
            while i < len(s) and not s[i].isspace() and s[i] != '"':
                i += 1
            token = s[start:i]
            if _HYPHENATED.match(token):
                p = " ".join(x for x in (_term(t) for t in token.split("-")) if x)
                found = [f'"{p}"'] if p else []
            elif _dotted(token):
                parts = [f'"{x}"*' for x in (_term(t) for t in token.split(".")) if x]
                found = [f"({' AND '.join(parts)})"] if negated and parts else parts
            elif _CJK_RUN.search(token):
                p = _phrase(token)
                found = [f'"{p}"'] if p else []
            elif t := _term(token):
                found = [f'"{t}"*']
        (negative if negated else positive).extend(found)
    if not positive:
        return None
    out = " AND ".join(positive)
    for neg in negative:
        out = f"{out} NOT {neg}"
    return out


def query_words(query: str) -> list[str]:
    """The words QMD matches chunks by: the query lower-cased, split on white space, the
    words longer than 2 UTF-16 units kept (``hybridQuery`` step 5)."""
    return [t for t in query.lower().split() if utf16_len(t) > 2]


def best_chunk(query: str, texts: Sequence[str]) -> int:
    """QMD's chunk of a document to show: the index of the text holding the most of
    `query_words` (each counted once, as a substring of the lower-cased text), the first
    on a tie; 0 when none holds any (and for an empty ``texts``)."""
    words = query_words(query)
    best, best_score = 0, -1
    for i, text in enumerate(texts):
        low = text.lower()
        score = sum(w in low for w in words)
        if score > best_score:
            best, best_score = i, score
    return best
