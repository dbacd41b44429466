"""The MCP tools' arguments read by one rule (``memlab.tools.arguments``): OpenClaw 2026.9.6's
coercion (``"3"`` is 3, ``"abc"`` and 2.5 are not integers), memlab's own message for every
argument of every tool (never pydantic's text and URL), an unknown argument refused; and
``memlab mcp --preset-file``: ``memory_status`` names the file and its parameters.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.tools import SearchArgumentError
from memlab.tools.arguments import read_tool_arguments, tool_schema

CORPORA = ("memory", "sessions", "all")

ACCEPTED = [
    ("memory_search", {"query": "tea", "maxResults": "3"}, {"query": "tea", "maxResults": 3}),
    ("memory_search", {"query": "tea", "maxResults": " 3 "}, {"query": "tea", "maxResults": 3}),
    ("memory_search", {"query": "tea", "maxResults": "3.0"}, {"query": "tea", "maxResults": 3}),
    ("memory_search", {"query": "tea", "maxResults": 3.0}, {"query": "tea", "maxResults": 3}),
    ("memory_search", {"query": "tea", "maxResults": True}, {"query": "tea", "maxResults": 1}),
    ("memory_search", {"query": "tea", "minScore": "0.25"}, {"query": "tea", "minScore": 0.25}),
    ("memory_search", {"query": "tea", "minScore": None}, {"query": "tea"}),
    ("memory_search", {"query": 5}, {"query": "5"}),
    ("memory_search", {"query": True}, {"query": "true"}),
    (
        "memory_get",
        {"path": "MEMORY.md", "from": "2", "lines": 4},
        {"path": "MEMORY.md", "from": 2, "lines": 4},
    ),
    ("memory_status", {}, {}),
]
REFUSED = [
    (
        "memory_search",
        {"query": "tea", "maxResults": "abc"},
        "maxResults must be an integer >= 1, got 'abc'",
    ),
    (
        "memory_search",
        {"query": "tea", "maxResults": 2.5},
        "maxResults must be an integer >= 1, got 2.5",
    ),
    (
        "memory_search",
        {"query": "tea", "maxResults": "2.5"},
        "maxResults must be an integer >= 1, got '2.5'",
    ),
    (
        "memory_search",
        {"query": "tea", "maxResults": 0},
        "maxResults must be an integer >= 1, got 0",
    ),
    (
        "memory_search",
        {"query": "tea", "maxResults": False},
        "maxResults must be an integer >= 1, got False",
    ),
    (
        "memory_search",
        {"query": "tea", "maxResults": [3]},
        "maxResults must be an integer >= 1, got [3]",
    ),
    ("memory_search", {"query": "tea", "minScore": "x"}, "minScore must be a number, got 'x'"),
    ("memory_search", {"query": ["tea"]}, "query must be a text, got ['tea']"),
    ("memory_search", {"query": "tea", "corpus": {"a": 1}}, "corpus must be a text"),
    ("memory_search", {"maxResults": 3}, "memory_search needs query"),
    (
        "memory_search",
        {"query": "tea", "maxResult": 3},
        "'maxResult' is not one of them (did you mean maxResults?)",
    ),
    ("memory_get", {}, "memory_get needs path"),
    ("memory_get", {"path": {"p": 1}}, "path must be a text"),
    ("memory_get", {"path": "MEMORY.md", "from": 0}, "from must be an integer >= 1, got 0"),
    ("memory_get", {"path": "MEMORY.md", "lines": "x"}, "lines must be an integer >= 1, got 'x'"),
    (
        "memory_get",
        {"path": "MEMORY.md", "corpus": "memory"},
        "memory_get takes path, from, lines; 'corpus' is not one of them",
    ),
    (
        "memory_status",
        {"verbose": True},
        "memory_status takes no arguments; 'verbose' is not one of them",
    ),
]


@pytest.mark.parametrize("tool, arguments, expected", ACCEPTED)
def test_accepted(tool: str, arguments: dict, expected: dict) -> None:
    corpora = CORPORA if tool == "memory_search" else ()
    assert read_tool_arguments(tool, arguments, corpora) == expected


@pytest.mark.parametrize("tool, arguments, message", REFUSED)
def test_refused_with_memlabs_message(tool: str, arguments: dict, message: str) -> None:
    corpora = CORPORA if tool == "memory_search" else ()
    with pytest.raises(SearchArgumentError) as exc:
        read_tool_arguments(tool, arguments, corpora)
    assert message in str(exc.value)


@given(n=st.integers(1, 2**53 - 1))
def test_an_integer_and_its_text_are_one(n: int) -> None:
    for v in (n, str(n), f" {n} ", float(n)):
        assert read_tool_arguments("memory_search", {"query": "q", "maxResults": v}) == {
            "query": "q",
            "maxResults": n,
        }


@given(x=st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer()))
def test_a_fraction_is_never_an_integer(x: float) -> None:
    for v in (x, repr(x)):
        with pytest.raises(SearchArgumentError, match="must be an integer >= 1"):
            read_tool_arguments("memory_get", {"path": "a.md", "lines": v})


@given(text=st.text().filter(lambda t: not t.strip().lstrip("+-").replace(".", "", 1).isdigit()))
def test_a_word_is_no_number(text: str) -> None:
    from memlab.tools.arguments import NUMBER_TOKEN

    if NUMBER_TOKEN.match(text.strip()):  # "1e5" and the like are numbers
        return
    with pytest.raises(SearchArgumentError, match="minScore must be a number"):
        read_tool_arguments("memory_search", {"query": "q", "minScore": text})


def test_schemas_are_strict_and_name_the_ranges() -> None:
    s = tool_schema("memory_search", CORPORA)
    assert s["additionalProperties"] is False and s["required"] == ["query"]
    assert s["properties"]["maxResults"] == {
        "type": "integer",
        "minimum": 1,
        "description": "how many results at most: an integer >= 1",
    }
    assert s["properties"]["corpus"]["enum"] == list(CORPORA)
    assert set(tool_schema("memory_get")["properties"]) == {"path", "from", "lines"}
    assert tool_schema("memory_status")["properties"] == {}


# ------------------------------------------------------------------ through the server
pytest.importorskip("mcp")
REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_server_answers_every_argument_with_memlabs_message(tmp_path: Path) -> None:
    """One server (a preset file's system): every refused call of every tool is the
    protocol's tool error with memlab's message and no pydantic text; "3" answers as 3;
    memory_status names the preset file and the parameters it changes."""
    from mcp import Client, StdioServerParameters

    from memlab.config.preset_file import preset_file_data
    from memlab.pipeline.presets import preset

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nAlice likes green tea.\nBob likes coffee.\n")
    pf = tmp_path / "tuned.json"
    data = preset_file_data(
        preset("openclaw", min_score=0.0, vector_weight=0.4, text_weight=0.6),
        base="openclaw",
        embedder={"provider": "hashing", "model": "hashing-64"},
    )
    data["name"] = "tuned"
    pf.write_text(json.dumps(data))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memlab.cli", "mcp", str(ws), "--preset-file", str(pf)],
        env=env,
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["memory_search"].input_schema == tool_schema("memory_search", CORPORA)
            for tool, arguments, message in REFUSED:
                res = await client.call_tool(tool, arguments)
                text = res.content[0].text
                assert res.is_error and message in text, (tool, arguments, text)
                assert "pydantic" not in text and "validation error" not in text, text
            as_text = await client.call_tool("memory_search", {"query": "tea", "maxResults": "1"})
            as_int = await client.call_tool("memory_search", {"query": "tea", "maxResults": 1})
            assert not as_text.is_error and len(as_text.structured_content["results"]) == 1
            assert as_text.structured_content == as_int.structured_content
            status = (await client.call_tool("memory_status", {})).structured_content
            assert status["pipeline"] == "tuned"
            assert status["preset_file"]["path"] == str(pf)
            assert status["preset_file"]["parameters"] == {
                "min_score": 0.0,
                "vector_weight": 0.4,
                "text_weight": 0.6,
            }
            assert status["preset_file"]["embedder"] == {
                "provider": "hashing",
                "model": "hashing-64",
            }
            assert status["identity"].split("-")[1] == "hashing"  # the file's embedder

    asyncio.run(main())
