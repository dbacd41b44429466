"""Issue 16 target 2: `memory_search` through the warm MCP server, query embedding included.

Corpus: ``note_workspace(N)`` (N one-line notes in daily logs, as in search_latency.py),
indexed once with the line chunker (one chunk per note) and the packaged
all-MiniLM-L6-v2 on the onnx backend, cached under ``cache_dir()`` (the build time is
recorded in the JSON). The server is spawned as a user would spawn it —
``memlab mcp WS --db DB --chunker line --embedder local --local-backend onnx``, stdio —
and talked to with the MCP SDK's own ``Client``: a warm-up of ``WARMUP`` calls, then
``--calls`` sequential ``memory_search`` calls (queries: corpus lines with their tag and
one word dropped), each timed at the client from the request to the decoded answer:
JSON-RPC over the pipe, the query embedded by onnxruntime, both legs, the ranking.
Reported: p50 / p90 / p99 / max in ms, and the time from spawning the server to its
first answer. For attribution, the same queries are then embedded in this process by the
same embedder as the server's reader (``OnnxEmbedder`` on ``memlab.server.QUERY_THREADS``
threads) alone: the rest of a call is the protocol, the index's two legs and the ranking.

    python benchmarks/mcp_latency.py --json benchmarks/results/mcp_latency.json   # 10k
    python benchmarks/mcp_latency.py --quick          # 500 chunks, 60 calls
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import (
    NOTE_RARE_WORDS,
    log,
    note_lines,
    note_workspace,
    parser,
    print_table,
    query_texts,
    report,
)
from benchmarks.cold_search import memlab_command, timed_run

FULL = {"chunks": 10_000, "calls": 1000}
QUICK = {"chunks": 500, "calls": 60}
WARMUP = 20
INDEX_ARGS = ("--chunker", "line", "--embedder", "local", "--local-backend", "onnx")


def local_index(n: int) -> dict[str, Any]:
    """``note_workspace(n)`` and its line-chunked local-model (onnx) index, built once next
    to the workspace; returns workspace, db, chunks and the build's seconds."""
    ws = note_workspace(n)
    root = ws.parent
    info_file = root / "index-local-onnx-line.json"
    if info_file.is_file():
        return json.loads(info_file.read_text())
    db = root / "index-local-onnx-line.sqlite"
    db.unlink(missing_ok=True)
    log(f"indexing {n} notes with the local model (onnx backend), once: {db}")
    r = timed_run([*memlab_command(), "index", str(ws), "--db", str(db), *INDEX_ARGS, "--json"])
    if r["code"] != 0:
        raise RuntimeError(f"memlab index {ws} failed ({r['code']}): {r['stderr'][-2000:]}")
    built = json.loads(r["stdout"])
    info = {
        "workspace": str(ws),
        "db": str(db),
        "chunks": built["chunks"],
        "files": built["files"],
        "build_seconds": r["seconds"],
    }
    log(f"indexed {built['chunks']} chunks in {r['seconds']:.0f} s")
    info_file.write_text(json.dumps(info, indent=1))
    return info


def server_args(ws: str, db: str, *extra: str) -> list[str]:
    """The ``memlab mcp`` command line serving ``ws`` from the index ``db``."""
    cmd = memlab_command()
    return [*cmd, "mcp", ws, "--db", db, *INDEX_ARGS, *extra]


def percentiles(ms: list[float]) -> dict[str, float]:
    """p50 / p90 / p99 / max / mean (numpy's linear interpolation) of latencies in ms."""
    a = np.asarray(ms, dtype=float)
    if not len(a):
        return {"n": 0}
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {
        "p50_ms": float(p50),
        "p90_ms": float(p90),
        "p99_ms": float(p99),
        "max_ms": float(a.max()),
        "mean_ms": float(a.mean()),
        "n": len(a),
    }


async def measure(info: dict[str, Any], queries: list[str], calls: int) -> dict[str, Any]:
    """Spawn the server over stdio, warm it up, time ``calls`` sequential searches."""
    from mcp import Client, StdioServerParameters

    cmd = server_args(info["workspace"], info["db"])
    params = StdioServerParameters(command=cmd[0], args=cmd[1:])
    t0 = time.perf_counter()
    async with Client(params) as client:
        first = await client.call_tool("memory_search", {"query": queries[0]})
        startup = time.perf_counter() - t0
        if first.is_error:
            raise RuntimeError(f"memory_search failed: {first.content}")
        status = (await client.call_tool("memory_status", {})).structured_content
        provider = first.structured_content["provider"]
        for i in range(WARMUP):
            await client.call_tool("memory_search", {"query": queries[i % len(queries)]})
        ms, empty = [], 0
        for i in range(calls):
            q = queries[i % len(queries)]
            t = time.perf_counter()
            res = await client.call_tool("memory_search", {"query": q})
            ms.append((time.perf_counter() - t) * 1000)
            if res.is_error or res.structured_content.get("unavailable"):
                raise RuntimeError(f"memory_search {q!r} failed: {res.content}")
            empty += not res.structured_content["results"]
    return {
        "startup_to_first_answer_seconds": startup,
        "latency": percentiles(ms),
        "empty_answers": empty,
        "provider": provider,
        "server_chunks": status["chunks"],
        "identity": status["identity"],
    }


def embed_alone(queries: list[str], calls: int) -> dict[str, float]:
    """Latency percentiles of ``OnnxEmbedder.embed_query`` alone, on the threads the
    server's reader embeds queries with, on the same queries (after 5 warm-up calls), in
    this process."""
    from memlab.embed.onnx import OnnxEmbedder
    from memlab.server import QUERY_THREADS

    emb = OnnxEmbedder(threads=QUERY_THREADS)
    for q in queries[:5]:
        emb.embed_query(q)
    ms = []
    for i in range(calls):
        t = time.perf_counter()
        emb.embed_query(queries[i % len(queries)])
        ms.append((time.perf_counter() - t) * 1000)
    return percentiles(ms)


def main() -> int:
    p = parser(__doc__.split("\n\n")[0], "mcp_latency")
    p.add_argument("--chunks", type=int, help="corpus size (default 10000, quick 500)")
    p.add_argument("--calls", type=int, help="timed calls (default 1000, quick 60)")
    args = p.parse_args()
    size = QUICK if args.quick else FULL
    n = args.chunks or size["chunks"]
    calls = args.calls or size["calls"]
    info = local_index(n)
    queries = query_texts(note_lines(n, 0, NOTE_RARE_WORDS), min(n, 500), seed=3)
    log(f"{calls} memory_search calls through memlab mcp (stdio) on {info['chunks']} chunks")
    res = asyncio.run(measure(info, queries, calls))
    log("the query embedding alone, in this process")
    res["embed_query_alone"] = embed_alone(queries, calls)
    res["p50_over_embed_alone"] = res["latency"]["p50_ms"] / res["embed_query_alone"]["p50_ms"]
    lat = res["latency"]
    print_table(
        [
            {
                "chunks": info["chunks"],
                "p50 ms": lat["p50_ms"],
                "p99 ms": lat["p99_ms"],
                "max ms": lat["max_ms"],
                "embed alone p50 ms": res["embed_query_alone"]["p50_ms"],
                "first answer s": res["startup_to_first_answer_seconds"],
            }
        ]
    )
    results = {"index": info | {"workspace": Path(info["workspace"]).name}, **res}
    results["index"].pop("db", None)
    report("mcp_latency", args, {"chunks": n, "calls": calls, "warmup": WARMUP}, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
