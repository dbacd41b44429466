"""Memory-file discovery and trust classes of OpenClaw 2026.9.6 (spec §1).

Order: root ``MEMORY.md`` (exact name, regular file), root ``USER.md``, every ``*.md`` under
``memory/`` (recursive, the whole list sorted by path in UTF-16 order, symlinks and any
``.openclaw-repair`` folder skipped), then each extra path; duplicates dropped by real path,
first kept. Root ``memory.md`` and ``DREAMS.md`` are not memory unless an extra path walks
them (``memory.md`` at the root never is). The walk itself is memlab's hardened one
(``memlab.files.workspace.walk_md_files``: no symlinks, no recursion limit, unreadable folders
skipped with a warning). Media files (the release's ``multimodal`` setting) are not listed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

from memlab.files.workspace import (
    relative_memory_path,
    resolve_workspace,
    walk_md_files,
    warn_symlinked_roots,
)

__all__ = [
    "ORIGIN_CLASSES",
    "CurrentMemoryFile",
    "ExtraPath",
    "classify_memory_path",
    "glob_match",
    "list_memory_files",
    "normalize_extra_paths",
]

ORIGIN_CLASSES = ("owner", "agent", "system", "untrusted")
REPAIR_DIR = ".openclaw-repair"
_ROOT_REPAIR = ".openclaw-repair/root-memory"
_USERS_USER_MD = re.compile(r"users/[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}/USER\.md")


@dataclass(frozen=True, slots=True)
class CurrentMemoryFile:
    """A memory file of the release: workspace-relative ``path`` (``/``; ``../`` outside),
    ``abspath``, its origin class (``agent``/``system``/``untrusted``; ``owner`` only when
    recorded, which memlab does not read) and whether it is a curated root."""

    path: str
    abspath: Path
    origin_class: str
    curated_root: bool
    source: str = "memory"


@dataclass(frozen=True, slots=True)
class ExtraPath:
    """An ``extraPaths`` entry: absolute ``path`` and an optional glob ``pattern`` (``/``)."""

    path: Path
    pattern: str = ""


def _utf16_key(p: Path | str) -> bytes:
    # JavaScript sorts strings by UTF-16 code units, which differs from code-point order
    # only for astral vs U+E000–FFFF characters.
    return str(p).encode("utf-16-be", "surrogatepass")


def _expand_home(value: str) -> str:
    # Only "~" and "~/…" (or "~\\…"), as the release: "~user" stays literal.
    if value == "~":
        return str(Path.home())
    if value.startswith(("~/", "~\\")):
        return os.path.join(Path.home(), value[2:])
    return value


def normalize_extra_paths(
    workspace: Path, extra_paths: Iterable[str | os.PathLike[str] | Mapping[str, str]]
) -> list[ExtraPath]:
    """Configured ``extraPaths`` → ``ExtraPath`` list: strings or ``{path, pattern}``, trimmed,
    empty paths dropped, duplicates of (path, pattern) dropped (first position kept), ``~``
    expanded, resolved against ``workspace`` (``..`` folded, symlinks not resolved), ``\\``
    in patterns → ``/``. A mapping without a string ``path`` raises ``ValueError``."""
    seen: dict[tuple[str, str], None] = {}
    for entry in extra_paths:
        if isinstance(entry, Mapping):
            raw, pattern = entry.get("path"), entry.get("pattern") or ""
            if not isinstance(raw, str) or not isinstance(pattern, str):
                raise ValueError(f"extraPaths entry needs a string path (and pattern): {entry!r}")
            key = (raw.strip(), pattern.strip())
        else:
            key = (os.fspath(entry).strip(), "")
        if key[0]:
            seen.setdefault(key, None)
    out = []
    for raw, pattern in seen:
        absolute = os.path.normpath(os.path.join(workspace, _expand_home(raw)))
        out.append(ExtraPath(Path(absolute), pattern.replace("\\", "/")))
    return out


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    segments = pattern.split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            # any number of segments, none starting with "." (dot files need an explicit ".")
            parts.append(r"(?!\.)[^/]+(?:/(?!\.)[^/]+)*" if last else r"(?:(?!\.)[^/]+/)*")
            continue
        rx = "" if seg.startswith(".") else r"(?!\.)"
        j = 0
        while j < len(seg):
            ch = seg[j]
            if ch == "*":
                rx += "[^/]*"
            elif ch == "?":
                rx += "[^/]"
            elif ch == "[" and (end := seg.find("]", j + 2)) > 0:
                body = seg[j + 1 : end]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                rx += "[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]"
                j = end
            else:
                rx += re.escape(ch)
            j += 1
        parts.append(rx + ("" if last else "/"))
    return re.compile("".join(parts))


def _expand_braces(pattern: str) -> list[str]:
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth, commas = 0, []
    for k in range(start, len(pattern)):
        if pattern[k] == "{":
            depth += 1
        elif pattern[k] == "}":
            depth -= 1
            if depth == 0:
                if not commas:
                    break
                bounds = [start, *commas, k]
                head, tail = pattern[:start], pattern[k + 1 :]
                out: list[str] = []
                for a, b in pairwise(bounds):
                    out.extend(_expand_braces(head + pattern[a + 1 : b] + tail))
                return out
        elif pattern[k] == "," and depth == 1:
            commas.append(k)
    return [pattern[: start + 1] + p for p in _expand_braces(pattern[start + 1 :])]


def glob_match(relative: str, pattern: str) -> bool:
    """Whether ``relative`` (``/``-separated) matches glob ``pattern``: ``*``/``?``/``[…]``
    within one segment, ``**`` any number of segments, ``{a,b}`` alternatives; ``*`` and
    ``**`` never match a segment starting with ``.`` (minimatch's default). A subset of
    Node's ``path.matchesGlob`` (no extglobs)."""
    return any(_glob_regex(p).fullmatch(relative) for p in _expand_braces(pattern))


def _skip_root_aux(workspace: Path, abspath: Path) -> bool:
    # The legacy root memory.md and the doctor's archive are never memory.
    rel = os.path.relpath(abspath, workspace)
    if rel.startswith("..") or os.path.isabs(rel):
        return False
    rel = rel.replace("\\", "/")
    return rel == "memory.md" or rel == _ROOT_REPAIR or rel.startswith(_ROOT_REPAIR + "/")


def _in_repair_dir(folder: Path, p: Path) -> bool:
    return REPAIR_DIR in p.relative_to(folder).parts[:-1]


def _walk(folder: Path, workspace: Path, extra: ExtraPath | None) -> list[Path]:
    files = []
    for p in walk_md_files(folder):
        if _in_repair_dir(folder, p) or _skip_root_aux(workspace, p):
            continue
        relative = p.relative_to(folder).as_posix()
        if extra is not None and extra.pattern and not glob_match(relative, extra.pattern):
            continue
        files.append(p)
    return sorted(files, key=_utf16_key)


def _lstat(p: Path) -> os.stat_result | None:
    try:
        return p.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None


def classify_memory_path(workspace: Path, abspath: Path) -> tuple[bool, str]:
    """``(curated_root, origin_class)`` of a memory file by its real path in the real workspace.

    Curated roots: root ``MEMORY.md``, ``memory.md``, ``USER.md``. ``system``: root
    ``DREAMS.md``/``dreams.md``, ``memory/dreaming/**``, ``memory/.dreams/**``. ``agent``: the
    curated roots, ``users/<id>/USER.md`` and ``memory/**.md``. Anything else, or outside the
    workspace (or unresolvable) → ``untrusted``.
    """
    try:
        ws, real = os.path.realpath(workspace, strict=True), os.path.realpath(abspath, strict=True)
    except OSError:
        return False, "untrusted"
    rel = os.path.relpath(real, ws)
    if rel == "." or rel.startswith("..") or os.path.isabs(rel):
        return False, "untrusted"
    rel = rel.replace(os.sep, "/")
    seg = rel.split("/")
    curated = len(seg) == 1 and seg[0] in ("MEMORY.md", "memory.md", "USER.md")
    if (len(seg) == 1 and seg[0] in ("DREAMS.md", "dreams.md")) or (
        seg[0] == "memory" and len(seg) > 1 and seg[1] in ("dreaming", ".dreams")
    ):
        return curated, "system"
    workspace_memory = (
        curated
        or bool(_USERS_USER_MD.fullmatch(rel))
        or (seg[0] == "memory" and seg[-1].endswith(".md"))
    )
    return curated, "agent" if workspace_memory else "untrusted"


def list_memory_files(
    workspace: str | os.PathLike[str],
    extra_paths: Sequence[str | os.PathLike[str] | Mapping[str, str]] = (),
) -> list[CurrentMemoryFile]:
    """The release's memory files of ``workspace``, in its order (see the module docstring).

    Extra paths: a folder is walked (its files sorted, ``pattern`` matched against the path
    relative to the folder by ``glob_match``); a file is kept if its name ends ``.md``; a
    symlink, a missing path, root ``memory.md`` or the doctor's archive are skipped silently.
    A missing workspace raises ``memlab.files.workspace.WorkspaceError``.
    """
    ws = resolve_workspace(workspace)
    found: list[Path] = []
    try:
        root_names = {e.name: e for e in os.scandir(ws)}
    except OSError:
        root_names = {}
    entry = root_names.get("MEMORY.md")
    if entry is not None and entry.is_file(follow_symlinks=False):
        found.append(ws / "MEMORY.md")
    user = _lstat(ws / "USER.md")
    if user is not None and stat.S_ISREG(user.st_mode):
        found.append(ws / "USER.md")
    mem = _lstat(ws / "memory")
    if mem is not None and stat.S_ISDIR(mem.st_mode):
        found.extend(_walk(ws / "memory", ws, None))
    # skipped as the release skips them, but said (memlab.files.workspace.warn_symlinked_roots)
    linked = [
        name
        for name, st in (("USER.md", user), ("memory", mem))
        if st is not None and stat.S_ISLNK(st.st_mode)
    ]
    if entry is not None and entry.is_symlink():
        linked.insert(0, "MEMORY.md")
    warn_symlinked_roots(ws, linked)
    for extra in normalize_extra_paths(ws, extra_paths):
        if _skip_root_aux(ws, extra.path):
            continue
        st = _lstat(extra.path)
        if st is None or stat.S_ISLNK(st.st_mode):
            continue
        if stat.S_ISDIR(st.st_mode):
            found.extend(_walk(extra.path, ws, extra))
        elif stat.S_ISREG(st.st_mode) and extra.path.name.endswith(".md"):
            found.append(extra.path)
    out: list[CurrentMemoryFile] = []
    seen: set[str] = set()
    for p in found:
        real = os.path.realpath(p)
        if real in seen:
            continue
        seen.add(real)
        curated, origin = classify_memory_path(ws, p)
        out.append(CurrentMemoryFile(relative_memory_path(p, ws), p, origin, curated))
    return out
