"""memlab.files.sessions.transcript_places, the one rule of where an agent's transcripts are,
used by MemoryIndex's sessions source, `memlab search --corpus sessions` and harvest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlab.files.sessions import transcript_places
from tests.conftest import cli


def test_rule_order(tmp_path: Path) -> None:
    env = {"OPENCLAW_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path)}
    ws = tmp_path / "ws"
    given = transcript_places(ws, sessions=tmp_path / "t", agent="ops", env=env)
    assert (given.jsonl_dir, given.store, given.origin) == (tmp_path / "t", None, "given")
    agent = transcript_places(ws, agent=" Ops Team ", env=env)
    base = tmp_path / "state" / "agents" / "ops-team"
    assert agent.jsonl_dir == base / "sessions" and agent.agent == "ops-team"
    assert agent.store == base / "agent" / "openclaw-agent.sqlite" and agent.origin == "openclaw"
    assert "agent database" in agent.describe()
    default = transcript_places(ws, sessions="", agent="  ", env=env)
    assert (default.jsonl_dir, default.store, default.origin) == (
        ws / "sessions",
        None,
        "workspace",
    )
    home = transcript_places(ws, agent="main", env={"HOME": str(tmp_path)})
    assert home.jsonl_dir == tmp_path / ".openclaw" / "agents" / "main" / "sessions"


def test_memory_index_takes_its_sessions_folder_from_the_rule(tmp_path: Path) -> None:
    from memlab.store import MemoryIndex

    ws = tmp_path / "ws"
    ws.mkdir()
    assert MemoryIndex(ws, embedder=None).sessions_dir == ws.absolute() / "sessions"
    assert MemoryIndex(ws, embedder=None, sessions_dir=tmp_path / "t").sessions_dir == (
        tmp_path / "t"
    )


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "state"))
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- Lunch is at noon.\n")
    line = '{"role": "assistant", "content": "The gateway runs on the laptop."}\n'
    for folder, name in (
        (tmp_path / "elsewhere", "given"),
        (tmp_path / "state" / "agents" / "ops" / "sessions", "agent"),
    ):
        folder.mkdir(parents=True)
        (folder / f"{name}.jsonl").write_text(line)
    cfg = tmp_path / "openclaw.json"
    search = {"sources": ["memory", "sessions"]}
    cfg.write_text(json.dumps({"memory": {"search": search}, "agents": {"entries": {"ops": {}}}}))
    return ws, cfg, tmp_path


def _session_paths(*args: str) -> list[str]:
    code, out, err = cli(
        "search", *args, "gateway laptop", "--embedder", "hashing", "--corpus", "sessions",
        "--min-score", "0", "--json",
    )  # fmt: skip
    assert code == 0, err
    return [r["path"] for r in json.loads(out)["results"]]


def test_search_corpus_sessions_reads_the_same_places(agent: tuple[Path, Path, Path]) -> None:
    ws, cfg, root = agent
    assert _session_paths(str(ws), "--config", str(cfg)) == []  # no WORKSPACE/sessions
    given = _session_paths(str(ws), "--config", str(cfg), "--sessions", str(root / "elsewhere"))
    assert given == ["sessions/given.jsonl"]
    assert _session_paths(str(ws), "--config", str(cfg), "--agent", "ops") == [
        "sessions/agent.jsonl"
    ]
