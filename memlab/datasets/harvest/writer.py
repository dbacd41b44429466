"""Where harvest may write (:func:`check_out`) and how it writes OUT (:func:`write_out`).

OUT is refused (``HarvestError``, nothing written) when it is inside the workspace, inside
a transcripts place (the JSONL folder or the agent database's folder) or holds one of them,
looks like a workspace (``MEMORY.md``, ``memory.md``, ``USER.md`` or ``memory/``), is a file,
or is a folder holding anything but an earlier harvest's output (its ``dataset.json`` says
``info.harvest``). Everything is written inside OUT: the files go to ``OUT/.harvest-tmp``
first and are then moved into place, and an earlier harvest's files are replaced.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memlab.datasets.base import write_jsonl
from memlab.files.sessions import TranscriptPlaces

__all__ = [
    "OUTPUT_FILES",
    "HarvestError",
    "check_out",
    "write_out",
]

# Every file harvest writes in OUT (and the snapshot folder, with --snapshot).
OUTPUT_FILES = (
    "dataset.json",
    "queries.jsonl",
    "evidence.jsonl",
    "shown.trec",
    "shown.jsonl",
    "report.json",
)
SNAPSHOT_DIR = "workspace"
_TMP = ".harvest-tmp"
_WORKSPACE_MARKERS = ("MEMORY.md", "memory.md", "USER.md", "memory")


class HarvestError(ValueError):
    """A harvest refused (a usage error: the message names the path and the rule)."""


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _earlier_harvest(out: Path) -> bool:
    try:
        meta = json.loads((out / "dataset.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(meta, dict)
        and isinstance(meta.get("info"), dict)
        and ("harvest" in meta["info"])
    )


def check_out(out: str | os.PathLike[str], workspace: Path, places: TranscriptPlaces) -> Path:
    """OUT resolved, or ``HarvestError`` when harvest may not write there (module
    docstring). Nothing is created."""
    target = Path(out).expanduser().resolve()
    ws = workspace.resolve()
    guarded = [(ws, "the workspace"), (places.jsonl_dir.expanduser().resolve(), "the transcripts")]
    if places.store is not None:
        guarded.append((places.store.expanduser().resolve().parent, "the agent database's folder"))
    for place, what in guarded:
        if _inside(target, place):
            raise HarvestError(
                f"--out {target} is inside {what} ({place}): harvest never writes there;"
                " give a new folder outside it"
            )
        if _inside(place, target):
            raise HarvestError(
                f"--out {target} holds {what} ({place}): give a new folder that holds neither"
                " the workspace nor the transcripts"
            )
    if target.exists() and not target.is_dir():
        raise HarvestError(f"--out {target} is a file: give a folder (new or empty)")
    if target.is_dir():
        names = [p.name for p in target.iterdir()]
        memory = [n for n in _WORKSPACE_MARKERS if n in names]
        if memory:
            raise HarvestError(
                f"--out {target} holds {', '.join(memory)}: it looks like a memory workspace;"
                " give a new folder"
            )
        if names and not _earlier_harvest(target):
            raise HarvestError(
                f"--out {target} holds other files ({', '.join(sorted(names)[:3])}…): give a"
                " new or empty folder, or one an earlier memlab harvest wrote"
            )
    return target


def write_out(
    out: Path,
    *,
    meta: Mapping[str, Any],
    queries: list[dict[str, Any]],
    evidence: list[dict[str, Any]],
    shown: list[dict[str, Any]],
    report: Mapping[str, Any],
    snapshot: Mapping[str, Path] | None,
) -> None:
    """Write OUT (every file of ``OUTPUT_FILES``; with ``snapshot`` {relative path: source
    file}, a copy of those files under ``OUT/workspace``). Files are written to
    ``OUT/.harvest-tmp`` and moved into place; an earlier harvest's snapshot is replaced."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / _TMP
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    (tmp / "dataset.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    write_jsonl(tmp / "queries.jsonl", queries)
    write_jsonl(tmp / "evidence.jsonl", evidence)
    write_jsonl(tmp / "shown.jsonl", shown)
    with (tmp / "shown.trec").open("w", encoding="utf-8") as fh:
        for row in shown:
            if row.get("docno"):
                # score 1/rank: every TREC tool keeps the order the agent saw (the
                # deployed scores, in shown.jsonl, need not decrease: MMR reorders)
                fh.write(f"{row['qid']} Q0 {row['docno']} {row['rank']} {1.0 / row['rank']:.6f}")
                fh.write(" deployed\n")
    (tmp / "report.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    if snapshot is not None:
        for rel, src in snapshot.items():
            dst = tmp / SNAPSHOT_DIR / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    old = out / SNAPSHOT_DIR
    if old.is_dir() and _earlier_harvest(out):
        shutil.rmtree(old)
    for name in (*OUTPUT_FILES, SNAPSHOT_DIR):
        if (tmp / name).exists():
            os.replace(tmp / name, out / name)
    shutil.rmtree(tmp)
