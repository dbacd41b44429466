"""`memlab doctor`: OpenClaw's root-memory repair (release 2026.9.6), crash-safe.

Facts of the release (spec §1; read from `openclaw@2026.9.6`, `doctor-workspace`):

- Root memory files are found by their exact directory entries (`readdir`), so a
  case-insensitive file system never makes `memory.md` and `MEMORY.md` one file; each
  must be a regular file (`stat`).
- Only when **both** `MEMORY.md` and `memory.md` exist does the doctor warn ("split
  root durable memory files") and, with `--fix`, repair: `memory.md` goes to
  `.openclaw-repair/root-memory/<ISO time, ':' and '.' → '-'>/memory.md` and, when the
  two texts differ, `MEMORY.md` becomes `MEMORY.md.trimEnd() + "\\n" + section` with
  the section of :func:`merge_section` under `## Imported From Legacy Root memory.md`.
  Files over 8 MiB are skipped.
- A `memory.md`-only workspace: the release's doctor neither warns nor repairs (it is
  not indexed either). memlab does the same and says so (a rename would be safe, but
  a workspace memlab repairs must be one the release's doctor could have produced).

Where memlab differs, on purpose (a crash must lose nothing and a re-run must finish):

- Order: the archive copy is written and fsynced first (temp file, `os.replace`,
  folder fsync); `MEMORY.md` is replaced atomically (temp + fsync + `os.replace`);
  `memory.md` is removed last, by renaming it onto its identical archive copy (so the
  archive ends as the original file, as in the release), or by unlinking it when the
  archive is on another device. The release renames first and rewrites `MEMORY.md`
  in place, so a crash between the two leaves the text only in the archive.
- `MEMORY.md` keeps every byte: the section follows the file as it is (a newline
  added when it ends without one), where the release trims trailing white space;
  for a file ending in one newline, or none, the result is the release's.
- Idempotent: an archive holding `memory.md`'s exact bytes is reused, and a section
  already in `MEMORY.md` for it (any spelling of the workspace path) is not appended
  again. Archive folders are claimed with an exclusive `mkdir` (`<stamp>-2`, `-3` …
  when taken), never overwritten. One repair at a time (`flock` on the repair folder).
- Test hook: `MEMLAB_DOCTOR_CRASH_AFTER=STEP` (one of `vocab.DOCTOR_CRASH_STEPS`)
  makes the process `os._exit(86)` right after that step, for the kill tests.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memlab.config.vocab import DOCTOR_CRASH_STEPS

ROOT_MEMORY = "MEMORY.md"
LEGACY_ROOT_MEMORY = "memory.md"
REPAIR_DIR = (".openclaw-repair", "root-memory")
MERGE_HEADING = "## Imported From Legacy Root memory.md"
MERGE_MARKER = "<!-- openclaw-root-memory-merge source=memory.md archived="
MAX_BYTES = 8 * 1024 * 1024  # the release's ROOT_MEMORY_FILE_MAX_BYTES
CRASH_ENV = "MEMLAB_DOCTOR_CRASH_AFTER"
CRASH_EXIT = 86
_TMP_MEMORY = ".MEMORY.md.memlab-doctor.tmp"
_TMP_ARCHIVE = ".memory.md.memlab-doctor.tmp"
# JavaScript's String.prototype.trim set (WhiteSpace + LineTerminator), BOM included.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
_JS_SPACE += "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class DoctorError(OSError):
    """The repair could not be done safely (a file changed under it, a file too large);
    nothing was lost: the message names the file and what is where."""


@dataclass
class Diagnosis:
    """What the doctor sees at a workspace's root: `state` is "split" (both files),
    "legacy-only", "ok" (MEMORY.md alone) or "none"; `refusal` names why a split
    workspace cannot be repaired (a symlink, a file over 8 MiB), else ""."""

    workspace: Path
    state: str
    canonical_bytes: int | None = None
    legacy_bytes: int | None = None
    refusal: str = ""
    archives: list[Path] = field(default_factory=list)


@dataclass
class RepairResult:
    """What `repair` did: the archive file, whether it appended, reused an archive,
    or found the section already there, and the steps taken in order."""

    changed: bool
    archive: Path | None = None
    appended: bool = False
    reused_archive: bool = False
    already_appended: bool = False
    steps: list[str] = field(default_factory=list)


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript does it (its white-space set includes U+FEFF, which
    Python's `str.strip()` keeps)."""
    return text.strip(_JS_SPACE)


def archive_stamp(now: datetime) -> str:
    """The release's folder name: `now` as `toISOString()` (UTC, milliseconds, `Z`) with
    every ':' and '.' replaced by '-', e.g. 2026-12-01T15-10-20-123Z."""
    utc = now.astimezone(UTC)
    iso = utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    return iso.replace(":", "-").replace(".", "-")


def display_path(path: Path) -> str:
    """The release's `shortenHomePath`: the home folder prefix shown as `~` (as
    `$OPENCLAW_HOME` when that is set); other paths unchanged."""
    custom = os.environ.get("OPENCLAW_HOME", "").strip()
    home, prefix = (
        (os.path.expanduser(custom), "$OPENCLAW_HOME")
        if custom
        else (
            os.path.expanduser("~"),
            "~",
        )
    )
    text = str(path)
    if home and home != "/" and (text == home or text.startswith(home + "/")):
        return prefix + text[len(home) :]
    return text


def merge_section(legacy_text: str, archived: str) -> str:
    """The block appended to MEMORY.md: "\\n" + heading + "\\n\\n" + marker naming the
    archive + "\\n" + a line saying where it came from + "\\n\\n" + trim(legacy) + "\\n"."""
    return "\n".join(
        [
            "",
            MERGE_HEADING,
            "",
            f"{MERGE_MARKER}{archived} -->",
            "This content came from legacy root `memory.md`, which was shadowed by `MEMORY.md`.",
            "",
            js_trim(legacy_text),
            "",
        ]
    )


def merged_bytes(canonical: bytes, legacy: bytes, archived: str) -> bytes:
    """MEMORY.md after the merge: its bytes unchanged, "\\n" when it does not end in one,
    then `merge_section` (legacy decoded as UTF-8, invalid bytes as U+FFFD like Node)."""
    head = canonical if canonical.endswith(b"\n") else canonical + b"\n"
    section = merge_section(legacy.decode("utf-8", errors="replace"), archived)
    return head + section.encode("utf-8")


def section_present(canonical: bytes, legacy: bytes, archive: Path) -> bool:
    """True when MEMORY.md already holds the section for this archive folder: the marker
    line ending in `/<folder>/memory.md -->` (any spelling of the path before it)
    followed by the rest of the section, byte for byte."""
    tail = merge_section(legacy.decode("utf-8", errors="replace"), "\0").split("\0", 1)[1]
    end = f"/{archive.parent.name}/{LEGACY_ROOT_MEMORY}{tail}"
    pattern = re.escape(MERGE_MARKER) + r"[^\n]*" + re.escape(end)
    return re.search(pattern, canonical.decode("utf-8", errors="replace")) is not None


def _crash(step: str) -> None:
    # The kill-test hook (module docstring): die without cleanup, as a power cut would.
    if os.environ.get(CRASH_ENV) == step:
        os._exit(CRASH_EXIT)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _entry_kind(workspace: Path, names: set[str], name: str) -> str:
    if name not in names:
        return "absent"
    path = workspace / name
    if path.is_symlink():
        return "symlink"
    return "file" if path.is_file() else "other"


def diagnose(workspace: str | os.PathLike[str]) -> Diagnosis:
    """Look at the workspace's root memory files (exact entry names, as the release) and
    its existing archives; raises NotADirectoryError / FileNotFoundError for a bad path."""
    ws = Path(os.path.abspath(workspace))
    if not ws.exists():
        raise FileNotFoundError(f"{ws}: no such workspace folder")
    if not ws.is_dir():
        raise NotADirectoryError(f"{ws}: not a folder (memlab doctor takes a workspace)")
    names = set(os.listdir(ws))
    canon, legacy = (_entry_kind(ws, names, n) for n in (ROOT_MEMORY, LEGACY_ROOT_MEMORY))
    repair_root = ws.joinpath(*REPAIR_DIR)
    archives = sorted(repair_root.glob(f"*/{LEGACY_ROOT_MEMORY}")) if repair_root.is_dir() else []
    has_canon, has_legacy = canon in ("file", "symlink"), legacy in ("file", "symlink")
    state = {(True, True): "split", (False, True): "legacy-only", (True, False): "ok"}.get(
        (has_canon, has_legacy), "none"
    )
    diag = Diagnosis(ws, state, archives=archives)
    if has_canon:
        diag.canonical_bytes = (ws / ROOT_MEMORY).stat().st_size if canon == "file" else None
    if has_legacy:
        diag.legacy_bytes = (ws / LEGACY_ROOT_MEMORY).stat().st_size if legacy == "file" else None
    if state == "split":
        for name, kind, size in (
            (ROOT_MEMORY, canon, diag.canonical_bytes),
            (LEGACY_ROOT_MEMORY, legacy, diag.legacy_bytes),
        ):
            if kind == "symlink":
                diag.refusal = f"{ws / name} is a symlink: memlab doctor repairs regular files only"
            elif size is not None and size > MAX_BYTES:
                diag.refusal = (
                    f"{ws / name} is {size} bytes, over the release's safe read limit"
                    f" of {MAX_BYTES} bytes: repair skipped, as OpenClaw's doctor skips it"
                )
    return diag


def _write_durable(path: Path, data: bytes, tmp_name: str, step: str, mode: int | None) -> None:
    # Temp file beside the target, fsynced, then os.replace and a folder fsync: the
    # target is always either its old bytes or all of the new ones.
    tmp = path.with_name(tmp_name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if mode is None else mode)
    try:
        half = len(data) // 2
        os.write(fd, data[:half])
        _crash(f"{step}-partial")
        view = memoryview(data)[half:]
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)
    _crash(f"{step}-tmp")
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    _crash(step)


def _claim_archive_dir(repair_root: Path, stamp: str) -> Path:
    # Exclusive mkdir: an existing folder (same millisecond, a clock set back) is never
    # reused for a new archive; the next free suffix is taken instead.
    for n in range(1, 10_000):
        candidate = repair_root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            os.mkdir(candidate)
        except FileExistsError:
            continue
        _fsync_dir(repair_root)
        _crash("archive-dir")
        return candidate
    raise DoctorError(f"{repair_root}: no free archive folder name for {stamp}")


def _find_archive(repair_root: Path, canonical: bytes, legacy: bytes) -> tuple[Path | None, bool]:
    # An archive with memory.md's exact bytes (left by an interrupted run, or an earlier
    # identical one) is reused; one whose section MEMORY.md already holds comes first.
    matches = []
    for path in sorted(repair_root.glob(f"*/{LEGACY_ROOT_MEMORY}"), reverse=True):
        try:
            if (
                path.is_file()
                and path.stat().st_size == len(legacy)
                and path.read_bytes() == legacy
            ):
                matches.append(path)
        except OSError:
            continue
    for path in matches:
        if section_present(canonical, legacy, path):
            return path, True
    return (matches[0] if matches else None), False


def repair(workspace: str | os.PathLike[str], *, now: datetime | None = None) -> RepairResult:
    """`--fix`: archive memory.md, append it to MEMORY.md when the texts differ (once),
    remove memory.md; a no-op unless both root files exist. Raises DoctorError for a
    refused workspace or a file changed during the repair (nothing lost either way)."""
    hook = os.environ.get(CRASH_ENV)
    if hook and hook not in DOCTOR_CRASH_STEPS:
        raise ValueError(f"{CRASH_ENV}={hook!r}: not a step, expected one of {DOCTOR_CRASH_STEPS}")
    diag = diagnose(workspace)
    if diag.state != "split":
        return RepairResult(changed=False)
    if diag.refusal:
        raise DoctorError(diag.refusal)
    ws = diag.workspace
    canon_path, legacy_path = ws / ROOT_MEMORY, ws / LEGACY_ROOT_MEMORY
    repair_root = ws.joinpath(*REPAIR_DIR)
    created = not repair_root.is_dir()
    repair_root.mkdir(parents=True, exist_ok=True)
    if created:
        _fsync_dir(repair_root.parent)
        _fsync_dir(ws)
    _crash("repair-dir")
    lock = os.open(repair_root, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _repair_locked(ws, canon_path, legacy_path, repair_root, now)
    finally:
        os.close(lock)


def _repair_locked(
    ws: Path, canon_path: Path, legacy_path: Path, repair_root: Path, now: datetime | None
) -> RepairResult:
    if not (canon_path.is_file() and legacy_path.is_file()):
        return RepairResult(changed=False)  # another run finished while we waited
    canonical, legacy = canon_path.read_bytes(), legacy_path.read_bytes()
    result = RepairResult(changed=True)
    archive, result.already_appended = _find_archive(repair_root, canonical, legacy)
    result.reused_archive = archive is not None
    if archive is None:
        folder = _claim_archive_dir(repair_root, archive_stamp(now or datetime.now(UTC)))
        archive = folder / LEGACY_ROOT_MEMORY
        _write_durable(archive, legacy, _TMP_ARCHIVE, "archive", None)
        result.steps.append(f"archived {legacy_path.name} to {archive}")
    else:
        result.steps.append(f"reused archive {archive}")
    result.archive = archive
    if canonical != legacy and not result.already_appended:
        merged = merged_bytes(canonical, legacy, display_path(archive))
        if canon_path.read_bytes() != canonical:
            raise DoctorError(f"{canon_path} changed during the repair; run memlab doctor again")
        mode = canon_path.stat().st_mode & 0o7777
        _write_durable(canon_path, merged, _TMP_MEMORY, "append", mode)
        result.appended = True
        result.steps.append(f"appended {legacy_path.name} to {canon_path} under {MERGE_HEADING!r}")
    if legacy_path.read_bytes() != legacy:
        raise DoctorError(
            f"{legacy_path} changed during the repair; it is kept (its earlier text is in"
            f" {archive}); run memlab doctor again"
        )
    try:
        os.rename(legacy_path, archive)  # the archive becomes the original file
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        os.unlink(legacy_path)  # archive on another device: its copy is fsynced already
    _fsync_dir(ws)
    _fsync_dir(archive.parent)
    _crash("remove")
    result.steps.append(f"removed {legacy_path}")
    return result
