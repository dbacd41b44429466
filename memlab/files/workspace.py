"""Which files are memory: discovery, path safety and reading (spec section 1).

An OpenClaw workspace keeps memory as Markdown: ``MEMORY.md`` (and the legacy
``memory.md``) at the root, ``memory/**/*.md`` below it, plus configured extra
paths. Symlinks are never followed, files are de-duplicated by real path (first
occurrence wins) and only ``.md`` files count.

Size: one module because listing and reading apply one rule, never follow a
symlink, and must agree: ``discover_memory_files`` (``_walk_md``, ``_dedupe``)
lists, ``read_memory_file`` (``_open_regular``: ``O_NOFOLLOW`` folder by
folder) reads later; ``MemoryFileError`` reports both.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
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
    """One memory file could not be read or decoded; the others are unaffected.

    ``stat``: the file's own ``lstat``/``fstat`` when the failure was met after the file was
    found (not UTF-8, not a regular file, a symlink, permission denied), None when there was
    no file to stat (vanished, a folder on its path swapped for a symlink). A sync remembers
    a file skipped with a stat, so it is not "changed" again until that stat moves.
    """

    def __init__(self, path: str, reason: str, stat: os.stat_result | None = None) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.stat = stat


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
    """Path of ``abspath`` relative to ``workspace`` with ``/`` separators (``../`` if outside).

    Both are absolute: a path inside the workspace is its suffix after the workspace
    prefix (no system call); any other goes through ``os.path.relpath``.
    """
    a, w = str(abspath), str(workspace).rstrip(os.sep) or os.sep
    prefix = w if w.endswith(os.sep) else w + os.sep
    if a.startswith(prefix) and os.path.isabs(a):
        return Path(a[len(prefix) :]).as_posix()
    return Path(os.path.relpath(abspath, workspace)).as_posix()


def _lstat(p: Path) -> os.stat_result | None:
    # lstat, never stat: a symlink is seen as one even when its target is a file.
    try:
        return p.lstat()
    except OSError:
        return None


def _walk_md(folder: Path) -> Iterator[Path]:
    """Yield ``*.md`` regular files under ``folder`` recursively, sorted, never via symlinks.

    Depth-first in name order, with an explicit stack: a hostile tree nested thousands of
    folders deep must not exhaust Python's recursion limit. A folder that cannot be listed
    (permissions, removed meanwhile, path too long) is skipped with a ``UserWarning``.
    """
    stack: list[Iterator[os.DirEntry[str]]] = []

    def listing(d: str) -> Iterator[os.DirEntry[str]]:
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            warnings.warn(f"cannot list {d}: {exc.strerror or exc}", stacklevel=4)
            entries = []
        return iter(entries)

    stack.append(listing(str(folder)))
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        try:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(listing(entry.path))
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".md"):
                yield Path(entry.path)
        except OSError:  # vanished between listing and the type check
            continue


walk_md_files = _walk_md  # public name: other discovery rules walk with the same hardening


def discover_memory_files(
    workspace: str | os.PathLike[str],
    extra_paths: Sequence[str | os.PathLike[str]] = (),
    *,
    default_memory: bool = True,
) -> list[MemoryFile]:
    """List a workspace's memory files in OpenClaw's order.

    Order: ``MEMORY.md``, legacy ``memory.md``, ``memory/**/*.md`` (recursive,
    entries sorted by name at each level), then each extra path in the given
    order (a file, or a folder walked recursively for ``*.md``). Extra paths
    may be absolute, relative to the workspace, or start with ``~``.

    Edge cases: symlinks are never followed or listed (root files, the
    ``memory`` folder itself, entries inside it, extra paths; a root file or ``memory``
    that is a symlink is warned about, ``warn_symlinked_roots``); a file seen
    twice (same real path, e.g. via an extra path) keeps its first occurrence;
    non-``.md`` files are ignored; a missing extra path is skipped with a
    ``UserWarning``; a missing workspace raises ``WorkspaceError``. When both
    ``MEMORY.md`` and ``memory.md`` exist as distinct files both are indexed,
    ``MEMORY.md`` first (on a case-insensitive file system they are one file
    and the real-path de-duplication keeps ``MEMORY.md``). ``default_memory=False``
    (a QMD config's ``includeDefaultMemory: false``) lists the extra paths only.
    """
    ws = resolve_workspace(workspace)
    candidates: list[Path] = []
    symlinked: list[str] = []
    for name in ROOT_MEMORY_FILES if default_memory else ():
        p = ws / name
        st = _lstat(p)  # one stat per root entry: its kind decides
        if st is not None and stat.S_ISLNK(st.st_mode):
            symlinked.append(name)
        elif st is not None and stat.S_ISREG(st.st_mode) and p.name in _listdir_names(ws):
            candidates.append(p)
    mem_dir = ws / MEMORY_DIR
    st = _lstat(mem_dir) if default_memory else None
    if st is not None and stat.S_ISLNK(st.st_mode):
        symlinked.append(MEMORY_DIR)
    elif st is not None and stat.S_ISDIR(st.st_mode):
        candidates.extend(_walk_md(mem_dir))
    warn_symlinked_roots(ws, symlinked)
    for extra in _expand_extra_paths(ws, extra_paths):
        candidates.extend(extra)
    return _dedupe(candidates, ws)


_SYMLINKS_WARNED: set[Path] = set()


def warn_symlinked_roots(ws: Path, names: Sequence[str]) -> None:
    """Warn (``UserWarning``) about root memory entries (``MEMORY.md``, ``memory`` …) the
    caller found to be symlinks: they are never followed (spec §1), so the file, or every
    file under the folder, is left out of the memory — said once per process, not silently.
    """
    for name in names:
        p = ws / name
        if p in _SYMLINKS_WARNED:  # every search discovers the files: say it once
            continue
        _SYMLINKS_WARNED.add(p)
        try:
            target = os.readlink(p)
        except OSError:
            target = "?"
        what = "none of the files under it is" if name == MEMORY_DIR else "it is not"
        warnings.warn(
            f"{p} is a symlink (to {target}); memlab, like OpenClaw, never follows symlinks,"
            f" so {what} memory: move the real {'folder' if name == MEMORY_DIR else 'file'}"
            " into the workspace to index it",
            stacklevel=3,
        )


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
    # Every candidate was checked to be a regular file, not a symlink, so its real
    # path is its folder's real path plus its name: one realpath per folder, not per
    # file (a search stats the workspace on every call; see docs/reliability.md).
    seen: set[str] = set()
    out: list[MemoryFile] = []
    real_dirs: dict[str, str] = {}
    for p in paths:
        parent, name = os.path.split(str(p))
        if parent not in real_dirs:
            real_dirs[parent] = os.path.realpath(parent)
        real = os.path.join(real_dirs[parent], name)
        if real in seen:
            continue
        seen.add(real)
        out.append(MemoryFile(relative_memory_path(p.absolute(), ws), p.absolute()))
    return out


# Byte-order marks of encodings memlab does not decode (UTF-32 first: its LE mark starts
# with UTF-16's).
_FOREIGN_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
_LONE_CR = re.compile(r"\r(?!\n)")
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _open_error(name: str, exc: OSError, what: str = "file") -> MemoryFileError:
    if exc.errno == errno.ENOENT:
        return MemoryFileError(name, f"{what} vanished before it could be read")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return MemoryFileError(name, "permission denied")
    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and what == "folder":
        return MemoryFileError(name, "a folder on its path is a symlink (never followed)")
    if exc.errno == errno.ELOOP:
        return MemoryFileError(name, "is a symlink (never followed)")
    return MemoryFileError(name, exc.strerror or str(exc))


def _open_regular(
    abspath: str | os.PathLike[str], name: str, root: str | os.PathLike[str] | None
) -> int:
    """Open a regular file read-only without following a symlink anywhere below ``root``.

    With ``root``, every folder from ``root`` down is opened relative to its parent with
    ``O_NOFOLLOW | O_DIRECTORY`` (``openat``), so a folder swapped for a symlink after
    discovery cannot redirect the read outside the memory files; without it only the last
    component is protected. The file itself is opened ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO
    named ``*.md`` must not block the reader forever) and must be a regular file.
    """
    dir_fd: int | None = None
    target: str | os.PathLike[str] = abspath
    try:
        if root is not None:
            try:
                parts = Path(os.path.abspath(abspath)).relative_to(os.path.abspath(root)).parts
            except ValueError:
                raise MemoryFileError(name, "outside its memory root") from None
            if not parts:
                raise MemoryFileError(name, "not a regular file")
            try:
                dir_fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
                for part in parts[:-1]:
                    nxt = os.open(
                        part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=dir_fd
                    )
                    os.close(dir_fd)
                    dir_fd = nxt
            except OSError as exc:
                raise _open_error(name, exc, "folder") from None
            target = parts[-1]
        try:
            # lstat first: a device or FIFO is rejected before open() can touch it.
            st = os.stat(target, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            raise _open_error(name, exc) from None
        if stat.S_ISLNK(st.st_mode):
            raise MemoryFileError(name, "is a symlink (never followed)", st)
        if not stat.S_ISREG(st.st_mode):
            raise MemoryFileError(name, "not a regular file", st)
        flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
        try:
            fd = os.open(target, flags, dir_fd=dir_fd)
        except OSError as exc:
            err = _open_error(name, exc)
            err.stat = st  # permission denied: a chmod moves its ctime, and it is read again
            raise err from None
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between the lstat and the open
        os.close(fd)
        raise MemoryFileError(name, "not a regular file")
    return fd


def read_file_bytes(
    abspath: str | os.PathLike[str],
    display_path: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and its ``fstat`` taken before reading.

    Never follows a symlink (see ``_open_regular``; with ``root`` none of the folders
    below it either) and never blocks on a FIFO or device. The stat is taken before the
    read so that a file growing meanwhile looks changed at the next sync, never the
    reverse. Raises ``MemoryFileError`` with the path and a reason.
    """
    name = display_path or str(abspath)
    fd = _open_regular(abspath, name, root)
    try:
        st = os.fstat(fd)
        chunks = []
        while True:
            try:
                block = os.read(fd, 1 << 20)
            except OSError as exc:
                raise MemoryFileError(name, exc.strerror or str(exc), st) from None
            if not block:
                break
            chunks.append(block)
    finally:
        os.close(fd)
    return b"".join(chunks), st


def decode_memory_text(data: bytes, name: str = "<bytes>") -> str:
    """Decode a memory file's bytes: strict UTF-8, a UTF-8 byte-order mark dropped, lone
    CR line ends (a CR not followed by LF) turned into LF.

    CRLF is kept as is, as OpenClaw keeps it (lines split on ``\\n``; the CR stays at the
    end of each line's text, which FTS5 and the embedders treat as whitespace). NUL bytes
    are kept. Raises ``MemoryFileError`` for UTF-16/UTF-32 text (by byte-order mark, or a
    BOM-less UTF-16 recognised by NUL bytes filling every other byte) and for any other
    invalid UTF-8, naming the first bad byte.
    """
    for bom, enc in _FOREIGN_BOMS:
        if data.startswith(bom):
            raise MemoryFileError(
                name,
                f"{enc} text (byte-order mark {bom.hex(' ').upper()}), not UTF-8; memory files"
                f" must be UTF-8 (convert with: iconv -f {enc} -t UTF-8)",
            )
    if b"\x00" in data and _looks_like_utf16(data):
        raise MemoryFileError(
            name,
            "looks like UTF-16 without a byte-order mark (NUL in every other byte), not UTF-8;"
            " memory files must be UTF-8 (convert with: iconv -f UTF-16LE -t UTF-8)",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(
            name, f"not valid UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r})"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = _LONE_CR.sub("\n", text)
    return text


def _looks_like_utf16(data: bytes) -> bool:
    # ASCII-range UTF-16 has NUL in every other byte: >= 90 % of one parity, <= 10 % of the
    # other, over the first 4 KiB. A crash-zeroed tail (NULs at both parities) does not match.
    head = data[:4096]
    if len(head) < 8:
        return False
    even, odd = head[0::2], head[1::2]
    ze, zo = even.count(0) / len(even), odd.count(0) / len(odd)
    return (ze >= 0.9 and zo <= 0.1) or (zo >= 0.9 and ze <= 0.1)


def read_memory_file(
    abspath: str | os.PathLike[str],
    display_path: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
) -> FileText:
    """Read a memory file as text with its sha256, mtime and size.

    Reading: ``read_file_bytes`` (no symlink followed — with ``root``, no folder below
    ``root`` either —, no FIFO or device, stat taken before the read). Decoding:
    ``decode_memory_text`` (strict UTF-8, UTF-8 BOM dropped, lone CR → LF, CRLF and NUL
    kept). ``hash`` is sha256 of the text as indexed. Raises ``MemoryFileError`` (with the
    path, a reason and, when the file was there, its ``stat``) for a missing, unreadable,
    non-regular, UTF-16/32 or non-UTF-8 file; callers report it and go on with the others.
    """
    name = display_path or str(abspath)
    data, st = read_file_bytes(abspath, name, root=root)
    try:
        text = decode_memory_text(data, name)
    except MemoryFileError as exc:
        exc.stat = st  # the stat taken before the read: the bytes that did not decode
        raise
    return FileText(text=text, hash=sha256_text(text), mtime=st.st_mtime, size=st.st_size)
