"""A pool span as a judge sees it: the question (its time and kind), the span's file, date
and lines, with the question's words marked where they occur; plain text (marks as ANSI
bold at a terminal, ``**word**`` elsewhere) or HTML (``<mark>``) for the notebook.
"""

from __future__ import annotations

import html
import math
import re
import time
from dataclasses import dataclass
from typing import Any

from memlab.eval.judge.pool import PoolItem

__all__ = ["Card", "make_card", "mark_terms", "query_terms"]


@dataclass
class Card:
    """What is shown for one span: ``query``, ``asked`` (the question's time, UTC, or
    ``""``), ``path``, ``date`` (the file's date, or ``undated``), ``lines`` (1-based first
    line, texts) and the query's ``terms``."""

    query: str
    asked: str
    path: str
    date: str
    first_line: int
    lines: list[str]
    terms: list[str]
    systems: str

    def text(self, ansi: bool = False) -> str:
        """The card as text: question, file and date, then each line numbered, the
        query's terms marked (``ansi``: bold yellow, else ``**term**``)."""
        width = len(str(self.first_line + max(len(self.lines) - 1, 0)))
        body = [
            f"  {self.first_line + i:>{width}} | {mark_terms(line, self.terms, ansi=ansi)}"
            for i, line in enumerate(self.lines)
        ]
        asked = f"  (asked {self.asked})" if self.asked else ""
        return "\n".join(
            [
                f"question: {self.query}{asked}",
                f"span:     {self.path}:{self.first_line}-{self.first_line + len(self.lines) - 1}"
                f"  ({self.date}; returned by {self.systems})",
                *body,
            ]
        )

    def html(self) -> str:
        """The card as HTML (the notebook's ``Judge``)."""
        rows = "".join(
            f"<tr><td style='color:#777;text-align:right;padding-right:6px'>"
            f"{self.first_line + i}</td><td><code>{mark_terms(line, self.terms, html_=True)}"
            "</code></td></tr>"
            for i, line in enumerate(self.lines)
        )
        asked = f" <span style='color:#777'>(asked {html.escape(self.asked)})</span>"
        return (
            f"<div><b>question:</b> {html.escape(self.query)}{asked if self.asked else ''}"
            f"<br><b>span:</b> {html.escape(self.path)}:{self.first_line}-"
            f"{self.first_line + len(self.lines) - 1} <span style='color:#777'>("
            f"{html.escape(self.date)}; returned by {html.escape(self.systems)})</span>"
            f"<table style='border-collapse:collapse;font-size:12px'>{rows}</table></div>"
        )


def query_terms(query: str) -> list[str]:
    """The words of ``query`` worth marking: its identifiers
    (``textquery.identifier_terms``) and keywords (``textquery.extract_keywords``),
    de-duplicated case-insensitively, longest first (so a longer term is marked whole)."""
    from memlab.retrieval.textquery import extract_keywords, identifier_terms

    seen: dict[str, str] = {}
    for t in [*identifier_terms(query), *extract_keywords(query)]:
        seen.setdefault(t.lower(), t)
    return sorted(seen.values(), key=len, reverse=True)


def mark_terms(text: str, terms: list[str], *, ansi: bool = False, html_: bool = False) -> str:
    """``text`` with every occurrence of a term marked, case-insensitive: an identifier as
    written, not inside a longer word (``textquery.identifier_pattern``: ``a828e60`` is not
    in ``a828e601``), a plain word at a word start and on to the end of its word
    (``invoice`` marks ``invoices``). ANSI bold yellow (``ansi``), ``<mark>`` with the rest
    HTML-escaped (``html_``), else ``**…**``."""
    if not terms:
        return html.escape(text) if html_ else text
    pattern = re.compile(
        "|".join(r"(?<!\w)" + re.escape(t) + (r"\w*" if t.isalpha() else r"(?!\w)") for t in terms),
        re.IGNORECASE,
    )
    out, last = [], 0
    for m in pattern.finditer(text):
        plain, hit = text[last : m.start()], m.group(0)
        if html_:
            out += [html.escape(plain), f"<mark>{html.escape(hit)}</mark>"]
        elif ansi:
            out += [plain, f"\x1b[1;33m{hit}\x1b[0m"]
        else:
            out += [plain, f"**{hit}**"]
        last = m.end()
    tail = text[last:]
    out.append(html.escape(tail) if html_ else tail)
    return "".join(out)


def make_card(item: PoolItem, dataset: Any, lines: list[str] | None) -> Card:
    """The card of ``item``: its question's text and time from ``dataset.queries``, the
    file's date (``memlab.store.asof.unit_time``), and ``lines``, the file's lines (the
    span's are cut out; None: the file cannot be read, shown as such)."""
    from memlab.store.asof import unit_time

    q = dataset.queries
    row = q[q["qid"] == item.qid].iloc[0]
    t = float(row.get("time", math.nan))
    asked = "" if math.isnan(t) else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))
    ut = unit_time(item.path)
    date = "undated" if math.isnan(ut) else time.strftime("%Y-%m-%d", time.gmtime(ut))
    span = (
        ["(the file cannot be read)"]
        if lines is None
        else lines[item.start_line - 1 : item.end_line]
    )
    systems = ", ".join(f"{s} #{r + 1}" for s, r in item.ranks)
    return Card(
        str(row["query"]),
        asked,
        item.path,
        date,
        item.start_line,
        span,
        query_terms(str(row["query"])),
        systems,
    )
