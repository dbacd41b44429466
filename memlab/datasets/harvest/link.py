"""A session's ``memory_search`` calls, what each showed, and what the agent did next.

A *turn* runs from a user message (or a ``reset`` entry) to the next; within it, in entry
order and, inside an assistant message, in content order:

- a ``memory_search`` tool call with a string query is a call; its result is the tool
  result naming its call id (anywhere in the session). The result's JSON (the text the
  agent saw; else the ``details`` stored beside it) gives the hits
  ``{path, startLine, endLine, score, snippet, source}``. A result marked ``isError`` or
  whose JSON says ``disabled``/``unavailable``/``error`` (the release answers a failed
  search so), or no result at all, makes the call an error.
- a ``memory_get`` tool call and each ``Source: path#Lx-Ly`` citation (also ``#Lx``, and
  several after one ``Sources:``) in an assistant's text are *follow-ups*. A follow-up
  belongs to one call: the latest call before it in its turn that showed its path (among
  its hits, or read by a ``memory_get`` already linked to it), else the latest call before
  it in its turn; with no call before it in its turn it belongs to none (counted).

So each call is harvested once, with its own follow-ups only. Tool calls of other tools
are counted and skipped.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memlab.datasets.harvest.codec import Entry, Session, ToolCall

__all__ = ["Followup", "Hit", "SearchCall", "citations", "link_session"]

SEARCH_TOOL = "memory_search"
GET_TOOL = "memory_get"

# Counted reasons.
OTHER_TOOL = "other tool call"
NO_QUERY = "memory_search call without a query"
ORPHAN = "follow-up with no memory_search before it in its turn"

_SOURCES = re.compile(r"\bSources?:[ \t]*([^\n]*)", re.IGNORECASE)
_REF = re.compile(r"([^\s,;()\[\]<>`'\"]+)#L(\d+)(?:-L?(\d+))?")
# The release appends "\n\nSource: path#L.." to a snippet when citations are on.
_SNIPPET_SOURCE = re.compile(r"\n\nSource: [^\n]*\Z")


@dataclass(slots=True)
class Hit:
    """One result the agent saw: ``path`` (as the tool named it), lines, score, the
    snippet's text lines (citation suffix removed) and the result's ``source``."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: list[str]
    source: str = ""


@dataclass(slots=True)
class Followup:
    """What the agent did with a call's answer: ``signal`` ``memory_get`` or ``citation``;
    ``path`` (as named); lines ``start``–``end`` (None: a whole-file read); ``shown`` the
    text lines the tool returned from ``start`` on (None: none known), ``cut`` when its
    last line may be cut short; ``entry`` the entry it came in; ``error`` when a read
    returned nothing."""

    signal: str
    path: str
    start: int | None
    end: int | None
    shown: list[str] | None
    entry: str
    cut: bool = False
    error: bool = False


@dataclass(slots=True)
class SearchCall:
    """One ``memory_search`` call: ``qid`` = ``<session>:<entry>`` (``:<n>`` added for the
    n-th call of one entry, n ≥ 2), ``turn`` (its turn's number in the session), its
    arguments, ``error``, ``hits`` (None: a result that could not be read), ``followups``."""

    qid: str
    session: str
    entry: str
    turn: int
    time: float
    query: str
    arguments: dict[str, Any]
    error: bool = False
    hits: list[Hit] | None = field(default_factory=list)
    followups: list[Followup] = field(default_factory=list)
    read_paths: set[str] = field(default_factory=set)

    def shows(self, path: str) -> bool:
        """Whether the agent saw ``path`` from this call: among its hits, or read by a
        ``memory_get`` already linked to it."""
        return path in self.read_paths or any(h.path == path for h in self.hits or ())


def citations(text: str) -> list[tuple[str, int, int]]:
    """``(path, start, end)`` of every citation in ``text``: after ``Source:`` or
    ``Sources:`` on a line, each ``PATH#Lx`` or ``PATH#Lx-Ly`` (``-y`` too); ``end`` <
    ``start`` is swapped."""
    out = []
    for m in _SOURCES.finditer(text):
        for path, a, b in _REF.findall(m.group(1)):
            s, e = int(a), int(b) if b else int(a)
            out.append((path, min(s, e), max(s, e)))
    return out


def _payload(result: Entry) -> Any:
    text = result.text.strip()
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return result.details if isinstance(result.details, dict) else None


def _failed(result: Entry | None, payload: Any) -> bool:
    if result is None or result.is_error:
        return True
    if not isinstance(payload, dict):
        return False
    return bool(payload.get("disabled") or payload.get("unavailable") or payload.get("error"))


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _hits(payload: Any, normalize: Callable[[str], str]) -> list[Hit] | None:
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        return None
    out = []
    for r in payload["results"]:
        if not isinstance(r, dict) or not isinstance(r.get("path"), str):
            continue
        s, e = _int(r.get("startLine")), _int(r.get("endLine"))
        if s is None or e is None or s < 1 or e < s:
            continue
        score = r.get("score")
        snippet = r.get("snippet") if isinstance(r.get("snippet"), str) else ""
        out.append(
            Hit(
                normalize(r["path"]),
                s,
                e,
                float(score) if isinstance(score, int | float) else math.nan,
                _SNIPPET_SOURCE.sub("", snippet).split("\n") if snippet else [],
                str(r.get("source") or ""),
            )
        )
    return out


def _get_followup(
    call: ToolCall, result: Entry | None, entry: str, normalize: Callable[[str], str]
) -> Followup:
    args = call.arguments
    path = normalize(args["path"]) if isinstance(args.get("path"), str) else ""
    frm, lines = _int(args.get("from")), _int(args.get("lines"))
    payload = _payload(result) if result is not None else None
    ok = not _failed(result, payload) and isinstance(payload, dict)
    ok = ok and payload.get("status") in (None, "ok") and isinstance(payload.get("text"), str)
    if not ok:
        return Followup(GET_TOOL, path, None, None, None, entry, error=True)
    text_lines = payload["text"].split("\n")
    kept = _int(payload.get("lines"))  # the release says how many lines it kept
    if kept is not None:
        text_lines = text_lines[:kept]
    if not any(line.strip() for line in text_lines):
        return Followup(GET_TOOL, path, None, None, None, entry, error=True)
    if frm is None and lines is None:
        return Followup(GET_TOOL, path, None, None, text_lines, entry)
    start = _int(payload.get("from")) or frm or 1
    n = len(text_lines) if lines is None else min(lines, len(text_lines))
    cut = payload.get("truncated") is True and kept == 1
    return Followup(GET_TOOL, path, start, start + n - 1, text_lines[:n], entry, cut=cut)


def _owner(turn: list[SearchCall], path: str, counts: Counter[str]) -> SearchCall | None:
    for call in reversed(turn):
        if call.shows(path):
            return call
    if not turn:
        counts[ORPHAN] += 1
        return None
    return turn[-1]


def _cited_text(
    owner: SearchCall, path: str, start: int, end: int
) -> tuple[list[str] | None, bool]:
    # The text the tool showed for the cited lines start..end (those of them it showed,
    # from `start` on): a hit's snippet or a linked memory_get's text holding line `start`;
    # `cut` when they reach a snippet's last line (a snippet is cut at 700 characters).
    pieces: list[tuple[int, list[str], bool]] = [
        (h.start_line, h.snippet, True) for h in owner.hits or () if h.path == path
    ]
    pieces += [
        (1 if f.start is None else f.start, f.shown, f.cut)
        for f in owner.followups
        if f.signal == GET_TOOL and f.path == path and f.shown is not None
    ]
    for first, text, may_cut in pieces:
        if first <= start <= first + len(text) - 1:
            lo, hi = start - first, min(end - first + 1, len(text))
            return text[lo:hi], may_cut and hi == len(text)
    return None, False


def link_session(
    session: Session, counts: Counter[str], normalize: Callable[[str], str] = str.strip
) -> list[SearchCall]:
    """The ``memory_search`` calls of ``session`` with their hits and follow-ups (module
    docstring: the turn and ownership rules), in order. Every path a hit or a follow-up
    names goes through ``normalize`` first (harvest's: workspace-relative), so one file is
    one path whatever form the agent used; other tools' calls and calls without a query
    are counted in ``counts``."""
    results: dict[str, Entry] = {}
    for e in session.entries:
        if e.role == "toolResult" and e.call_id and e.call_id not in results:
            results[e.call_id] = e
    calls: list[SearchCall] = []
    turn: list[SearchCall] = []
    n_turn = 0
    for e in session.entries:
        if e.role in ("user", "reset"):
            turn = []
            n_turn += 1
            continue
        if e.role != "assistant":
            continue
        n_in_entry = 0
        for part in e.parts:
            if isinstance(part, str):
                for raw, s, end in citations(part):
                    path = normalize(raw)
                    owner = _owner(turn, path, counts)
                    if owner is not None:
                        shown, cut = _cited_text(owner, path, s, end)
                        owner.followups.append(Followup("citation", path, s, end, shown, e.id, cut))
                continue
            result = results.get(part.id) if part.id else None
            if part.name == SEARCH_TOOL:
                query = part.arguments.get("query")
                if not isinstance(query, str) or not query.strip():
                    counts[NO_QUERY] += 1
                    continue
                n_in_entry += 1
                qid = f"{session.id}:{e.id}" + (f":{n_in_entry}" if n_in_entry > 1 else "")
                payload = _payload(result) if result is not None else None
                error = _failed(result, payload)
                call = SearchCall(
                    qid,
                    session.id,
                    e.id,
                    n_turn,
                    e.time,
                    query,
                    dict(part.arguments),
                    error=error,
                    hits=[] if error else _hits(payload, normalize),
                )
                calls.append(call)
                turn.append(call)
            elif part.name == GET_TOOL:
                f = _get_followup(part, result, e.id, normalize)
                owner = _owner(turn, f.path, counts)
                if owner is not None:
                    owner.followups.append(f)
                    if not f.error:
                        owner.read_paths.add(f.path)
            else:
                counts[OTHER_TOOL] += 1
    return calls
