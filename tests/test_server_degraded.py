"""``memlab mcp`` keeps answering while its embedding provider fails.

With an OpenAI-compatible provider that stops answering and a file changed since the
last sync, the server starts whatever the provider does, answers keyword-only with the
command line's notice (as ``memlab search`` falls back), retries the sync in the
background, says in ``memory_status`` what is degraded and why, and recovers by itself;
the client never sees the connection close.

Driven as a user drives it: a real local HTTP server as the provider (it fails with 500,
hangs past the timeout, then recovers), ``memlab index`` and ``memlab mcp`` as
subprocesses, the MCP SDK's client.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

from tests.conftest import write
from tests.test_providers_failing import Provider
from tests.test_providers_failing import provider as provider

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = "0.5"  # --embed-timeout: the provider's "hang" lasts 5 s, far past it


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "# Memory\n\n- the gateway token GATEWAY42 lives in the vault\n")
    write(root, "memory/2026-02-01.md", "- Alice likes green tea\n- Bob fixed the heron camera\n")
    return root


def config(tmp_path: Path, prov: Provider) -> Path:
    cfg = tmp_path / "openclaw.json"
    ms = {"provider": "openai", "model": "test-model", "remote": {"baseUrl": prov.url}}
    cfg.write_text(json.dumps({"agents": {"defaults": {"memorySearch": ms}}}))
    return cfg


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}


def build_index(ws: Path, cfg: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "index", str(ws), "--config", str(cfg), "--quiet"],
        capture_output=True,
        text=True,
        env=env(tmp_path),
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def server(ws: Path, cfg: Path, tmp_path: Path) -> StdioServerParameters:
    args = ["-m", "memlab.cli", "mcp", str(ws), "--config", str(cfg), "--embed-timeout", TIMEOUT]
    return StdioServerParameters(
        command=sys.executable,
        args=[*args, "--debounce-ms", "100", "--settle-ms", "100"],
        env=env(tmp_path),
        cwd=str(REPO),
    )


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    res = await client.call_tool(tool, arguments)
    assert not res.is_error, res.content
    return res.structured_content


async def until(client: Client, check: Any, seconds: float) -> dict[str, Any]:
    """Poll ``memory_status`` until ``check(status)`` holds (or fail after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        st = await call(client, "memory_status")
        if check(st):
            return st
        assert time.monotonic() < deadline, st
        await asyncio.sleep(0.2)


@pytest.mark.slow
def test_provider_fails_then_hangs_then_recovers(
    provider: Provider,
    ws: Path,
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, provider)
    build_index(ws, cfg, tmp_path)
    provider.mode = "500"
    write(ws, "memory/2026-02-02.md", "- the zebra crossing moved north\n")

    async def main() -> None:
        t0 = time.monotonic()
        async with Client(server(ws, cfg, tmp_path)) as client:
            assert time.monotonic() - t0 < 30  # started: no "Connection closed"
            res = await call(client, "memory_search", query="gateway token", minScore=0)
            assert res["results"][0]["path"] == "MEMORY.md"
            assert res["mode"] == "fts-only" and res["fallback"] is True
            # the command line's notice, and why the new file is not found yet
            assert "embedding provider failed, keyword-only results" in res["warning"]
            assert "HTTP 500" in res["warning"]
            st = await until(client, lambda s: len(s["degraded"]) == 2, 30)
            parts = {d["what"]: d for d in st["degraded"]}
            assert "keyword leg alone" in parts["embedding provider"]["effect"]
            assert "HTTP 500" in parts["sync"]["why"] and parts["sync"]["since"] > 0
            assert st["stale_files"] == ["memory/2026-02-02.md"]
            res = await call(client, "memory_search", query="gateway token", minScore=0)
            assert "syncing fails, retried in the background" in res["warning"]
            assert "memory/2026-02-02.md" in res["warning"]

            # Hanging past the timeout: answers stay immediate (the provider is known down).
            provider.mode = "hang"
            t1 = time.monotonic()
            res = await call(client, "memory_search", query="heron camera", minScore=0)
            assert time.monotonic() - t1 < 3
            assert res["mode"] == "fts-only" and res["results"][0]["path"].startswith("memory/")

            # Recovery: the probe finds the provider, the background sync goes through.
            provider.mode = "ok"
            st = await until(client, lambda s: s["degraded"] == [] and not s["stale_files"], 90)
            assert st["files"] == 3 and st["watcher_last_sync"]["files_changed"] >= 1
            res = await call(client, "memory_search", query="zebra crossing", minScore=0)
            assert res["mode"] == "hybrid" and res["fallback"] is False
            assert res["results"][0]["path"] == "memory/2026-02-02.md"
            assert "warning" not in res

    asyncio.run(main())


@pytest.mark.slow
def test_a_provider_that_starts_hanging_costs_one_timeout_then_nothing(
    provider: Provider,
    ws: Path,
    tmp_path: Path,
) -> None:
    """A provider that hangs past the timeout: the search that meets the hang waits about
    the timeout and answers keyword-only; the next ones wait for nothing; a changed file's
    sync fails in the background and is named."""
    cfg = config(tmp_path, provider)
    build_index(ws, cfg, tmp_path)

    async def main() -> None:
        async with Client(server(ws, cfg, tmp_path)) as client:
            res = await call(client, "memory_search", query="green tea", minScore=0)
            assert res["mode"] == "hybrid"
            provider.mode = "hang"
            times = []
            for _ in range(3):
                t1 = time.monotonic()
                res = await call(client, "memory_search", query="green tea", minScore=0)
                times.append(time.monotonic() - t1)
                assert res["mode"] == "fts-only" and res["results"], res
                assert "keyword-only results" in res["warning"]
            assert 0.4 < times[0] < 3 and max(times[1:]) < 1, times
            st = await call(client, "memory_status")
            assert [d["what"] for d in st["degraded"]] == ["embedding provider"]
            assert "within 0.5 s" in st["degraded"][0]["why"]  # the deadline, named
            write(ws, "memory/2026-02-02.md", "- the zebra crossing moved north\n")
            st = await until(client, lambda s: len(s["degraded"]) == 2, 30)
            assert "timed out after 0.5 s" in {d["what"]: d for d in st["degraded"]}["sync"]["why"]

    asyncio.run(main())


@pytest.mark.slow
def test_the_server_starts_while_the_provider_hangs(
    provider: Provider,
    ws: Path,
    tmp_path: Path,
) -> None:
    """One changed file to embed and a provider that hangs: the server is up once the first
    sync has failed (or after STARTUP_WAIT_S), and answers keyword-only at once."""
    cfg = config(tmp_path, provider)
    build_index(ws, cfg, tmp_path)
    provider.mode = "hang"
    write(ws, "memory/2026-02-02.md", "- the zebra crossing moved north\n")

    async def main() -> None:
        t0 = time.monotonic()
        async with Client(server(ws, cfg, tmp_path)) as client:
            assert time.monotonic() - t0 < 30
            t1 = time.monotonic()
            res = await call(client, "memory_search", query="green tea", minScore=0)
            assert time.monotonic() - t1 < 1.5
            assert res["mode"] == "fts-only" and res["results"][0]["path"].startswith("memory/")
            assert "memory/2026-02-02.md" in res["warning"]

    asyncio.run(main())


@pytest.mark.slow
def test_a_never_indexed_workspace_is_searched_by_keyword_while_the_provider_is_down(
    provider: Provider,
    ws: Path,
    tmp_path: Path,
) -> None:
    """No index yet and a provider that fails: keyword results from a keyword-only index
    of the same files (built without the provider), then the real index once it answers."""
    cfg = config(tmp_path, provider)
    provider.mode = "500"

    async def main() -> None:
        async with Client(server(ws, cfg, tmp_path)) as client:
            res = await call(client, "memory_search", query="gateway token", minScore=0)
            assert res["results"][0]["path"] == "MEMORY.md", res
            assert res["mode"] == "fts-only" and res["fallback"] is True
            assert "no index with its vectors yet" in res["warning"]
            assert "HTTP 500" in res["warning"]
            st = await call(client, "memory_status")
            assert "index" in {d["what"] for d in st["degraded"]}
            provider.mode = "ok"
            await until(client, lambda s: s["degraded"] == [], 90)
            res = await call(client, "memory_search", query="gateway token", minScore=0)
            assert res["mode"] == "hybrid" and res["fallback"] is False and "warning" not in res

    asyncio.run(main())


def test_an_embedder_that_has_not_learned_its_width_never_makes_the_index_stale(
    provider: Provider,
    ws: Path,
    tmp_path: Path,
) -> None:
    """A remote embedder learns its width from its first answer. The watcher's no-op sync
    (its embedder never asked) used to store width 0, after which the reader — which had
    learned 16 from a query — saw the index as stale: a full rebuild in a tool call."""
    from memlab.embed import OpenAIEmbedder
    from memlab.store import MemoryIndex

    def index() -> MemoryIndex:
        emb = OpenAIEmbedder(provider.url, "test-model", timeout=1)
        return MemoryIndex(ws, db_path=tmp_path / "i.sqlite", embedder=emb)

    index().sync()  # embeds: width 16 stored
    index().sync()  # nothing to embed: the width is not known, and not erased
    reader = index()
    reader.embed_queries(["green tea"])  # the reader learns 16
    assert reader.usable() and reader.ensure_synced() is None


@pytest.mark.slow
def test_the_cli_answers_a_never_indexed_workspace_by_keyword_too(
    provider: Provider,
    ws: Path,
    tmp_path: Path,
) -> None:
    """The same state from the command line: keyword results and the same notice, exit 0;
    a system without a keyword leg cannot answer (exit 1)."""
    cfg = config(tmp_path, provider)
    provider.mode = "500"
    base = [sys.executable, "-m", "memlab.cli", "search", str(ws), "gateway token"]
    opts = ["--config", str(cfg), "--embed-timeout", TIMEOUT, "--min-score", "0"]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *opts, *extra],
            capture_output=True,
            text=True,
            env=env(tmp_path),
            cwd=REPO,
            timeout=120,
        )

    proc = run("--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["results"][0]["path"] == "MEMORY.md" and res["fallback"] is True
    assert res["mode"] == "fts-only" and "no index with its vectors yet" in res["warning"]
    assert run("--preset", "vector").returncode == 1
