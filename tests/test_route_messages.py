"""What a user meets on the way from the lab to the agent, said right: a folder dataset
whose workspace is missing or empty, ``--corpus sessions`` with no transcripts, and
``memlab eval --save`` over an earlier run (refused unless ``--overwrite``, which replaces
only a folder holding an experiment).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli, write


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder dataset: one question, its evidence, and a workspace with one note."""
    root = tmp_path / "ds"
    write(root, "queries.jsonl", json.dumps({"qid": "q1", "query": "green tea"}) + "\n")
    ev = {"qid": "q1", "path": "MEMORY.md", "start_line": 3, "end_line": 3}
    write(root, "evidence.jsonl", json.dumps(ev) + "\n")
    write(root, "workspace/MEMORY.md", "# Memory\n\nAlice likes green tea.\n")
    return root


def eval_folder(root: Path, *args: str) -> tuple[int, str, str]:
    return cli(
        "eval", "folder", "--path", str(root), "--embedder", "hashing", "--preset", "bm25", *args
    )


@pytest.mark.parametrize(
    "breaks, says",
    [
        (
            lambda ws: (ws.parent / "dataset.json").write_text('{"workspaces": {"c1": "w1"}}'),
            "workspace 'c1'",
        ),
        (
            lambda ws: [p.unlink() for p in ws.rglob("*") if p.is_file()] and ws.rmdir(),
            "(no workspace/ folder in it, so the folder itself",
        ),
        (lambda ws: (ws / "MEMORY.md").unlink(), "holds no memory file"),
        (lambda ws: (ws / "MEMORY.md").write_text(""), "holds only empty memory files"),
    ],
)
def test_eval_folder_names_an_unsearchable_workspace(
    folder: Path, private_cache, breaks, says
) -> None:
    breaks(folder / "workspace")
    code, _, err = eval_folder(folder)
    assert code == 2 and "Traceback" not in err
    assert f"dataset folder {folder}" in err and says in err, err


def test_corpus_sessions_says_where_it_looked(
    small_workspace: Path, tmp_path: Path, private_cache
) -> None:
    ws = small_workspace
    args = ("search", str(ws), "coffee", "--embedder", "hashing", "--corpus", "sessions")
    code, out, _ = cli(*args)
    assert code == 0 and "try --min-score" not in out
    assert "does not cover sessions (sources: memory)" in out and str(ws / "sessions") in out
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(
        json.dumps({"agents": {"defaults": {"memorySearch": {"sources": ["memory", "sessions"]}}}})
    )
    code, out, _ = cli(*args, "--config", str(cfg))
    assert code == 0 and "try --min-score" not in out
    assert (
        f"no session transcripts: memlab looked in {ws / 'sessions'}, which does not exist" in out
    )
    (ws / "sessions").mkdir()
    code, out, _ = cli(*args, "--config", str(cfg), "--json")
    assert "which holds no *.jsonl transcript" in json.loads(out)["warning"]
    write(ws, "sessions/s1.jsonl", json.dumps({"role": "user", "content": "I like coffee"}) + "\n")
    code, out, _ = cli(*args, "--config", str(cfg), "--json", "--min-score", "0")
    res = json.loads(out)
    assert "warning" not in res and res["results"][0]["source"] == "sessions"


def test_eval_save_refuses_to_overwrite(folder: Path, tmp_path: Path, private_cache) -> None:
    saved = tmp_path / "run"
    assert eval_folder(folder, "--save", str(saved))[0] == 0
    (saved / "notes.txt").write_text("mine")
    first = (saved / "experiment.json").read_text()
    code, _, err = eval_folder(folder, "--save", str(saved))
    assert code == 2 and "holds an earlier experiment; add --overwrite" in err
    assert (saved / "experiment.json").read_text() == first
    (saved / "evidence_ranks.csv").write_text("stale")  # written by an earlier run only
    code, _, err = eval_folder(folder, "--save", str(saved), "--overwrite")
    assert code == 0, err
    assert not (saved / "evidence_ranks.csv").exists()  # the earlier run's files replaced
    assert (saved / "notes.txt").read_text() == "mine"  # nothing else touched
    other = tmp_path / "other"
    write(other, "a.txt", "x")
    for extra in ([], ["--overwrite"]):
        code, _, err = eval_folder(folder, "--save", str(other), *extra)
        assert code == 2 and str(other) in err, err
    assert (other / "a.txt").read_text() == "x"
    code, _, err = eval_folder(folder, "--overwrite")
    assert code == 2 and "--overwrite goes with --save" in err
