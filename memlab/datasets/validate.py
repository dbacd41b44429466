"""Relevance spans checked against the workspace they point into, when a folder is loaded;
and each workspace checked for something to search (``check_workspace_folder``).

A span that names a file the workspace does not hold, or a line past that file's end, can
never be retrieved: scored silently it would read as every system's miss. So a folder's
evidence and judgments are checked at load (``memlab.datasets.base.load_folder``) and
such a span is an error naming the question, the file and the line. Files are read by the
rule harvest places spans with (``WorkspaceFiles``: the memory files of either
memory-file rule), so a harvested folder, re-anchored when it was written, passes as
written; a file's last line is the last one OpenClaw numbers (``WorkspaceFiles.numbered``:
after a final newline, the empty line a chunk's range may end on).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["SpanError", "check_spans", "check_workspace_folder", "groups_of"]


class SpanError(ValueError):
    """A relevance span outside its workspace (a usage error: the message names the
    question, the file and the line)."""


def groups_of(queries: pd.DataFrame) -> dict[str, str]:
    """{qid: workspace group} of raw query rows (group ``default`` when not given; {}
    without a ``qid`` column, which the loader reports)."""
    if "qid" not in queries.columns:
        return {}
    groups = queries["group"] if "group" in queries.columns else ["default"] * len(queries)
    return {str(q): str(g) for q, g in zip(queries["qid"], groups, strict=True)}


def check_spans(
    spans: pd.DataFrame,
    workspaces: Mapping[str, Path],
    group_of: Mapping[str, str],
    source: str,
    files: dict[str, Any] | None = None,
) -> dict[tuple[str, str], int]:
    """Raise ``SpanError`` when a span of ``spans`` (``qid, path, start_line, end_line``)
    is outside its question's workspace (``workspaces[group_of[qid]]``): its ``path`` is no
    memory file there, or ``end_line`` is past the file's last line. The message names
    ``source`` (the file the spans came from), the first bad span's question, file and
    line, and how many spans are bad. Spans of questions not in ``group_of`` are not
    checked (no question asks them, so nothing scores them). Returns {(group, path): the
    file's lines of text} (``WorkspaceFiles.lines``, a final empty line not counted) of
    every file checked. ``files``: {group: ``WorkspaceFiles``} read already, filled as the
    spans need them (pass one dict to several calls so each file is read once)."""
    from memlab.datasets.harvest.anchor import WorkspaceFiles

    cols = ("qid", "path", "start_line", "end_line")
    if spans.empty or any(c not in spans.columns for c in cols):
        return {}  # nothing to check, or a malformed frame the loader reports itself
    files = {} if files is None else files
    problems: list[str] = []
    sizes: dict[tuple[str, str], int] = {}
    for qid, path, start, end in spans.loc[:, list(cols)].itertuples(index=False):
        group = group_of.get(str(qid))
        if group is None or group not in workspaces:
            continue
        if group not in files:
            files[group] = WorkspaceFiles(Path(workspaces[group]))
        ws = files[group]
        lines, last = ws.lines(str(path)), ws.numbered(str(path))
        where = f"question {qid}: {path}"
        if lines is None or last is None:
            problems.append(f"{where} is not a memory file of the workspace {ws.root}")
            continue
        sizes[(group, str(path))] = len(lines)
        if int(end) > last:
            bad = int(start) if int(start) > last else int(end)
            problems.append(
                f"{where} line {bad} (span {int(start)}-{int(end)}) is past the file's end"
                f" ({len(lines)} lines)"
            )
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SpanError(
            f"{source}: {problems[0]}{more}: a span outside the workspace can never be"
            " retrieved; fix or remove it (memlab harvest re-anchors the spans it writes)"
        )
    return sizes


def check_workspace_folder(root: Path, group: str, ws: Path) -> None:
    """Refuse a dataset workspace there is nothing to search in, naming the dataset folder:
    ``FileNotFoundError`` when ``ws`` is not a folder, ``ValueError`` when it holds no memory
    file (``memlab.files.workspace.discover_memory_files``: ``MEMORY.md``, ``memory.md``,
    ``memory/**/*.md``) or only empty ones."""
    from memlab.files.workspace import discover_memory_files

    which = "its workspace" if group == "default" else f"workspace {group!r}"
    if ws == root.resolve():
        which += " (no workspace/ folder in it, so the folder itself:"
        ws_text = f"{ws})"
    else:
        ws_text = str(ws)
    if not ws.is_dir():
        raise FileNotFoundError(
            f"dataset folder {root}: {which} {ws_text} does not exist; put the memory files there"
            " (MEMORY.md, memory/*.md) or name the workspace in dataset.json's workspaces"
        )
    files = discover_memory_files(ws)
    if not any(f.abspath.stat().st_size for f in files):
        what = "only empty memory files" if files else "no memory file"
        raise ValueError(
            f"dataset folder {root}: {which} {ws_text} holds {what} (MEMORY.md, memory.md,"
            " memory/**/*.md): nothing to search"
        )
