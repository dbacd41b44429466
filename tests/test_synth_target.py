"""``memlab synth`` never writes into a folder it did not make, and no hint sends a user
there.

``memlab eval synthetic --path ws`` on a user's workspace never suggests ``memlab synth
ws``, ``memlab synth`` refuses a folder that holds memory files or files it did not write,
and a second run speaks to a command-line user in flags, not in ``overwrite=True``. Driven
as a user would, through the CLI in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write

REPO = Path(__file__).resolve().parents[1]


def memlab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "memlab.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({"MEMORY.md": "# Memory\n- mine\n"}, "holds memory files (MEMORY.md)"),
        ({"memory/2026-01-05.md": "- mine\n"}, "holds memory files (memory)"),
        ({"USER.md": "- me\n"}, "holds memory files (USER.md)"),
        ({"notes.txt": "mine\n"}, "holds files memlab did not write (notes.txt)"),
        ({"workspace/MEMORY.md": "# mine\n"}, "does not name"),
    ],
)
def test_synth_refuses_a_folder_it_did_not_write(
    tmp_path: Path, files: dict[str, str], said: str
) -> None:
    ws = tmp_path / "ws"
    for rel, text in files.items():
        write(ws, rel, text)
    before = tree(ws)
    for extra in ([], ["--overwrite"]):
        proc = memlab(tmp_path, "synth", str(ws), "--days", "5", *extra)
        assert proc.returncode == 2, proc.stderr
        assert said in proc.stderr and "--overwrite" not in proc.stderr, proc.stderr
        assert tree(ws) == before  # not one byte written


@pytest.mark.slow
def test_synth_writes_a_new_folder_and_replaces_only_its_own_corpus(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    assert memlab(tmp_path, "synth", str(out), "--days", "5").returncode == 0
    again = memlab(tmp_path, "synth", str(out), "--days", "5")
    assert again.returncode == 2
    assert "holds a synthetic corpus generated before; --overwrite replaces it" in again.stderr
    assert "overwrite=True" not in again.stderr
    assert memlab(tmp_path, "synth", str(out), "--days", "5", "--overwrite").returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert memlab(tmp_path, "synth", str(empty), "--days", "5").returncode == 0


def test_the_eval_hint_never_names_the_users_folder_as_a_target(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "# Memory\n- mine\n")
    proc = memlab(tmp_path, "eval", "synthetic", "--path", str(ws))
    assert proc.returncode == 2
    assert f"memlab synth {ws}" not in proc.stderr, proc.stderr
    assert "memlab synth NEW_FOLDER" in proc.stderr
    assert tree(ws) == {"MEMORY.md": b"# Memory\n- mine\n"}
