"""What a user reads, said right.

Each test drives the command line as a user does (a subprocess, or ``memlab.cli.main``
in-process where only the printed text matters) and checks a message that was wrong:
``watch`` exited 0 on Ctrl-C (docs: 130); a dataset not found did not say where memlab
looked; ``memory/`` as a symlink was ignored without a word; ``search --no-sync`` on a
never-indexed workspace built it silently; a 2-character query under the trigram tokenizer
found nothing without the reason; ``doctor`` printed "None bytes"; tables printed "no
threshold" as −1, 0 or −1e+06; ``--set`` had no did-you-mean; a long query was echoed
whole; scores printed as 0.000 in keyword-only results.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.embed import HashingEmbedder
from memlab.pipeline.presets import PRESETS, preset
from memlab.store import MemoryIndex
from tests.conftest import cli, write

REPO = Path(__file__).resolve().parents[1]


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    return {**base, **extra}


def memlab(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memlab.cli", *args],
        capture_output=True,
        text=True,
        env=env(tmp_path, **extra),
        cwd=REPO,
        timeout=120,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "# Memory\n\n- the gateway token GATEWAY42 lives in the vault\n")
    for d in range(1, 6):
        write(root, f"memory/2026-01-0{d}.md", f"# day {d}\n- the gateway restarted on day {d}\n")
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def _ctrl_c_reaches_python() -> None:
    # As at a terminal: SIGINT at its default, so Python turns it into KeyboardInterrupt.
    # A test run started in the background (`make test &`, nohup, some CI runners)
    # inherits SIGINT ignored, and an ignored signal stays ignored across exec.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_watch_exits_130_on_ctrl_c(ws: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlab.cli", "watch", str(ws), "--embedder", "hashing"],
        stderr=subprocess.PIPE,
        text=True,
        env=env(tmp_path),
        cwd=REPO,
        preexec_fn=_ctrl_c_reaches_python,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # the first sync is done once it says it is watching
            if "watching" in line:
                break
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataset", "env_var", "what"),
    [
        ("locomo", "MEMLAB_LOCOMO", "JSON file (a list of conversations"),
        ("beam", "MEMLAB_BEAM", "folder (<split>/<n>/chat.json"),
        ("longmemeval", "MEMLAB_LONGMEMEVAL", "one LongMemEval JSON file"),
    ],
)
def test_a_dataset_not_found_says_where_memlab_looked(
    tmp_path: Path, dataset: str, env_var: str, what: str
) -> None:
    gone = tmp_path / "nowhere"
    proc = memlab(tmp_path, "eval", dataset, "--embedder", "hashing", **{env_var: str(gone)})
    assert proc.returncode == 2
    err = proc.stderr
    assert f"${env_var}={gone} (no such" in err and what in err, err
    assert f"set {env_var}" in err and "--path" in err
    given_path = memlab(tmp_path, "eval", dataset, "--path", str(gone), "--embedder", "hashing")
    assert f"the path given, {gone} (no such" in given_path.stderr


def test_locate_data_is_one_rule_for_every_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The order (path given, the variable, the default) and the message RealMem's loader
    will share: an explicit wrong place is never swapped for another."""
    from memlab.datasets.base import DataNotFoundError, locate_data

    default = tmp_path / "shared" / "realmem"
    default.mkdir(parents=True)
    monkeypatch.delenv("MEMLAB_REALMEM", raising=False)
    args = ("RealMem", "MEMLAB_REALMEM", default, "RealMem's dialogue folder")
    assert locate_data(*args, folder=True) == default
    with pytest.raises(DataNotFoundError, match=r"the path given, .*typo \(no such folder\)"):
        locate_data(*args, tmp_path / "typo", folder=True)
    monkeypatch.setenv("MEMLAB_REALMEM", str(tmp_path / "elsewhere"))
    with pytest.raises(DataNotFoundError, match=r"\$MEMLAB_REALMEM=.*elsewhere \(no such"):
        locate_data(*args, folder=True)
    monkeypatch.delenv("MEMLAB_REALMEM")
    default.rmdir()
    with pytest.raises(FileNotFoundError) as err:
        locate_data(*args, folder=True)
    msg = str(err.value)
    assert "$MEMLAB_REALMEM (not set)" in msg and f"the default folder {default}" in msg
    assert "RealMem is RealMem's dialogue folder" in msg


@pytest.mark.slow
def test_a_symlinked_memory_folder_is_warned_about(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "# Memory\n")
    write(tmp_path, "real/2026-01-05.md", "- the heron nests by the lake\n")
    (ws / "memory").symlink_to(tmp_path / "real")
    for argv in (["files", str(ws)], ["search", str(ws), "heron", "--embedder", "hashing"]):
        proc = memlab(tmp_path, *argv)
        assert proc.returncode == 0
        said = [ln for ln in proc.stderr.splitlines() if "is a symlink" in ln]
        assert len(said) == 1 and said[0].startswith("memlab: warning: "), proc.stderr
        assert "none of the files under it is memory" in said[0]
    assert "lake" not in proc.stdout  # nothing under the symlink was searched


def test_no_sync_on_a_never_indexed_workspace_says_it_builds(ws: Path, home: Path) -> None:
    argv = ("search", str(ws), "GATEWAY42", "--embedder", "hashing", "--no-sync")
    code, out, err = cli(*argv, "--min-score", "0")
    assert code == 0 and "MEMORY.md" in out
    assert "no index of" in err and "not a first build" in err
    code, _, err = cli(*argv)
    assert code == 0 and "no index of" not in err  # built once, said once


def test_a_short_word_under_trigram_says_why(ws: Path, home: Path) -> None:
    tri = ["--embedder", "hashing", "--fts-tokenizer", "trigram"]
    code, out, _ = cli("search", str(ws), "go", *tri, "--preset", "bm25")
    assert code == 0 and out.startswith("no results for 'go'")
    assert "the trigram index matches words of 3 or more characters: 'go' cannot match" in out
    code, out, _ = cli("search", str(ws), "gateway to", *tri, "--json", "--min-score", "0")
    res = json.loads(out)
    assert (
        "'to' cannot match, so the keyword leg (every word must match) finds nothing"
        in (res["warning"])
    )
    assert res["fallback"] is False  # a note, not a fallback
    code, out, err = cli("search", str(ws), "gateway", *tri, "--min-score", "0")
    assert "cannot match" not in out + err  # nothing to say


def test_doctor_names_a_symlink_instead_of_none_bytes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "# A\n")
    write(tmp_path, "other.md", "# B\n")
    (ws / "memory.md").symlink_to(tmp_path / "other.md")
    proc = memlab(tmp_path, "doctor", str(ws), "--fix")
    assert proc.returncode == 1
    assert "MEMORY.md (4 bytes) and memory.md (a symlink)" in proc.stdout
    assert "None" not in proc.stdout


@pytest.mark.slow
def test_no_threshold_prints_none_under_one_rule(tmp_path: Path) -> None:
    """memlab eval's table: every preset whose min_score removes nothing reads "none"
    (wsum −1, rrf 0, memlab-best −10⁶ …), OpenClaw's 0.35 reads 0.35."""
    from memlab.stages.floor import threshold_text

    proc = memlab(
        tmp_path,
        *("eval", "synthetic", "--days", "6", "--embedder", "hashing"),
        *("--preset", "openclaw,wsum,rrf,bm25,vector,memlab-best"),
    )
    assert proc.returncode == 0, proc.stderr
    mins = {}
    for line in proc.stdout.splitlines():
        cells = line.split()
        if cells and cells[0] in ("openclaw", "wsum", "rrf", "bm25", "vector", "memlab-best"):
            mins[cells[0]] = cells[5]
    assert mins == {
        "openclaw": "0.35",
        **{n: "none" for n in ("wsum", "rrf", "bm25", "vector", "memlab-best")},
    }
    assert [threshold_text(preset(n)) == "none" for n in PRESETS].count(False) == 3  # openclaw*
    assert threshold_text(preset("memlab-best", min_score=0.0)) == "0"  # a real cut there


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(PRESETS)),
    query=st.sampled_from(["gateway", "token vault", "day 3 restarted", "lake heron"]),
)
def test_the_floor_is_below_every_score(tmp_path_factory, name: str, query: str) -> None:
    """The rule's ground: no system ever scores below ``score_floor`` (so "none" is true)."""
    from memlab.stages.floor import score_floor

    root = tmp_path_factory.getbasetemp() / "floor"
    if not root.exists():
        write(root / "ws", "MEMORY.md", "# Memory\n\n- the gateway token lives in the vault\n")
        for d in range(1, 8):
            write(root / "ws", f"memory/2026-01-0{d}.md", f"# day {d}\n- restarted on day {d}\n")
    p = preset(name)
    spec = p.retrieval_spec()
    idx = MemoryIndex(
        root / "ws",
        db_path=root / f"{spec.fts_tokenizer}-{spec.memory_files}.sqlite",
        embedder=HashingEmbedder(32),
        fts_tokenizer=spec.fts_tokenizer or "unicode61",
        memory_files=spec.memory_files,
        progress=False,
    )
    cs = p.retrieve(idx, [query])
    final = p.scores(cs)["final"]
    floor = score_floor(p)
    assert np.all(np.isnan(final) | (final >= floor - 1e-9)), (name, floor, np.nanmin(final))
    assert math.isfinite(floor) or name == "openclaw-current"
    idx.close()


def test_set_has_a_did_you_mean(ws: Path, home: Path, tmp_path: Path) -> None:
    code, _, err = cli("search", str(ws), "x", "--embedder", "hashing", "--set", "vector_wieght=1")
    assert code == 2 and "--set vector_wieght: not a pipeline parameter" in err
    assert "(did you mean vector_weight?)" in err and "allowed keys: " in err
    code, _, err = cli("synth", str(tmp_path / "new"), "--set", "dayz=4")
    assert code == 2 and "unknown setting 'dayz' (did you mean days?)" in err
    assert not (tmp_path / "new").exists()


def test_a_long_query_is_echoed_cut(ws: Path, home: Path) -> None:
    from memlab.cli.common import quoted

    query = "zq" * 5000
    code, out, _ = cli("search", str(ws), query, "--embedder", "hashing")
    assert code == 0 and len(out) < 300
    assert out.startswith(f"no results for {quoted(query)}") and "(10000 characters)" in out
    assert quoted("short") == "'short'"


def test_keyword_only_scores_print_with_enough_digits(ws: Path, home: Path) -> None:
    """A word in every file has an IDF near 0: its BM25 scores are ~1e-6, which three
    decimals printed as 0.000 for every result. Now they print as what they are."""
    from memlab.cli.common import score_texts

    code, out, err = cli("search", str(ws), "gateway", "--embedder", "none", "--preset", "bm25")
    assert code == 0, err
    scores = [line.split()[1] for line in out.splitlines()[2:]]
    assert scores and all(float(s) > 0 for s in scores), out
    assert score_texts([0.5, 0.25]) == ["0.500", "0.250"]
    assert score_texts([1e-9, 2e-9]) == ["1e-09", "2e-09"]
    assert score_texts([0.12341, 0.12349, 0.12349]) == ["0.1234", "0.1235", "0.1235"]
    assert score_texts([1.0, 1.0]) == ["1.000", "1.000"]  # a real tie stays a tie
    assert score_texts([]) == []


@pytest.mark.slow
def test_the_watch_cli_run_is_quick_to_stop_after_max_seconds(ws: Path, tmp_path: Path) -> None:
    """--max-seconds is not an interruption: exit 0."""
    t0 = time.monotonic()
    proc = memlab(tmp_path, "watch", str(ws), "--embedder", "hashing", "--max-seconds", "0.5")
    assert proc.returncode == 0 and time.monotonic() - t0 < 60
