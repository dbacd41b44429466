"""Bad ``memory_search`` arguments are the caller's mistake, answered as such everywhere.

An empty query or ``maxResults: -3`` is never the "memory unavailable" payload (which
would send the agent to check the index and the provider): one rule
(``memlab.tools.check_search_arguments``) gives the MCP client the protocol's tool error
naming the argument and its range, and the command line a usage error (exit 2) naming its
own flag, for plain, ``--json`` and ``--explain`` alike.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

import memlab
from tests.conftest import cli

REPO = Path(__file__).resolve().parents[1]
# (arguments, what the error must say): the argument's name and its allowed range
BAD_TOOL_CALLS = [
    ({"query": ""}, "query must be a non-empty text"),
    ({"query": "   "}, "query must be a non-empty text"),
    ({"query": "tea", "maxResults": -3}, "maxResults must be an integer >= 1, got -3"),
    ({"query": "tea", "maxResults": 0}, "maxResults must be an integer >= 1, got 0"),
    ({"query": "tea", "corpus": "web"}, "corpus must be one of memory, sessions, all"),
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\nAlice likes green tea.\n")
    return root


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["openclaw", "openclaw-current"])
def test_mcp_answers_bad_arguments_with_a_tool_error(ws: Path, tmp_path: Path, preset: str) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memlab.cli", "mcp", str(ws), "--embedder", "hashing", "--preset", preset],
        env=env(tmp_path),
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            assert client.server_info is not None
            assert client.server_info.version == memlab.__version__
            schema = {t.name: t for t in (await client.list_tools()).tools}["memory_search"]
            assert schema.input_schema["properties"]["maxResults"]["minimum"] == 1
            for arguments, named in BAD_TOOL_CALLS:
                if preset == "openclaw-current" and "corpus" in arguments:
                    named = "corpus must be one of: memory, wiki, all, sessions"
                res = await client.call_tool("memory_search", arguments)
                text = res.content[0].text
                assert res.is_error, (arguments, res)
                assert named in text and "unavailable" not in text, (arguments, text)
            ok = await client.call_tool("memory_search", {"query": "green tea", "minScore": 0})
            assert not ok.is_error and ok.structured_content["results"]

    asyncio.run(main())


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["", "--json"], "QUERY must be a non-empty text"),
        (["  "], "QUERY must be a non-empty text"),
        (["tea", "--explain", "--preset", "memlab-best"], None),
        (["tea", "--max-results", "-3"], "--max-results must be an integer >= 1, got -3"),
        (["tea", "--max-results", "0", "--json"], "--max-results must be an integer >= 1, got 0"),
        (["tea", "--min-score", "nan"], "--min-score must be a finite number, got nan"),
        (["", "--preset", "openclaw-current", "--json"], "QUERY must be a non-empty text"),
    ],
)
def test_cli_applies_the_same_rule(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], named: str | None
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, out, err = cli("search", str(ws), *argv, "--embedder", "hashing")
    if named is None:  # a good call, for contrast
        assert code == 0, err
        return
    assert code == 2 and f"memlab: error: {named}" in err, (code, err)
    assert out == "" and "unavailable" not in err


def test_cli_in_a_subprocess_refuses_an_empty_query(ws: Path, tmp_path: Path) -> None:
    """As a shell user runs it: the empty query is a usage error, stdout stays empty."""
    proc = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "search", str(ws), "", "--embedder", "hashing"],
        capture_output=True,
        text=True,
        env=env(tmp_path),
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "QUERY must be a non-empty text" in proc.stderr
    assert json.dumps(proc.stderr)  # one line of text, no traceback
    assert "Traceback" not in proc.stderr
