"""The memory a flush lifecycle implies, written as data sets the lab evaluates.

Three workspaces per conversation (``memlab.config.vocab.FLUSH_MEMORIES``), each a folder-format
data set (``memlab.datasets.base``) with the source's questions:

- ``notes``: what the flushes wrote, ``memory/…`` (``layout`` below);
- ``transcripts``: the sessions corpus — every source session as its own dated file
  ``memory/sessions/YYYY-MM-DD[-HHMM].md`` (its heading, one line per turn), the session's
  time as its name, so the as-of rule sees a session only after it;
- ``both``: the two side by side.

Layouts of the notes (``memlab.config.vocab.FLUSH_LAYOUTS``):

- ``daily`` (OpenClaw's): each flush appends ``## Memory flush N — <time>`` and one
  ``- note`` line per note to today's ``memory/YYYY-MM-DD.md`` (UTC date of the session it
  fired in). Under a time cut-off a daily file is dated midnight, so a question asked
  earlier that day would see a note written later: use ``session`` for as-of studies.
- ``session``: the notes one flush wrote about one source session form one file,
  ``memory/notes/sNNNN/<flush time>.md`` (NNNN: the source session's ordinal; its name the
  flush's minute, so no question before the flush sees it). A file is then "memory of one
  session", the unit RealMem's session-level scoring ranks.

Relevance carries over by provenance: a source evidence span ``(path, start, end)`` becomes
the transcript lines it maps to (one span per transcript file) and every note line whose
sources include a turn in it (one span per note line). In ``notes`` a span no note covers
keeps its transcript row, pointing at a file that workspace does not hold: the question
stays in every mean and scores the loss. ``provenance.jsonl`` beside the data sets lists
each note line with its sources (source path and line, source session ordinal).

Output: ``out_dir`` when the caller names one (refused when it holds anything memlab's flush
did not write, recognised by ``.memlab-flush.json``), else the user cache
``flush-<sha256[:12]>`` of the inputs; built in a sibling folder and renamed in.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.config.vocab import FLUSH_LAYOUTS, FLUSH_MEMORIES
from memlab.datasets.base import Dataset, load_folder
from memlab.datasets.convwriter import cache_dir, evidence_frame, flatten, session_file_name
from memlab.flush.lifecycle import FlushedNote, FlushRun

MARKER = ".memlab-flush.json"
FORMAT_VERSION = 1


@dataclass
class FlushWorkspaces:
    """The written data sets (``datasets[memory]``), their root and the run they came from."""

    root: Path
    datasets: dict[str, Dataset]
    run: FlushRun


def write_flush_workspaces(
    source: Dataset,
    run: FlushRun,
    out_dir: str | Path | None = None,
    *,
    layout: str = "daily",
) -> FlushWorkspaces:
    """Write ``notes``, ``transcripts`` and ``both`` for ``run`` over ``source`` (module
    docstring); reused when the folder's marker records the same inputs."""
    if layout not in FLUSH_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(FLUSH_LAYOUTS)}; got {layout!r}")
    digest = run_digest(source, run, layout)
    marker = {"writer": "memlab.flush", "format_version": FORMAT_VERSION, "inputs": digest}
    target = cache_dir(f"flush-{digest[:12]}") if out_dir is None else Path(out_dir).expanduser()
    existing = read_marker(target)
    if existing == marker:
        return FlushWorkspaces(target, _load(target), run)
    if target.exists() and not target.is_dir():
        raise FileExistsError(f"{target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and existing is None:
        raise FileExistsError(
            f"{target} is not empty and was not written by memlab flush (no {MARKER});"
            " name a new or empty folder"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        build(source, run, tmp, layout)
        (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return FlushWorkspaces(target, _load(target), run)


def _load(target: Path) -> dict[str, Any]:
    # A question whose evidence the flush lost keeps its span on a file the memory does not
    # hold: a miss by design, so these folders' spans are not checked against the workspace.
    return {m: load_folder(target / m, check_spans=False) for m in FLUSH_MEMORIES}


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The flush marker of ``folder`` (None when absent or unreadable)."""
    try:
        return json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None


def run_digest(source: Dataset, run: FlushRun, layout: str) -> str:
    """sha256 over the source data set's fingerprint, the config, the policy's name, the
    layout and every note (group, flush, time, text, sources): the cache key."""
    h = hashlib.sha256()
    cfg = {k: v for k, v in asdict(run.config).items() if k != "source"}
    h.update(json.dumps([source.fingerprint, cfg, run.policy, layout], default=str).encode())
    for n in run.notes:
        h.update(json.dumps([n.group, n.flush, n.when.isoformat(), n.text, n.sources]).encode())
    return h.hexdigest()


def build(source: Dataset, run: FlushRun, root: Path, layout: str) -> None:
    """Write the three data sets, ``provenance.jsonl``, ``events.jsonl`` and
    ``summary.json`` under ``root``."""
    convs = {c.group: c for c in run.conversations}
    notes_by_group: dict[str, list[FlushedNote]] = defaultdict(list)
    for n in run.notes:
        notes_by_group[n.group].append(n)
    line_map: dict[str, dict[tuple[str, int], tuple[str, int]]] = {}
    note_lines: dict[str, list[tuple[FlushedNote, str, int]]] = {}
    prov: list[dict[str, Any]] = []
    for memory in ("transcripts", "notes"):
        for group, conv in convs.items():
            ws = root / memory / group
            if memory == "transcripts":
                line_map[group] = write_transcripts(ws, conv)
            else:
                note_lines[group] = write_notes(ws, conv, notes_by_group[group], layout)
    for group, placed in note_lines.items():
        session_of = {(t.path, t.line): t.session for s in convs[group].sessions for t in s.turns}
        for n, path, line in placed:
            prov.append(
                {
                    "group": group,
                    "path": path,
                    "line": line,
                    "flush": n.flush,
                    "written": n.when.isoformat(),
                    "sources": [
                        {"path": p, "line": ln, "session": session_of[(p, ln)]}
                        for p, ln in n.sources
                    ],
                }
            )
    for group in convs:
        both = root / "both" / group
        shutil.copytree(root / "transcripts" / group, both, dirs_exist_ok=True)
        shutil.copytree(root / "notes" / group, both, dirs_exist_ok=True)
    group_of = dict(zip(source.queries["qid"], source.queries["group"], strict=True))
    evidence = carried_evidence(source.evidence, group_of, line_map, note_lines)
    info_base = {
        "source": source.name,
        "source_root": str(source.root),
        "policy": run.policy,
        "layout": layout,
        "config": {k: v for k, v in asdict(run.config).items()},
        "summary": run.summary(),
        "counts": {g: dict(c.counts) for g, c in convs.items()},
    }
    queries = source.queries[source.queries["group"].isin(list(convs))].reset_index(drop=True)
    for memory in FLUSH_MEMORIES:
        ev = evidence[memory]
        ev = ev[ev["qid"].isin(set(queries["qid"]))].reset_index(drop=True)
        info = {**source.info, **info_base, "memory": memory}
        workspaces = {g: root / memory / g for g in convs}
        for ws in workspaces.values():
            ws.mkdir(parents=True, exist_ok=True)
        Dataset(
            f"{source.name}-flush-{memory}", root / memory, workspaces, queries, ev, info
        ).save()
    write_jsonl(root / "provenance.jsonl", prov)
    write_jsonl(root / "events.jsonl", run.events)
    (root / "summary.json").write_text(json.dumps(info_base, indent=2, default=str) + "\n")


def write_transcripts(ws: Path, conv: Any) -> dict[tuple[str, int], tuple[str, int]]:
    """Each source session as ``memory/sessions/<its dated name>``; returns source
    ``(path, line)`` → written ``(path, line)`` for every turn and heading."""
    out: dict[tuple[str, int], tuple[str, int]] = {}
    for k, s in enumerate(conv.sessions):
        rel = session_file_name(s.when).replace("memory/", "memory/sessions/", 1)
        heading = s.heading or f"## Session {k + 1}"
        lines = [heading, *(t.text for t in s.turns)]
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        if s.heading_line:
            out[(s.path, s.heading_line)] = (rel, 1)
        for i, t in enumerate(s.turns):
            out[(t.path, t.line)] = (rel, 2 + i)
    return out


def write_notes(
    ws: Path, conv: Any, notes: list[FlushedNote], layout: str
) -> list[tuple[FlushedNote, str, int]]:
    """The notes of one conversation in ``layout`` (module docstring); returns each note
    with the path and line it landed on."""
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    session_of = {(t.path, t.line): t.session for s in conv.sessions for t in s.turns}
    files: dict[str, list[str]] = {}
    last_head: dict[str, str] = {}
    placed: list[tuple[FlushedNote, str, int]] = []
    for n in notes:
        if layout == "daily":
            rel = f"memory/{n.when.date().isoformat()}.md"
            head = f"## Memory flush {n.flush + 1} — {n.when.isoformat(timespec='minutes')}"
        else:
            src = session_of[n.sources[0]]
            name = session_file_name(n.when).removeprefix("memory/")
            rel = f"memory/notes/s{src:04d}/{name}"
            head = f"## Notes on session {src + 1} — flush {n.flush + 1}"
        lines = files.setdefault(rel, [])
        if last_head.get(rel) != head:
            if lines:
                lines.append("")
            lines.append(head)
            last_head[rel] = head
        lines.append(f"- {flatten(n.text)}")
        placed.append((n, rel, len(lines)))
    for rel, lines in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return placed


def carried_evidence(
    evidence: pd.DataFrame,
    group_of: dict[str, str],
    line_map: dict[str, dict[tuple[str, int], tuple[str, int]]],
    note_lines: dict[str, list[tuple[FlushedNote, str, int]]],
) -> dict[str, pd.DataFrame]:
    """The source evidence in each memory (module docstring, "Relevance carries over")."""
    notes_at: dict[str, dict[tuple[str, int], list[tuple[str, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for group, placed in note_lines.items():
        for n, path, line in placed:
            for src in n.sources:
                notes_at[group][tuple(src)].append((path, line))
    out: dict[str, list[dict[str, Any]]] = {m: [] for m in FLUSH_MEMORIES}
    extra = [c for c in evidence.columns if c not in ("path", "start_line", "end_line")]
    for row in evidence.to_dict(orient="records"):
        group = group_of.get(row["qid"])
        if group is None:
            continue
        lmap = line_map.get(group, {})
        spans: dict[str, list[int]] = defaultdict(list)
        noted: set[tuple[str, int]] = set()
        for ln in range(int(row["start_line"]), int(row["end_line"]) + 1):
            key = (row["path"], ln)
            if key in lmap:
                spans[lmap[key][0]].append(lmap[key][1])
            noted.update(notes_at[group].get(key, []))
        base = {c: row[c] for c in extra}
        trans = [
            {**base, "path": p, "start_line": min(ls), "end_line": max(ls)}
            for p, ls in spans.items()
        ]
        note_rows = [
            {**base, "path": p, "start_line": ln, "end_line": ln} for p, ln in sorted(noted)
        ]
        out["transcripts"].extend(trans)
        out["both"].extend(trans + note_rows)
        out["notes"].extend(note_rows or trans)
    return {m: evidence_frame(rows) for m, rows in out.items()}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """One JSON object per line."""
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, default=str, ensure_ascii=False) + "\n")
