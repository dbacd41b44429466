"""``memlab mcp``: the MCP server driven by the SDK's own client, over stdio and HTTP.

Each test starts ``python -m memlab.cli mcp WS --embedder hashing`` as a user would (a
subprocess; the HTTP one on 127.0.0.1, port 0), so the protocol, the argument shapes and
the path rules are those a real MCP client meets.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

from memlab.server import serving_url
from tests.conftest import stop_process

REPO = Path(__file__).resolve().parents[1]
TOOLS = {"memory_search", "memory_get", "memory_status"}
SEARCH_KEYS = {"results", "provider", "model", "fallback", "citations", "mode"}
RESULT_KEYS = {"path", "startLine", "endLine", "score", "snippet", "source", "citation"}
NOTES = "# Notes\n\nAlice likes green tea.\nShe goes hiking in the Alps every August.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with two memory files, a symlink to a file outside and that file."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\nThe dentist appointment is on Tuesday.\n")
    (root / "memory" / "notes.md").write_text(NOTES)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nthe launch code is 0000\n")
    (root / "memory" / "link.md").symlink_to(secret)
    return root


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}


def hostile(ws: Path) -> list[str]:
    return [
        "../etc/passwd",
        "../secret.md",
        str(ws.parent / "secret.md"),  # absolute, outside the workspace
        "memory/link.md",  # a symlink inside memory/ to a file outside
        "/etc/passwd",
        "memory/../../secret.md",
    ]


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return result.structured_content


async def search(client: Client, query: str, **arguments: Any) -> dict[str, Any]:
    """One memory_search call's structured answer."""
    return data(await client.call_tool("memory_search", {"query": query, **arguments}))


async def exercise(client: Client, ws: Path) -> None:
    """The checks both transports share: tools, search, get, hostile paths, status."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert {"query", "maxResults", "minScore", "corpus"} <= set(
        tools["memory_search"].input_schema["properties"]
    )
    assert set(tools["memory_get"].input_schema["properties"]) == {"path", "from", "lines"}

    res = await search(client, "dentist appointment")
    assert set(res) >= SEARCH_KEYS
    assert res["mode"] == "hybrid" and res["provider"] == "hashing"
    top = res["results"][0]
    assert set(top) == RESULT_KEYS
    assert (top["path"], top["startLine"], top["source"]) == ("MEMORY.md", 1, "memory")
    assert top["citation"] == f"MEMORY.md#L{top['startLine']}-L{top['endLine']}"

    one = await search(client, "hiking", maxResults=1, minScore=0)
    assert len(one["results"]) == 1 and one["results"][0]["path"] == "memory/notes.md"
    none = await search(client, "hiking", minScore=0.99)
    assert none["results"] == []
    mem = await search(client, "hiking", minScore=0, corpus="memory")
    assert [r["path"] for r in mem["results"]][:1] == ["memory/notes.md"]
    sess = await search(client, "hiking", corpus="sessions")
    assert sess["results"] == [] and "does not cover sessions" in sess["warning"]
    # bad arguments: the protocol's tool error (tests/test_search_arguments.py has the rest)
    bad = await client.call_tool("memory_search", {"query": "hiking", "corpus": "web"})
    assert bad.is_error and "corpus must be one of" in bad.content[0].text
    empty = await client.call_tool("memory_search", {"query": "  "})
    assert empty.is_error and "query must be a non-empty text" in empty.content[0].text

    got = data(await client.call_tool("memory_get", {"path": "memory/notes.md"}))
    assert got == {"text": NOTES, "path": "memory/notes.md"}
    part = data(
        await client.call_tool("memory_get", {"path": "memory/notes.md", "from": 3, "lines": 1})
    )
    assert part == {"text": "Alice likes green tea.", "path": "memory/notes.md"}
    missing = data(await client.call_tool("memory_get", {"path": "memory/none.md"}))
    assert missing == {"text": "", "path": "memory/none.md"}
    for path in hostile(ws):
        refused = data(await client.call_tool("memory_get", {"path": path}))
        assert refused == {"error": "path required", "path": path}, path
        assert "0000" not in json.dumps(refused)

    st = data(await client.call_tool("memory_status", {}))
    assert (st["files"], st["chunks"], st["stale_files"]) == (2, 2, [])
    assert st["identity"].startswith("unicode61-hashing")
    assert Path(st["index_path"]).is_file() and st["watching"] is True
    assert st["pipeline"] == "openclaw" and st["sync_wait_seconds"] == 0.0

    # Concurrent calls: 16 searches at once, one answer each, all equal.
    many = await asyncio.gather(*(search(client, "green tea", minScore=0) for _ in range(16)))
    paths = {tuple(r["path"] for r in m["results"]) for m in many}
    assert len(paths) == 1 and next(iter(paths))[0] == "memory/notes.md"


def stdio_params(ws: Path, tmp_path: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memlab.cli", "mcp", str(ws), "--embedder", "hashing", *extra],
        env=env(tmp_path),
        cwd=str(REPO),
    )


@pytest.mark.slow
def test_stdio_tools_paths_and_freshness(ws: Path, tmp_path: Path) -> None:
    async def main() -> None:
        params = stdio_params(ws, tmp_path, "--debounce-ms", "50", "--settle-ms", "50")
        async with Client(params) as client:
            await exercise(client, ws)
            # The watcher keeps the index fresh while the server runs.
            (ws / "memory" / "new.md").write_text("# New\n\nthe zebra crossing moved north\n")
            deadline = time.monotonic() + 15
            while True:
                res = await search(client, "zebra crossing", minScore=0)
                if res["results"] and res["results"][0]["path"] == "memory/new.md":
                    break
                assert time.monotonic() < deadline, res
                await asyncio.sleep(0.1)
            st = data(await client.call_tool("memory_status", {}))
            assert st["files"] == 3 and st["stale_files"] == []

    asyncio.run(main())


@pytest.mark.slow
def test_stdio_memlab_best_preset_and_stale_warning(ws: Path, tmp_path: Path) -> None:
    """memlab-best through the server; with a watcher too slow to have synced, a search
    is answered at once from the last index, with a warning naming the changed file."""

    async def main() -> None:
        slow = ("--debounce-ms", "600000", "--settle-ms", "600000")
        async with Client(stdio_params(ws, tmp_path, "--preset", "memlab-best", *slow)) as client:
            res = await search(client, "dentist")
            assert res["results"][0]["path"] == "MEMORY.md" and "warning" not in res
            st = data(await client.call_tool("memory_status", {}))
            # memlab-best is tuned on the porter tokenizer: the index the search command uses.
            assert st["pipeline"] == "memlab-best" and st["identity"].startswith("porter-")
            (ws / "memory" / "new.md").write_text("# New\n\nthe zebra crossing moved north\n")
            await asyncio.sleep(1.2)  # past STALE_CHECK_S
            t0 = time.monotonic()
            res = await search(client, "zebra crossing", minScore=0)
            assert time.monotonic() - t0 < 5  # not waiting for a sync
            assert "memory/new.md" not in [r["path"] for r in res["results"]]
            assert "1 file(s) changed since the last sync" in res["warning"]
            assert "memory/new.md" in res["warning"]
            st = data(await client.call_tool("memory_status", {}))
            assert st["stale_files"] == ["memory/new.md"] and st["files"] == 2

    asyncio.run(main())


@pytest.fixture
def http_server(ws: Path, tmp_path: Path) -> Iterator[str]:
    """``memlab mcp WS --http --port 0 --token s3cret``; yields the URL it prints."""
    cmd = [sys.executable, "-m", "memlab.cli", "mcp", str(ws), "--embedder", "hashing"]
    cmd += ["--http", "--port", "0", "--token", "s3cret"]
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env(tmp_path), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:  # read stderr to the end, so the pipe never fills
        assert proc.stderr is not None
        for raw in proc.stderr:
            url = serving_url(raw.decode(errors="replace"))
            if url and not found:
                found.append(url)
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        assert ready.wait(60) and found, "the server did not print its address"
        yield found[0]
    finally:
        stop_process(proc)


def post(url: str, headers: dict[str, str]) -> int:
    """The status of an MCP initialize POST with these extra headers."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
def test_http_token_origin_host_and_tools(http_server: str, ws: Path) -> None:
    url = http_server
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    auth = {"Authorization": "Bearer s3cret"}
    assert post(url, {}) == 401  # no token
    assert post(url, {"Authorization": "Bearer wrong"}) == 401
    assert post(url, {**auth, "Origin": "http://evil.example"}) == 403  # DNS rebinding
    assert post(url, {**auth, "Host": "evil.example"}) == 421
    assert post(url, {**auth, "Origin": "http://localhost:1234"}) == 200
    assert post(url, auth) == 200

    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main() -> None:
        transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=auth))
        async with Client(transport) as client:
            await exercise(client, ws)

    asyncio.run(main())


def test_token_without_http_is_a_usage_error(ws: Path, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "memlab.cli", "mcp", str(ws), "--token", "x"]
    r = subprocess.run(cmd, cwd=REPO, env=env(tmp_path), capture_output=True, text=True)
    assert r.returncode == 2 and "need --http" in r.stderr
