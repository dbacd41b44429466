"""`memlab doctor`: the release's root-memory repair (spec §1), and that no crash loses a byte.

The kill tests run `--fix` in a subprocess and stop it at every step
(`MEMLAB_DOCTOR_CRASH_AFTER`, the module's test hook) and with SIGKILL at random
times, then check that MEMORY.md, memory.md and the archives together still hold
both original files, and that one more `--fix` finishes the job exactly once.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memlab.cli import main
from memlab.config.vocab import DOCTOR_CRASH_STEPS
from memlab.files import doctor

CANON = b"# Memory\n\n- the gateway runs on hopper\n"
LEGACY = "\ufeff\n# old notes\n\n- VLAN 42 is the lab network\n\n\n".encode()
REPO = Path(__file__).resolve().parents[1]


def make_ws(tmp: Path, canon: bytes = CANON, legacy: bytes | None = LEGACY) -> Path:
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    (ws / "MEMORY.md").write_bytes(canon)
    if legacy is not None:
        (ws / "memory.md").write_bytes(legacy)
    return ws


def archives(ws: Path) -> list[Path]:
    return sorted(ws.joinpath(*doctor.REPAIR_DIR).glob("*/memory.md"))


def snapshot(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in ws.rglob("*") if p.is_file()}


# ------------------------------------------------------------- the release's facts


def test_archive_stamp_is_iso_with_colons_and_dots_replaced():
    now = datetime(2026, 12, 1, 15, 10, 20, 123456, tzinfo=UTC)
    assert doctor.archive_stamp(now) == "2026-12-01T15-10-20-123Z"


def test_merged_text_is_the_release_section():
    merged = doctor.merged_bytes(b"# M\n- a\n", b"\n  old fact\n\n", "~/ws/x/memory.md")
    assert merged.decode() == (
        "# M\n- a\n"
        "\n## Imported From Legacy Root memory.md\n\n"
        "<!-- openclaw-root-memory-merge source=memory.md archived=~/ws/x/memory.md -->\n"
        "This content came from legacy root `memory.md`, which was shadowed by `MEMORY.md`.\n"
        "\nold fact\n"
    )


@pytest.mark.parametrize("canon", [b"", b"# M", b"# M\n"])
def test_merge_equals_release_when_memory_md_ends_in_at_most_one_newline(canon):
    # The release writes canonical.trimEnd() + "\n" + section.
    section = doctor.merge_section("x", "A")
    release = canon.decode().rstrip() + "\n" + section
    assert doctor.merged_bytes(canon, b"x", "A").decode() == release


def test_merge_keeps_trailing_whitespace_the_release_would_trim():
    merged = doctor.merged_bytes(b"# M\n\n  \n", b"x", "A")
    assert merged.startswith(b"# M\n\n  \n")


def test_js_trim_drops_the_bom_like_javascript():
    assert doctor.js_trim("\ufeff a \u3000\n") == "a"
    assert doctor.merge_section("\ufeffx", "A").endswith("\nx\n")


# ------------------------------------------------------------------ the command


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path, capsys):
    ws = make_ws(tmp_path)
    before = snapshot(ws)
    assert main(["doctor", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "split root memory" in out and "would append" in out and "--fix" in out
    assert snapshot(ws) == before
    assert not (ws / ".openclaw-repair").exists()


def test_fix_archives_appends_once_and_removes(tmp_path, capsys):
    ws = make_ws(tmp_path)
    assert main(["doctor", str(ws), "--fix"]) == 0
    (archive,) = archives(ws)
    assert archive.read_bytes() == LEGACY
    assert not (ws / "memory.md").exists()
    text = (ws / "MEMORY.md").read_bytes()
    assert text == doctor.merged_bytes(CANON, LEGACY, doctor.display_path(archive))
    assert text.count(doctor.MERGE_HEADING.encode()) == 1
    capsys.readouterr()
    assert main(["doctor", str(ws), "--fix"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert (ws / "MEMORY.md").read_bytes() == text and archives(ws) == [archive]


def test_identical_texts_are_archived_not_appended(tmp_path):
    ws = make_ws(tmp_path, CANON, CANON)
    assert main(["doctor", str(ws), "--fix"]) == 0
    assert (ws / "MEMORY.md").read_bytes() == CANON
    assert [a.read_bytes() for a in archives(ws)] == [CANON]


def test_legacy_only_workspace_is_left_alone(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "memory.md").write_bytes(LEGACY)
    assert main(["doctor", str(ws), "--fix"]) == 0
    assert "does not index it" in capsys.readouterr().out
    assert snapshot(ws) == {"memory.md": LEGACY}


def test_bad_workspace_is_a_usage_error(tmp_path, capsys):
    assert main(["doctor", str(tmp_path / "nope")]) == 2
    (tmp_path / "f").write_text("x")
    assert main(["doctor", str(tmp_path / "f")]) == 2
    assert "memlab: error:" in capsys.readouterr().err


def test_too_large_and_symlinked_files_are_not_repaired(tmp_path, capsys):
    big = make_ws(tmp_path, CANON, b"x" * (doctor.MAX_BYTES + 1))
    assert main(["doctor", str(big), "--fix"]) == 1
    assert "safe read limit" in capsys.readouterr().out
    assert (big / "memory.md").stat().st_size == doctor.MAX_BYTES + 1
    link = tmp_path / "link"
    link.mkdir()
    (link / "real.md").write_bytes(CANON)
    (link / "MEMORY.md").symlink_to("real.md")
    (link / "memory.md").write_bytes(LEGACY)
    assert main(["doctor", str(link), "--fix"]) == 1
    assert (link / "memory.md").read_bytes() == LEGACY and not archives(link)


def test_repeated_runs_never_overwrite_an_archive(tmp_path):
    ws = make_ws(tmp_path)
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    first = doctor.repair(ws, now=now).archive
    (ws / "memory.md").write_bytes(b"a second legacy file\n")
    second = doctor.repair(ws, now=now).archive
    assert first.parent.name == "2026-12-01T12-00-00-000Z"
    assert second.parent.name == "2026-12-01T12-00-00-000Z-2"
    assert first.read_bytes() == LEGACY and second.read_bytes() == b"a second legacy file\n"
    assert (ws / "MEMORY.md").read_bytes().count(doctor.MERGE_HEADING.encode()) == 2


def test_cross_device_falls_back_to_copy_and_unlink(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    real_rename = os.rename

    def rename(src, dst):
        if Path(src).name == "memory.md":
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(src, dst)

    monkeypatch.setattr(doctor.os, "rename", rename)
    result = doctor.repair(ws)
    assert not (ws / "memory.md").exists() and result.archive.read_bytes() == LEGACY


def test_unknown_crash_step_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(doctor.CRASH_ENV, "nowhere")
    with pytest.raises(ValueError, match="MEMLAB_DOCTOR_CRASH_AFTER"):
        doctor.repair(make_ws(tmp_path))


# ------------------------------------------------------------------- kill tests


@pytest.fixture
def kill_dir(tmp_path):
    """A folder for the kill loops: on tmpfs when there is one, where fsync costs nothing
    (a killed process loses no page cache, so the kill tests do not depend on fsync)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="memlab-doctor-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check_no_byte_lost(ws: Path, canon: bytes, legacy: bytes) -> None:
    """Old or new state: MEMORY.md is the original or the merge naming an archive that
    holds memory.md's bytes; memory.md's bytes are in memory.md or an archive."""
    text = (ws / "MEMORY.md").read_bytes()
    complete = [a for a in archives(ws) if a.read_bytes() == legacy]
    assert all(a.read_bytes() == legacy for a in archives(ws))
    if text != canon:
        assert any(
            text == doctor.merged_bytes(canon, legacy, doctor.display_path(a)) for a in complete
        )
    legacy_path = ws / "memory.md"
    assert (legacy_path.exists() and legacy_path.read_bytes() == legacy) or complete


def check_done(ws: Path, canon: bytes, legacy: bytes) -> None:
    assert not (ws / "memory.md").exists()
    text = (ws / "MEMORY.md").read_bytes()
    assert text.count(doctor.MERGE_HEADING.encode()) == 1
    (used,) = [
        a
        for a in archives(ws)
        if text == doctor.merged_bytes(canon, legacy, doctor.display_path(a))
    ]
    assert used.read_bytes() == legacy


def run_fix(ws: Path, crash: str | None = None) -> subprocess.Popen:
    """`memlab doctor WS --fix` as a user runs it, in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(doctor.CRASH_ENV, None)
    if crash:
        env[doctor.CRASH_ENV] = crash
    cmd = [sys.executable, "-m", "memlab.cli", "doctor", str(ws), "--fix"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)


def fork_fix(ws: Path, crash: str | None = None, disk_latency: float = 0.0) -> int:
    """`repair(ws)` in a forked child (memlab already imported: no start-up time, so a
    kill lands inside the work); `disk_latency` seconds added to each fsync in the child
    spread the work over time like a real disk does; returns the child's pid."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            if crash:
                os.environ[doctor.CRASH_ENV] = crash
            if disk_latency:
                fsync = os.fsync
                os.fsync = lambda fd: (time.sleep(disk_latency), fsync(fd))[1]
            doctor.repair(ws)
            code = 0
        finally:
            os._exit(code)
    return pid


def wait_code(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_cli_killed_at_a_step_then_rerun(tmp_path):
    ws = make_ws(tmp_path)
    assert run_fix(ws, crash="append").wait() == doctor.CRASH_EXIT
    check_no_byte_lost(ws, CANON, LEGACY)
    assert (ws / "memory.md").exists()  # removed last
    assert run_fix(ws).wait() == 0
    check_done(ws, CANON, LEGACY)


@pytest.mark.slow
@pytest.mark.parametrize("step", DOCTOR_CRASH_STEPS)
def test_crash_after_every_step_loses_nothing_and_a_rerun_finishes(kill_dir, step):
    ws = make_ws(kill_dir)
    assert wait_code(fork_fix(ws, crash=step)) == doctor.CRASH_EXIT
    check_no_byte_lost(ws, CANON, LEGACY)
    assert wait_code(fork_fix(ws, crash=step)) in (0, doctor.CRASH_EXIT)  # crash again
    check_no_byte_lost(ws, CANON, LEGACY)
    assert wait_code(fork_fix(ws)) == 0
    check_done(ws, CANON, LEGACY)
    assert len(archives(ws)) == 1  # an interrupted run's archive is reused, not copied


@pytest.mark.slow
def test_sigkill_at_random_times_loses_nothing(kill_dir):
    rng = random.Random(15)
    canon, legacy = CANON * 2_000, LEGACY * 2_000  # ~90 kB each
    probe = make_ws(kill_dir / "probe", canon, legacy)
    latency = 0.003
    t0 = time.perf_counter()
    assert wait_code(fork_fix(probe, disk_latency=latency)) == 0
    span = time.perf_counter() - t0
    kills, midway = 0, 0
    for trial in range(25):
        ws = make_ws(kill_dir / f"t{trial}", canon, legacy)
        for _ in range(2):
            pid = fork_fix(ws, disk_latency=latency)
            time.sleep(rng.uniform(0.0, 1.1) * span)
            os.kill(pid, signal.SIGKILL)
            wait_code(pid)
            kills += 1
            check_no_byte_lost(ws, canon, legacy)
            started = (ws / ".openclaw-repair").exists()
            midway += started and (ws / "memory.md").exists()
        assert wait_code(fork_fix(ws)) == 0
        check_done(ws, canon, legacy)
    print(f"{kills} kills, {midway} between the first and the last step")
    assert kills == 50 and midway > 0  # some kills landed between the first and last step
