"""``harvest``: an agent's transcripts → a folder-format dataset of its own queries.

Reads the transcripts where ``memlab.files.sessions.transcript_places`` says (read-only), links
each ``memory_search`` call to what it showed and what the agent did next
(``memlab.datasets.harvest.link``), places every span in the workspace as it is now
(``memlab.datasets.harvest.anchor``) and writes OUT (``memlab.datasets.harvest.writer``):

- ``queries.jsonl``: per call with a query: ``qid`` (``<session>:<entry>``), ``query``,
  ``group`` (``default``), ``category`` (``memlab.retrieval.textquery.query_kind``), ``time`` and
  ``cutoff`` (the call's time, Unix seconds: the memory as of the call), ``session``,
  ``entry``, ``maxResults`` / ``minScore`` / ``corpus`` when the call gave them,
  ``error``, ``shown`` (hits the agent saw; null when the result could not be read) and
  ``same_day_log`` (a daily log of the call's own day is visible as of it: it may hold
  lines written after the call);
- ``shown.jsonl`` (each hit shown: rank, path and lines as shown, deployed ``score``,
  ``source``, and the ``docno`` it was placed at or why it was not) and ``shown.trec``
  (the placed hits as a TREC run, ``memlab eval --run deployed=OUT/shown.trec``);
- ``evidence.jsonl``: implicit relevance, ``judge: "implicit"``, ``signal``
  ``memory_get`` (lines ``[from, from + lines - 1]``; a read of a whole file gives
  ``level: "file"``, lines 1 to the file's end) or ``citation`` (the cited span), ``grade``
  1, ``shown`` (the call's hits held the path), ``entry`` (where the follow-up was),
  ``moved`` (the text is now at other lines). A span whose text is gone, a follow-up on a
  file not in the workspace, a read that returned nothing and a citation of lines no tool
  showed are dropped and counted;
- ``dataset.json`` (the workspace by its path, or with ``snapshot`` a copy of its memory
  files in ``OUT/workspace``; ``info.harvest``: where and what was read, the counts) and
  ``report.json`` (the summary and ``report.query_log_report``).
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlab.datasets.harvest.anchor import WorkspaceFiles
from memlab.datasets.harvest.codec import (
    Session,
    read_jsonl_session,
    read_store_sessions,
    transcript_files,
)
from memlab.datasets.harvest.link import GET_TOOL, SearchCall, link_session
from memlab.datasets.harvest.report import format_report, query_log_report
from memlab.datasets.harvest.writer import HarvestError, check_out, write_out
from memlab.eval.trec import unit_id
from memlab.files.sessions import TranscriptPlaces, transcript_places
from memlab.retrieval.textquery import query_kind

__all__ = ["HarvestResult", "harvest"]

# Call arguments copied to queries.jsonl when given.
CALL_ARGUMENTS = ("maxResults", "minScore", "corpus")
DUPLICATE_SESSION = "session read twice (the copy with fewer entries skipped)"
# Why a span is not written (counted).
NOT_IN_WORKSPACE = "file not in the workspace"
TEXT_GONE = "text no longer in the file"
NOTHING_READ = "memory_get that returned nothing"
NOT_SHOWN = "citation of lines no tool showed"
SHOWN_TWICE = "the same lines shown twice in one answer"
PAST_THE_END = "lines past the file's end (no text shown to anchor by)"


@dataclass
class HarvestResult:
    """What a harvest wrote: ``out``, ``summary`` (counts, where transcripts were read)
    and ``health`` (``report.query_log_report``); ``text()`` is the printed report."""

    out: Path
    summary: dict[str, Any]
    health: dict[str, Any]
    calls: list[SearchCall] = field(default_factory=list, repr=False)

    def text(self) -> str:
        """The report harvest prints (``report.format_report``)."""
        return format_report(self.summary, self.health)

    def to_json(self) -> dict[str, Any]:
        """``{"out", "summary", "health"}``: what ``--json`` prints and ``report.json`` holds."""
        return {"out": str(self.out), "summary": self.summary, "health": self.health}


def read_sessions(places: TranscriptPlaces, counts: Counter[str]) -> tuple[list[Session], int]:
    """Every session at ``places`` (JSONL files, then the agent database) and the number of
    entries read; a session id met twice keeps the copy with more entries (counted)."""
    found: dict[str, Session] = {}

    def add(s: Session | None) -> None:
        if s is None:
            return
        old = found.get(s.id)
        if old is not None:
            counts[DUPLICATE_SESSION] += 1
            if len(old.entries) >= len(s.entries):
                return
        found[s.id] = s

    for path in transcript_files(places.jsonl_dir):
        add(read_jsonl_session(path, counts))
    if places.store is not None and places.store.is_file():
        try:
            for s in read_store_sessions(places.store, counts):
                add(s)
        except sqlite3.Error as exc:
            raise HarvestError(f"cannot read the agent database {places.store}: {exc}") from exc
    sessions = sorted(found.values(), key=lambda s: s.id)
    return sessions, sum(len(s.entries) for s in sessions)


def _query_row(call: SearchCall, files: WorkspaceFiles) -> dict[str, Any]:
    row: dict[str, Any] = {
        "qid": call.qid,
        "query": call.query,
        "group": "default",
        "category": query_kind(call.query),
        "time": call.time,
        "cutoff": call.time,
        "session": call.session,
        "entry": call.entry,
    }
    for key in CALL_ARGUMENTS:
        if call.arguments.get(key) is not None:
            row[key] = call.arguments[key]
    row["error"] = call.error
    row["shown"] = None if call.hits is None else len(call.hits)
    row["same_day_log"] = files.same_day_log(call.time)
    return row


def _shown_rows(call: SearchCall, files: WorkspaceFiles, dropped: Counter[str]) -> list[dict]:
    rows, seen = [], set()
    for rank, h in enumerate(call.hits or (), 1):
        row: dict[str, Any] = {
            "qid": call.qid,
            "rank": rank,
            "path": h.path,
            "start_line": h.start_line,
            "end_line": h.end_line,
            "score": h.score,
            "source": h.source,
        }
        placed = None
        lines = files.lines(h.path)
        if lines is None:
            row["dropped"] = NOT_IN_WORKSPACE
        elif any(x.strip() for x in h.snippet):
            placed = files.place(h.path, h.start_line, h.end_line, h.snippet, prefix_last=True)
            if placed is None:
                row["dropped"] = TEXT_GONE
        elif h.start_line <= len(lines):  # no text to anchor by: the lines as shown
            placed = (h.start_line, min(h.end_line, len(lines)))
        else:
            row["dropped"] = PAST_THE_END
        if placed is not None:
            docno = unit_id(h.path, *placed)
            if docno in seen:  # the same lines twice in one answer: once in the run
                placed = None
                row["dropped"] = SHOWN_TWICE
            else:
                seen.add(docno)
                row["docno"] = docno
        if placed is None:
            dropped[row["dropped"]] += 1
        rows.append(row)
    return rows


def _evidence_rows(call: SearchCall, files: WorkspaceFiles, dropped: Counter[str]) -> list[dict]:
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, int, int, str]] = set()
    hit_paths = {h.path for h in call.hits or ()}
    for f in call.followups:
        lines = files.lines(f.path) if f.path else None
        if f.error:
            dropped[NOTHING_READ] += 1
            continue
        if lines is None:
            dropped[NOT_IN_WORKSPACE] += 1
            continue
        level = "span"
        if f.start is None:  # a whole file read: file-level evidence
            placed: tuple[int, int] | None = (1, max(1, len(lines)))
            level = "file"
        elif f.shown is None:
            dropped[NOT_SHOWN] += 1
            continue
        else:
            placed = files.place(f.path, f.start, f.end or f.start, f.shown, prefix_last=f.cut)
        if placed is None:
            dropped[TEXT_GONE] += 1
            continue
        key = (f.path, placed[0], placed[1], f.signal)
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            {
                "qid": call.qid,
                "path": f.path,
                "start_line": placed[0],
                "end_line": placed[1],
                "grade": 1,
                "span_id": str(len(rows)),
                "judge": "implicit",
                "signal": f.signal,
                "level": level,
                "shown": f.path in hit_paths,
                "entry": f.entry,
                "moved": level == "span" and placed[0] != f.start,
            }
        )
    return rows


def harvest(
    workspace: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    sessions: str | os.PathLike[str] | None = None,
    agent: str | None = None,
    snapshot: bool = False,
    env: Mapping[str, str] | None = None,
) -> HarvestResult:
    """Harvest the agent's queries of ``workspace`` into OUT (module docstring).

    Transcripts: ``memlab.files.sessions.transcript_places(workspace, sessions=, agent=, env=)``,
    read only. Raises ``HarvestError`` (nothing written) when OUT is refused
    (``writer.check_out``), when no transcript place exists, or when they hold no
    ``memory_search`` call with a query; ``WorkspaceError`` for a missing workspace.
    """
    from memlab import __version__
    from memlab.files.workspace import resolve_workspace

    ws = resolve_workspace(workspace)
    places = transcript_places(ws, sessions=sessions, agent=agent, env=env)
    target = check_out(out, ws, places)
    store_there = places.store is not None and places.store.is_file()
    if not places.jsonl_dir.is_dir() and not store_there:
        hint = "" if places.agent else " (OpenClaw keeps them per agent: --agent ID)"
        raise HarvestError(f"no transcripts at {places.describe()}: pass --sessions DIR{hint}")
    skipped: Counter[str] = Counter()
    found, n_entries = read_sessions(places, skipped)
    files = WorkspaceFiles(ws)
    calls: list[SearchCall] = []
    for s in found:
        calls.extend(link_session(s, skipped, files.relative))
    if not calls:
        raise HarvestError(
            f"no memory_search call with a query in {len(found)} session(s) at"
            f" {places.describe()}: nothing to harvest"
        )
    calls.sort(key=lambda c: (c.time if math.isfinite(c.time) else math.inf, c.qid))
    dropped: Counter[str] = Counter()
    shown_dropped: Counter[str] = Counter()
    queries = [_query_row(c, files) for c in calls]
    shown = [r for c in calls for r in _shown_rows(c, files, shown_dropped)]
    evidence = [r for c in calls for r in _evidence_rows(c, files, dropped)]
    by_signal = Counter(r["signal"] for r in evidence)
    summary: dict[str, Any] = {
        "places": places.describe(),
        "origin": places.origin,
        "sessions": len(found),
        "entries": n_entries,
        "calls": len(calls),
        "queries": len(queries),
        "errors": sum(c.error for c in calls),
        "shown": len(shown),
        "shown_placed": sum(1 for r in shown if r.get("docno")),
        "evidence": len(evidence),
        "evidence_by_signal": {s: by_signal.get(s, 0) for s in (GET_TOOL, "citation")},
        "evidence_file_level": sum(r["level"] == "file" for r in evidence),
        "same_day_log": sum(q["same_day_log"] for q in queries),
        "dropped": dict(sorted(dropped.items())),
        "shown_dropped": dict(sorted(shown_dropped.items())),
        "skipped": dict(sorted(skipped.items())),
    }
    health = query_log_report(calls)
    copy = dict(files.files) if snapshot else None
    meta = {
        "name": f"harvest-{ws.name}",
        "workspaces": {"default": "workspace" if snapshot else str(ws)},
        "info": {
            "harvest": {
                "workspace": str(ws),
                "snapshot": snapshot,
                "transcripts": places.describe(),
                "memlab_version": __version__,
                "counts": summary,
            }
        },
    }
    result = HarvestResult(target, summary, health, calls)
    write_out(
        target,
        meta=meta,
        queries=queries,
        evidence=evidence,
        shown=shown,
        report=result.to_json(),
        snapshot=copy,
    )
    return result
