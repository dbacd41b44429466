"""Which files are memory: discovery, path safety and reading (spec section 1).

An OpenClaw workspace keeps memory as Markdown: ``MEMORY.md`` (and the legacy
``memory.md``) at the root, ``memory/**/*.md`` below it, plus configured extra
paths. Symlinks are never followed, files are de-duplicated by real path (first
occurrence wins) and only ``.md`` files count.
"""

from __future__ import annotations

import hashlib
import os
import stat
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT_MEMORY_FILES = ("MEMORY.md", "memory.md")
MEMORY_DIR = "memory"


class WorkspaceError(ValueError):
    """The workspace itself is unusable (missing, not a folder)."""


class MemoryFileError(OSError):
    """One memory file could not be read or decoded; the others are unaffected."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A discovered memory file.

    ``path`` is relative to the workspace with ``/`` separators (extra files
    outside the workspace get ``../`` paths); ``abspath`` is where it is read
    from; ``source`` is ``"memory"`` (or ``"sessions"`` for transcripts).
    """

    path: str
    abspath: Path
    source: str = "memory"


@dataclass(frozen=True, slots=True)
class FileText:
    """A memory file's content: text, sha256 of its UTF-8 bytes, mtime (s), size (bytes)."""

    text: str
    hash: str
    mtime: float
    size: int


def sha256_text(text: str) -> str:
    """sha256 hex digest of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_workspace(workspace: str | os.PathLike[str]) -> Path:
    """Expand ``~``, make absolute and check the workspace is an existing folder.

    Raises ``WorkspaceError`` when it does not exist or is not a folder.
    """
    ws = Path(workspace).expanduser()
    if not ws.exists():
        raise WorkspaceError(f"workspace not found: {ws}")
    if not ws.is_dir():
        raise WorkspaceError(f"workspace is not a folder: {ws}")
    return ws.absolute()


def relative_memory_path(abspath: Path, workspace: Path) -> str:
    """Path of ``abspath`` relative to ``workspace`` with ``/`` separators (``../`` if outside)."""
    return Path(os.path.relpath(abspath, workspace)).as_posix()


def _is_regular_md(p: Path) -> bool:
    # lstat, never stat: a symlink is rejected even when its target is a file.
    try:
        st = p.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and p.suffix == ".md"


def _is_real_dir(p: Path) -> bool:
    try:
        return stat.S_ISDIR(p.lstat().st_mode)
    except OSError:
        return False


def _walk_md(folder: Path) -> Iterator[Path]:
    """Yield ``*.md`` regular files under ``folder`` recursively, sorted, never via symlinks."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        warnings.warn(f"cannot list {folder}: {exc.strerror or exc}", stacklevel=3)
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk_md(Path(entry.path))
        elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".md"):
            yield Path(entry.path)


def discover_memory_files(
    workspace: str | os.PathLike[str],
    extra_paths: Sequence[str | os.PathLike[str]] = (),
) -> list[MemoryFile]:
    """List a workspace's memory files in OpenClaw's order.

    Order: ``MEMORY.md``, legacy ``memory.md``, ``memory/**/*.md`` (recursive,
    entries sorted by name at each level), then each extra path in the given
    order (a file, or a folder walked recursively for ``*.md``). Extra paths
    may be absolute, relative to the workspace, or start with ``~``.

    Edge cases: symlinks are never followed or listed (root files, the
    ``memory`` folder itself, entries inside it, extra paths); a file seen
    twice (same real path, e.g. via an extra path) keeps its first occurrence;
    non-``.md`` files are ignored; a missing extra path is skipped with a
    ``UserWarning``; a missing workspace raises ``WorkspaceError``. When both
    ``MEMORY.md`` and ``memory.md`` exist as distinct files both are indexed,
    ``MEMORY.md`` first (on a case-insensitive file system they are one file
    and the real-path de-duplication keeps ``MEMORY.md``).
    """
    ws = resolve_workspace(workspace)
    candidates: list[Path] = []
    for name in ROOT_MEMORY_FILES:
        p = ws / name
        if _is_regular_md(p) and p.name in _listdir_names(ws):
            candidates.append(p)
    mem_dir = ws / MEMORY_DIR
    if _is_real_dir(mem_dir):
        candidates.extend(_walk_md(mem_dir))
    for extra in _expand_extra_paths(ws, extra_paths):
        candidates.extend(extra)
    return _dedupe(candidates, ws)


def _listdir_names(folder: Path) -> set[str]:
    # On a case-insensitive file system `memory.md` would "exist" as an alias of
    # MEMORY.md; only names really present in the folder count.
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def _expand_extra_paths(
    ws: Path, extra_paths: Sequence[str | os.PathLike[str]]
) -> Iterator[list[Path]]:
    for raw in extra_paths:
        p = Path(raw).expanduser()
        if not p.is_absolute():
            p = ws / p
        try:
            st = p.lstat()
        except OSError:
            warnings.warn(f"extra path not found, skipped: {raw}", stacklevel=3)
            continue
        if stat.S_ISLNK(st.st_mode):
            warnings.warn(f"extra path is a symlink, skipped: {raw}", stacklevel=3)
            continue
        if stat.S_ISDIR(st.st_mode):
            yield list(_walk_md(p))
        elif stat.S_ISREG(st.st_mode) and p.suffix == ".md":
            yield [p]
        else:
            warnings.warn(f"extra path is not a .md file or folder, skipped: {raw}", stacklevel=3)


def _dedupe(paths: Iterable[Path], ws: Path) -> list[MemoryFile]:
    seen: set[str] = set()
    out: list[MemoryFile] = []
    for p in paths:
        real = os.path.realpath(p)
        if real in seen:
            continue
        seen.add(real)
        out.append(MemoryFile(relative_memory_path(p.absolute(), ws), p.absolute()))
    return out


def read_memory_file(abspath: str | os.PathLike[str], display_path: str | None = None) -> FileText:
    """Read a memory file as UTF-8 text with its sha256, mtime and size.

    The file is opened with ``O_NOFOLLOW`` so a symlink swapped in after
    discovery is refused. A UTF-8 byte-order mark is dropped from the text
    (the hash is of the text as indexed). Raises ``MemoryFileError`` (with the
    path and a reason) for a missing, unreadable, non-regular or non-UTF-8
    file; callers report it and go on with the other files.
    """
    name = display_path or str(abspath)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(abspath, flags)
    except FileNotFoundError:
        raise MemoryFileError(name, "file vanished before it could be read") from None
    except PermissionError:
        raise MemoryFileError(name, "permission denied") from None
    except OSError as exc:
        if exc.errno == getattr(__import__("errno"), "ELOOP", -1):
            raise MemoryFileError(name, "is a symlink (never followed)") from None
        raise MemoryFileError(name, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MemoryFileError(name, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(
            name, f"not valid UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r})"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return FileText(text=text, hash=sha256_text(text), mtime=st.st_mtime, size=st.st_size)
