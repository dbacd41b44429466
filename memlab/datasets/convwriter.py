"""Writing conversation data sets as OpenClaw workspaces (shared by the LoCoMo, BEAM,
LongMemEval and RealMem loaders): daily files (or one dated file per session) with one
line per turn, cache folders built beside their final place and renamed in, a completion
marker written last.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from memlab import paths
from memlab.datasets.base import Dataset, load_folder

LINE_BREAKS = re.compile(r"[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+")
_SAFE_DIRNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MARKER_NAME = ".memlab-complete.json"


@dataclass
class Session:
    """One conversation session to write: its time, heading line and one line per turn."""

    when: datetime
    heading: str
    lines: list[str]


@dataclass
class Placed:
    """Where a written session landed: workspace-relative path and 1-based line numbers."""

    path: str
    heading_line: int
    first_line: int  # line of turn 0; turn i is on first_line + i


def write_daily_files(workspace: Path, sessions: Sequence[Session]) -> list[Placed]:
    """Write sessions into ``memory/YYYY-MM-DD.md`` files, one per UTC date.

    Sessions on the same date share a file in the order given, separated by a
    blank line; each is its heading line then one line per turn. Returns, for
    each session (same order as given), its file and line numbers (1-based).
    """
    by_date: dict[str, list[int]] = {}
    for i, s in enumerate(sessions):
        by_date.setdefault(s.when.astimezone(UTC).date().isoformat(), []).append(i)
    placed: list[Placed | None] = [None] * len(sessions)
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    for day, members in sorted(by_date.items()):
        rel = f"memory/{day}.md"
        out: list[str] = []
        for i in members:
            if out:
                out.append("")
            out.append(sessions[i].heading)
            placed[i] = Placed(rel, len(out), len(out) + 1)
            out.extend(sessions[i].lines)
        (workspace / rel).write_text("\n".join(out) + "\n", encoding="utf-8")
    return [p for p in placed if p is not None]


def session_file_name(when: datetime) -> str:
    """``memory/YYYY-MM-DD.md`` for a session at UTC midnight, else
    ``memory/YYYY-MM-DD-HHMM.md`` (OpenClaw's name for another log of one day): the name
    ``memlab.store.asof.unit_time`` reads back as ``when``. ValueError when ``when`` has
    seconds (a name holds minutes)."""
    t = when.astimezone(UTC)
    if t.second or t.microsecond:
        raise ValueError(f"a session file name holds minutes, not seconds: {t.isoformat()}")
    day = t.date().isoformat()
    return f"memory/{day}.md" if (t.hour, t.minute) == (0, 0) else f"memory/{day}-{t:%H%M}.md"


def write_session_files(workspace: Path, sessions: Sequence[Session]) -> list[Placed]:
    """Write each session into its own dated file, ``session_file_name(session.when)``:
    its heading line, then one line per turn. Returns, per session (same order), its file
    and line numbers (1-based). ValueError when two sessions share a minute (they would
    share a file, and a file is a session)."""
    names = [session_file_name(s.when) for s in sessions]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"two sessions at the same minute would share {dup[0]}")
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    placed = []
    for name, s in zip(names, sessions, strict=True):
        (workspace / name).write_text("\n".join([s.heading, *s.lines]) + "\n", encoding="utf-8")
        placed.append(Placed(name, 1, 2))
    return placed


def flatten(text: str) -> str:
    """``text`` on one line: each run of line breaks becomes one space; ends stripped."""
    return LINE_BREAKS.sub(" ", text).strip()


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes; ``FileNotFoundError`` naming it when absent."""
    if not path.is_file():
        raise FileNotFoundError(f"dataset file not found: {path}")
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_json(path: Path, what: str) -> Any:
    """Parse a JSON file (gzip-compressed when its name ends in ``.gz``), raising
    ``ValueError`` that names the file and ``what`` it should be."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return json.load(fh)
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError, gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"{path} is not a {what} JSON file: {exc}") from exc


def cache_dir(name: str) -> Path:
    """``$XDG_CACHE_HOME/memlab/<name>``, with ``~/.cache`` when XDG_CACHE_HOME is unset
    (``memlab.paths.cache_dir``)."""
    return paths.cache_dir(name)


def check_dirname(name: str, what: str) -> str:
    """``name`` if it is safe as one folder name (letters, digits, ``._-``), else ``ValueError``."""
    if not _SAFE_DIRNAME.match(name):
        raise ValueError(f"{what} {name!r} cannot be used as a workspace folder name")
    return name


def line_evidence(
    qid: str, ids: Sequence[Any], lookup: dict[Any, tuple[str, int]], prefix: str = ""
) -> list[dict[str, Any]]:
    """One evidence row per message id: the single line ``lookup[id]`` = (path, line) the
    conversation writer placed it on, grade 1, span id ``prefix + str(id)``."""
    rows = []
    for mid in ids:
        rel, line = lookup[mid]
        rows.append(
            {
                "qid": qid,
                "path": rel,
                "start_line": line,
                "end_line": line,
                "grade": 1,
                "span_id": f"{prefix}{mid}",
            }
        )
    return rows


def evidence_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Evidence rows as a DataFrame that keeps the evidence columns even when there are none."""
    cols = ["qid", "path", "start_line", "end_line", "grade", "span_id"]
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=cols)


def _read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / MARKER_NAME).read_text())
    except (OSError, ValueError):
        return None


def convert_grouped(
    loader: str,
    sources: list[Path],
    *,
    group_of: Callable[[Path], str],
    files_of: Callable[[Path], Sequence[Path]],
    build: Callable[[list[Path], Path, str], None],
    where: Path,
    what: str,
    format_version: int,
    out_dir: str | Path | None,
    overwrite: bool,
) -> Dataset:
    """A data set of grouped sources (a BEAM chat folder, a RealMem persona file: one
    workspace group each) converted once into memlab's folder format and then reused.

    Group names (``group_of``) must be unique (``ValueError`` naming ``where`` and ``what``).
    The cache key is sha256 over each source's group name and the sha256 of each of its
    files (``files_of``), in order, so any edit gives a new one; the folder is ``out_dir``
    or ``cache_dir(f"{loader}-<key[:12]>")``, filled by ``build(sources, folder, key)``
    through `materialise` (a stale default folder is rebuilt; a given one only with
    ``overwrite``)."""
    groups = [group_of(s) for s in sources]
    if len(set(groups)) != len(groups):
        dup = sorted({g for g in groups if groups.count(g) > 1})
        raise ValueError(f"{where}: two {what} share the name {dup[0]!r}")
    h = hashlib.sha256()
    for source, group in zip(sources, groups, strict=True):
        h.update(group.encode())
        for f in files_of(source):
            h.update(sha256_file(f).encode())
    digest = h.hexdigest()
    marker = {"loader": loader, "format_version": format_version, "source_sha256": digest}
    target = cache_dir(f"{loader}-{digest[:12]}") if out_dir is None else Path(out_dir).expanduser()
    return materialise(
        target,
        marker,
        lambda root: build(sources, root, digest),
        overwrite=overwrite,
        rebuild_stale=out_dir is None,
    )


def materialise(
    target: Path,
    marker: dict[str, Any],
    build: Callable[[Path], None],
    *,
    overwrite: bool,
    rebuild_stale: bool,
) -> Dataset:
    """Build a dataset folder at ``target`` once, then reuse it.

    Reused when ``target/.memlab-complete.json`` equals ``marker`` (and not
    ``overwrite``). Otherwise ``build`` fills a sibling temporary folder that is
    renamed into place with the marker written last, so an interrupted build
    never looks complete. A non-empty ``target`` without a marker is never
    deleted; one with a different marker is replaced only when ``overwrite`` or
    ``rebuild_stale`` (memlab's own cache) is set.
    """
    existing = _read_marker(target)
    if existing == marker and not overwrite:
        return load_folder(target)
    if target.exists() and not target.is_dir():
        raise FileExistsError(f"out_dir {target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()):
        if existing is None:
            raise FileExistsError(
                f"out_dir {target} is not empty and was not written by memlab "
                f"(no {MARKER_NAME}); choose a new or empty folder"
            )
        if not (overwrite or rebuild_stale):
            raise FileExistsError(
                f"out_dir {target} holds a dataset built from another source or loader version "
                f"({existing}); pass overwrite=True to rebuild it"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        build(tmp)
        (tmp / MARKER_NAME).write_text(json.dumps(marker, indent=2) + "\n")
        if target.is_dir():
            shutil.rmtree(target)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process finished the same build first; use its copy.
            if _read_marker(target) != marker:
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return load_folder(target)
