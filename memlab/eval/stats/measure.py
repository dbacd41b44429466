"""Each question's statistics: term overlap with its evidence and with the best other unit,
embedding similarities, evidence span length, query form (formulas: ``memlab.eval.stats``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from typing import Any

import numpy as np
import pandas as pd

from memlab.datasets.synthetic.lexicon import content_words
from memlab.datasets.synthetic.querymix_wording import MONTHS
from memlab.eval.stats.units import GroupUnits, word_tokens
from memlab.retrieval.textquery import query_kind
from memlab.store.asof import visible_rows

__all__ = [
    "QUERY_FORMS",
    "STAT_COLUMNS",
    "has_cjk",
    "measure_queries",
    "query_form",
    "query_terms",
    "term_overlap",
]

# The most words a ``keyword`` query form has (``query_form``).
KEYWORD_WORDS = 4
# The forms a query takes, in the order they are tested (``query_form``).
QUERY_FORMS = ("cjk", "dated", "identifier", "multi", "keyword", "question")
STAT_COLUMNS = (
    "qid",
    "group",
    "category",
    "form",
    "terms",
    "excluded",
    "term_overlap",
    "distractor_overlap",
    "sim_evidence",
    "sim_distractor",
    "spans",
    "span_lines",
    "span_tokens",
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# An ISO date, or a month's name and a day (the names the synthetic dated questions use).
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:" + "|".join(MONTHS) + r")\s+\d{1,2}\b", re.IGNORECASE
)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese, Japanese or Korean character (CJK ideographs, kana,
    Hangul): such a query has no terms the ``[a-z0-9]`` rule can see."""
    return _CJK.search(text) is not None


def query_terms(query: str) -> frozenset[str]:
    """The content terms of a query: ``lexicon.content_words(query, stems=True)``, the one
    rule (lower-cased ``[a-z0-9]+`` runs, stop words dropped, ``lexicon.stem``)."""
    return frozenset(content_words(query, stems=True))


def term_overlap(terms: Collection[str], units: Iterable[Collection[str]]) -> float:
    """The share of ``terms`` found in the union of ``units``' terms:
    ``|T ∩ ⋃ U_i| / |T|``; NaN when ``terms`` is empty (nothing to find). In [0, 1]; 1 when
    every term is in some unit; independent of the order of terms and units."""
    t = set(terms)
    if not t:
        return math.nan
    found: set[str] = set()
    for u in units:
        found |= t.intersection(u)
    return len(found) / len(t)


def query_form(query: str, spans: int) -> str:
    """What a query looks like, the first that holds of: ``cjk`` (``has_cjk``), ``dated`` (an
    ISO date, or a month name and a day), ``identifier`` (``memlab.retrieval.textquery.query_kind``:
    it names one), ``multi`` (its evidence is two spans or more), ``keyword``
    (``query_kind``'s ``keywords`` — no question mark, no opening question or request word —
    of at most ``KEYWORD_WORDS`` words: a longer such phrase is a sentence, asked in words)
    or ``question``. The kinds an agent's query takes are ``query_kind``'s rule; the forms
    add what a data set's questions show besides (script, dates, several spans, length).
    The synthetic generator's fit (``synth --like``) matches these shares."""
    if has_cjk(query):
        return "cjk"
    if _DATE.search(query):
        return "dated"
    kind = query_kind(query)
    if kind == "identifier":
        return "identifier"
    if spans >= 2:
        return "multi"
    short = len(query.split()) <= KEYWORD_WORDS
    return "keyword" if kind == "keywords" and short else "question"


def _best(counts: np.ndarray, allowed: np.ndarray, n_terms: int) -> float:
    if not allowed.any():
        return math.nan
    return float(counts[allowed].max()) / n_terms


def measure_queries(
    ds: Any, units: dict[str, GroupUnits], vectors: Any = None, level: str = "unit"
) -> pd.DataFrame:
    """One row per question of ``ds`` (columns ``STAT_COLUMNS``; formulas in
    ``memlab.eval.stats``). ``vectors``: None (no embedding columns: NaN), or a callable
    ``(group, texts of its units, queries) -> (unit vectors [U, d], query vectors [Q, d])``,
    L2-normalised. ``level``: ``"unit"`` (a distractor is a line) or ``"file"`` (a file
    holding no evidence line)."""
    ev = {q: e for q, e in ds.evidence.groupby("qid", sort=False)}
    rows = []
    for group, qs in ds.queries.groupby("group", sort=False):
        g = units[group]
        qv = uv = None
        if vectors is not None:
            uv, qv = vectors(group, g.texts, qs["query"].tolist())
        cut = qs["cutoff"] if "cutoff" in qs.columns else pd.Series(math.nan, index=qs.index)
        for j, (q, c) in enumerate(zip(qs.itertuples(index=False), cut, strict=True)):
            e = ev.get(q.qid)
            spans = (
                []
                if e is None
                else list(zip(e["path"], e["start_line"], e["end_line"], strict=True))
            )
            rows.append(_row(q, g, spans, float(c), level, uv, None if qv is None else qv[j]))
    return pd.DataFrame(rows, columns=list(STAT_COLUMNS))


def _row(
    q: Any,
    g: GroupUnits,
    spans: list[tuple[str, int, int]],
    cutoff: float,
    level: str,
    uv: np.ndarray | None,
    qv: np.ndarray | None,
) -> dict[str, Any]:
    terms = query_terms(q.query)
    inside = g.in_spans(spans)
    row: dict[str, Any] = {
        "qid": q.qid,
        "group": q.group,
        "category": q.category,
        "form": query_form(q.query, len(spans)),
        "terms": len(terms),
        "excluded": "",
        "spans": len(spans),
        **_span_lengths(g, spans),
    }
    nan = math.nan
    row.update(term_overlap=nan, distractor_overlap=nan, sim_evidence=nan, sim_distractor=nan)
    if not inside.any():
        row["excluded"] = "no_evidence"
        return row
    visible = visible_rows(g.file_times[g.file_of], cutoff)
    if level == "file":  # a distractor is a whole file holding no evidence line
        ev_files = np.zeros(len(g.files), dtype=bool)
        ev_files[g.file_of[inside]] = True
        other = visible & ~ev_files[g.file_of]
    else:
        other = visible & ~inside
    if uv is not None and qv is not None:
        sims = uv @ qv
        row["sim_evidence"] = float(sims[inside].max())
        row["sim_distractor"] = float(sims[other].max()) if other.any() else nan
    if has_cjk(q.query):
        row["excluded"] = "cjk"
        return row
    if not terms:
        row["excluded"] = "no_terms"
        return row
    row["term_overlap"] = term_overlap(terms, (g.terms[i] for i in np.flatnonzero(inside)))
    if level == "file":
        counts = np.zeros(len(g.files))
        for t in terms:
            np.add.at(counts, g.file_postings.get(t, _EMPTY), 1)
        allowed = np.zeros(len(g.files), dtype=bool)
        allowed[g.file_of[other]] = True
    else:
        counts = np.zeros(len(g))
        for t in terms:
            np.add.at(counts, g.postings.get(t, _EMPTY), 1)
        allowed = other
    row["distractor_overlap"] = _best(counts, allowed, len(terms))
    return row


_EMPTY = np.zeros(0, dtype=np.int64)


def _span_lengths(g: GroupUnits, spans: list[tuple[str, int, int]]) -> dict[str, float]:
    """Mean over a question's spans of their lines (end − start + 1) and of their word
    tokens (``word_tokens`` of the non-blank lines inside); NaN without spans."""
    if not spans:
        return {"span_lines": math.nan, "span_tokens": math.nan}
    lines, tokens = [], []
    for path, start, end in spans:
        lines.append(int(end) - int(start) + 1)
        at = g.where.get(str(path), {})
        tokens.append(
            sum(word_tokens(g.texts[at[n]]) for n in range(int(start), int(end) + 1) if n in at)
        )
    return {"span_lines": float(np.mean(lines)), "span_tokens": float(np.mean(tokens))}
