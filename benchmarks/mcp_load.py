"""The MCP server under concurrent clients while a writer appends (docs/benchmarks.md §10).

A copy of mcp_latency.py's cached local-model index (``note_workspace(N)``, line
chunker, all-MiniLM-L6-v2 on onnx) is served by ``memlab mcp WS --http --port 0`` (the
server as a user starts it; its watcher at the given debounce/settle). ``--clients``
MCP SDK clients, each its own Streamable-HTTP session, call ``memory_search`` back to
back for ``--seconds`` (closed loop: a client sends its next call when the previous one
answered), while a writer appends one note line every ``--append-every`` seconds to
today's daily log (``memory/YYYY-MM-DD.md``, opened, appended, closed: what an agent
does). Every appended line ends in a tag no other line has.

Counted: *errors* — a call that raised, came back ``is_error``, or answered
``unavailable`` (expected: 0); *stale answers* — answered with the "changed since the
last sync" warning (by design, not an error); latency p50/p99 at the client; throughput.
After the writer and clients stop: the time until the watcher has synced the last
append (``memory_status``: no stale file, a sync after the last write), then every
appended line is searched for (its own text, ``minScore`` 0); a line whose tag is in no
returned snippet is *lost* (expected: 0).

    python benchmarks/mcp_load.py --json benchmarks/results/mcp_load.json  # 50 clients, 60 s
    python benchmarks/mcp_load.py --quick      # 8 clients, 6 s, 500 chunks
"""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import (
    NOTE_RARE_WORDS,
    cache_dir,
    log,
    note_lines,
    parser,
    print_table,
    query_texts,
    report,
)
from benchmarks.mcp_latency import local_index, percentiles, server_args
from memlab.server import serving_url

FULL = {"chunks": 10_000, "clients": 50, "seconds": 60.0, "append_every": 2.0, "watch_ms": 1500}
QUICK = {"chunks": 500, "clients": 8, "seconds": 6.0, "append_every": 0.4, "watch_ms": 300}
CATCH_UP_TIMEOUT_S = 120.0
TAG = "wrtag"


def copy_index(info: dict[str, Any], dest: Path) -> tuple[Path, Path]:
    """Copy the cached workspace and index into ``dest`` (mtimes kept, so nothing looks
    changed to the server's first sync); returns the copy's workspace and index file."""
    ws = dest / "workspace"
    shutil.copytree(info["workspace"], ws)
    db = dest / "index.sqlite"
    shutil.copy2(info["db"], db)
    return ws, db


def start_server(ws: Path, db: Path, watch_ms: int) -> tuple[subprocess.Popen[bytes], str]:
    """``memlab mcp WS --http --port 0``; returns the process and the URL it prints."""
    watch = ["--debounce-ms", str(watch_ms), "--settle-ms", str(watch_ms)]
    proc = subprocess.Popen(
        server_args(str(ws), str(db), "--http", "--port", "0", *watch),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:  # read stderr to its end so the pipe never fills
        assert proc.stderr is not None
        for raw in proc.stderr:
            url = serving_url(raw.decode(errors="replace"))
            if url and not found:
                found.append(url)
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    if not ready.wait(180) or not found:
        proc.kill()
        raise RuntimeError("memlab mcp --http did not print its address within 180 s")
    return proc, found[0]


class Writer(threading.Thread):
    """Appends ``lines`` to ``log_file``, one every ``every`` seconds, until stopped."""

    def __init__(self, log_file: Path, lines: list[str], every: float) -> None:
        super().__init__(name="writer", daemon=True)
        self.log_file, self.lines, self.every = log_file, lines, every
        self.stop_event = threading.Event()
        self.written: list[str] = []
        self.last_write = 0.0

    def run(self) -> None:
        """Append until stopped or out of lines (one open/append/close per line)."""
        for line in self.lines:
            if self.stop_event.wait(self.every):
                return
            with self.log_file.open("a", encoding="utf-8") as fh:
                fh.write(f"- {line}\n")
            self.written.append(line)
            self.last_write = time.time()


async def client_loop(
    url: str, queries: list[str], offset: int, clock: dict[str, Any], out: dict[str, Any]
) -> None:
    """One SDK client session: opened, then (once every session is open: ``clock["go"]``)
    ``memory_search`` back to back until ``clock["deadline"]``."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    try:
        async with Client(streamable_http_client(url)) as client:
            clock["ready"] += 1
            await clock["go"].wait()
            i = offset
            while time.monotonic() < clock["deadline"]:
                q = queries[i % len(queries)]
                i += 1
                t = time.perf_counter()
                try:
                    res = await client.call_tool("memory_search", {"query": q})
                except Exception as exc:  # counted, the load goes on
                    out["errors"].append(f"{type(exc).__name__}: {exc}")
                    continue
                out["ms"].append((time.perf_counter() - t) * 1000)
                data = res.structured_content or {}
                if res.is_error or data.get("unavailable"):
                    out["errors"].append(str(res.content)[:300])
                elif "changed since the last sync" in (data.get("warning") or ""):
                    out["stale"] += 1
    except Exception as exc:  # a session that could not open or broke
        out["errors"].append(f"session: {type(exc).__name__}: {exc}")
        clock["ready"] += 1


async def catch_up_and_check(url: str, writer: Writer) -> dict[str, Any]:
    """Wait until the watcher has synced past the last append, then search every line."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(url)) as client:
        t0 = time.monotonic()
        while True:
            st = (await client.call_tool("memory_status", {})).structured_content
            last = (st.get("watcher_last_sync") or {}).get("at") or 0
            if not st["stale_files"] and last >= writer.last_write:
                break
            if time.monotonic() - t0 > CATCH_UP_TIMEOUT_S:
                break
            await asyncio.sleep(0.1)
        catch_up = time.monotonic() - t0
        lost = []
        for line in writer.written:
            tag = line.rsplit(" ", 1)[-1]
            res = await client.call_tool(
                "memory_search", {"query": line, "minScore": 0, "maxResults": 10}
            )
            snippets = [r["snippet"] for r in (res.structured_content or {}).get("results", [])]
            if not any(tag in s for s in snippets):
                lost.append(line)
        st = (await client.call_tool("memory_status", {})).structured_content
    return {"catch_up_seconds": catch_up, "lost": lost, "final_chunks": st["chunks"]}


async def run_load(url: str, queries: list[str], clients: int, seconds: float, writer: Writer):
    """Warm the server (one search: the model loads on the first), open every client
    session, then run the clients and the writer for ``seconds``; returns the counters."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(url)) as client:
        t = time.perf_counter()
        await client.call_tool("memory_search", {"query": queries[0]})
        first = time.perf_counter() - t
    out: dict[str, Any] = {"ms": [], "errors": [], "stale": 0, "first_call_seconds": first}
    clock: dict[str, Any] = {"ready": 0, "go": asyncio.Event(), "deadline": 0.0}
    step = max(1, len(queries) // clients)
    tasks = [
        asyncio.create_task(client_loop(url, queries, c * step, clock, out)) for c in range(clients)
    ]
    t_open = time.perf_counter()
    while clock["ready"] < clients:
        if time.perf_counter() - t_open > 120:
            raise RuntimeError(f"only {clock['ready']} of {clients} sessions opened in 120 s")
        await asyncio.sleep(0.05)
    out["sessions_open_seconds"] = time.perf_counter() - t_open
    clock["deadline"] = time.monotonic() + seconds
    writer.start()
    t0 = time.perf_counter()
    clock["go"].set()
    await asyncio.gather(*tasks)
    out["wall_seconds"] = time.perf_counter() - t0
    writer.stop_event.set()
    writer.join()
    return out


def main() -> int:
    p = parser(__doc__.split("\n\n")[0], "mcp_load")
    p.add_argument("--chunks", type=int, help="corpus size (default 10000, quick 500)")
    p.add_argument("--clients", type=int, help="concurrent MCP clients (default 50, quick 8)")
    p.add_argument("--seconds", type=float, help="load duration (default 60, quick 6)")
    p.add_argument("--append-every", type=float, help="seconds between appended lines")
    p.add_argument("--watch-ms", type=int, help="the server's --debounce-ms and --settle-ms")
    args = p.parse_args()
    size = QUICK if args.quick else FULL
    n = args.chunks or size["chunks"]
    clients = args.clients or size["clients"]
    seconds = args.seconds or size["seconds"]
    every = args.append_every or size["append_every"]
    watch_ms = args.watch_ms if args.watch_ms is not None else size["watch_ms"]
    info = local_index(n)
    queries = query_texts(note_lines(n, 0, NOTE_RARE_WORDS), min(n, 500), seed=5)
    new_lines = [
        f"{line.rsplit(' #n', 1)[0]} {TAG}{i:05d}"
        for i, line in enumerate(note_lines(int(seconds / every) + 10, 77))
    ]
    with tempfile.TemporaryDirectory(prefix="mcp-load-", dir=cache_dir()) as tmp:
        ws, db = copy_index(info, Path(tmp))
        today = ws / "memory" / f"{dt.date.today().isoformat()}.md"
        log(f"starting memlab mcp --http on a copy of {info['chunks']} chunks")
        t_start = time.perf_counter()
        proc, url = start_server(ws, db, watch_ms)
        startup = time.perf_counter() - t_start
        try:
            writer = Writer(today, new_lines, every)
            log(f"{clients} clients for {seconds:.0f} s, a line appended every {every} s")
            out = asyncio.run(run_load(url, queries, clients, seconds, writer))
            log(f"{len(out['ms'])} calls, {len(out['errors'])} errors; checking the appended lines")
            check = asyncio.run(catch_up_and_check(url, writer))
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    lat = percentiles(out["ms"])
    results = {
        "index_chunks": info["chunks"],
        "server_startup_seconds": startup,
        "first_call_seconds": out["first_call_seconds"],
        "sessions_open_seconds": out["sessions_open_seconds"],
        "calls": len(out["ms"]),
        "errors": len(out["errors"]),
        "error_samples": out["errors"][:5],
        "stale_answers": out["stale"],
        "throughput_per_s": len(out["ms"]) / out["wall_seconds"],
        "wall_seconds": out["wall_seconds"],
        "latency": lat,
        "lines_appended": len(writer.written),
        "lines_lost": len(check["lost"]),
        "lost_samples": check["lost"][:5],
        "catch_up_seconds": check["catch_up_seconds"],
        "final_chunks": check["final_chunks"],
        # the line chunker: one chunk per appended list line, none lost or duplicated
        "expected_chunks": info["chunks"] + len(writer.written),
    }
    print_table(
        [
            {
                "clients": clients,
                "calls": results["calls"],
                "errors": results["errors"],
                "q/s": results["throughput_per_s"],
                "p50 ms": lat.get("p50_ms"),
                "p99 ms": lat.get("p99_ms"),
                "appended": results["lines_appended"],
                "lost": results["lines_lost"],
                "catch-up s": results["catch_up_seconds"],
            }
        ]
    )
    inputs = {
        "chunks": n,
        "clients": clients,
        "seconds": seconds,
        "append_every_seconds": every,
        "watch_debounce_settle_ms": watch_ms,
    }
    report("mcp_load", args, inputs, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
