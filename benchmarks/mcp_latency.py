"""`memory_search` through the warm MCP server, query embedding included (docs/benchmarks.md §9).

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
first answer. The same system is served twice at once, by ``--preset P`` (default
``openclaw``) and by ``--preset-file F`` (``memlab export --preset P --target mcp``), and
the calls alternate between the two servers (which goes first alternates too), so both
p50s come from one run under the same load. For attribution, the same queries are then
embedded in this process by the same embedder as the server's reader (``OnnxEmbedder`` on
``memlab.server.QUERY_THREADS`` threads) alone: the rest of a call is the protocol, the
index's two legs and the ranking.

    python benchmarks/mcp_latency.py --json benchmarks/results/mcp_latency.json   # 10k
    python benchmarks/mcp_latency.py --quick          # 500 chunks, 60 calls
    python benchmarks/mcp_latency.py --quick --preset memlab-best
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


def preset_file_for(preset: str, folder: Path) -> Path:
    """The preset file of ``preset`` (``memlab export --preset P --target mcp``), written
    into ``folder``."""
    out = folder / f"{preset}.preset.json"
    r = timed_run([*memlab_command(), "export", "--preset", preset, "--target", "mcp"])
    if r["code"] != 0:
        raise RuntimeError(f"memlab export failed ({r['code']}): {r['stderr'][-2000:]}")
    out.write_text(r["stdout"])
    return out


async def timed_call(client: Any, query: str, ms: list[float]) -> bool:
    """One ``memory_search`` timed at the client into ``ms``; True when it found nothing."""
    t = time.perf_counter()
    res = await client.call_tool("memory_search", {"query": query})
    ms.append((time.perf_counter() - t) * 1000)
    if res.is_error or res.structured_content.get("unavailable"):
        raise RuntimeError(f"memory_search {query!r} failed: {res.content}")
    return not res.structured_content["results"]


async def measure(
    info: dict[str, Any], queries: list[str], calls: int, preset: str, preset_file: Path
) -> dict[str, Any]:
    """Spawn two servers over stdio (``--preset`` and ``--preset-file`` of one system),
    warm both up, then time ``calls`` searches on each, alternating between them."""
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters

    ways = {"preset": ["--preset", preset], "preset_file": ["--preset-file", str(preset_file)]}
    out: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        clients = {}
        for way, extra in ways.items():
            cmd = server_args(info["workspace"], info["db"], *extra)
            t0 = time.perf_counter()
            client = await stack.enter_async_context(
                Client(StdioServerParameters(command=cmd[0], args=cmd[1:]))
            )
            first = await client.call_tool("memory_search", {"query": queries[0]})
            if first.is_error:
                raise RuntimeError(f"memory_search failed: {first.content}")
            status = (await client.call_tool("memory_status", {})).structured_content
            out[way] = {
                "startup_to_first_answer_seconds": time.perf_counter() - t0,
                "provider": first.structured_content["provider"],
                "server_chunks": status["chunks"],
                "identity": status["identity"],
                "pipeline": status["pipeline"],
            }
            clients[way] = client
        for i in range(WARMUP):
            for client in clients.values():
                await client.call_tool("memory_search", {"query": queries[i % len(queries)]})
        ms: dict[str, list[float]] = {way: [] for way in ways}
        empty = dict.fromkeys(ways, 0)
        order = list(ways)
        for i in range(calls):
            q = queries[i % len(queries)]
            for way in order if i % 2 == 0 else order[::-1]:
                empty[way] += await timed_call(clients[way], q, ms[way])
    for way in ways:
        out[way].update(latency=percentiles(ms[way]), empty_answers=empty[way])
    return out


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
    p.add_argument("--calls", type=int, help="timed calls per server (default 1000, quick 60)")
    p.add_argument("--preset", default="openclaw", help="the system served (default openclaw)")
    args = p.parse_args()
    size = QUICK if args.quick else FULL
    n = args.chunks or size["chunks"]
    calls = args.calls or size["calls"]
    info = local_index(n)
    queries = query_texts(note_lines(n, 0, NOTE_RARE_WORDS), min(n, 500), seed=3)
    pf = preset_file_for(args.preset, Path(info["db"]).parent)
    log(
        f"{calls} memory_search calls through memlab mcp (stdio) on {info['chunks']} chunks,"
        f" per server: --preset {args.preset} and --preset-file {pf.name}, alternating"
    )
    both = asyncio.run(measure(info, queries, calls, args.preset, pf))
    log("the query embedding alone, in this process")
    alone = embed_alone(queries, calls)
    # "latency" etc. stay the --preset server's figures (as before this comparison)
    res = {**both["preset"], "preset_file": both["preset_file"], "embed_query_alone": alone}
    res["p50_over_embed_alone"] = res["latency"]["p50_ms"] / alone["p50_ms"]
    res["preset_file_p50_over_preset_p50"] = (
        both["preset_file"]["latency"]["p50_ms"] / both["preset"]["latency"]["p50_ms"]
    )
    print_table(
        [
            {
                "served by": f"--{way.replace('_', '-')}",
                "chunks": info["chunks"],
                "p50 ms": b["latency"]["p50_ms"],
                "p99 ms": b["latency"]["p99_ms"],
                "max ms": b["latency"]["max_ms"],
                "embed alone p50 ms": alone["p50_ms"],
                "first answer s": b["startup_to_first_answer_seconds"],
            }
            for way, b in both.items()
        ]
    )
    results = {"index": info | {"workspace": Path(info["workspace"]).name}, **res}
    results["index"].pop("db", None)
    inputs = {"chunks": n, "calls": calls, "warmup": WARMUP, "preset": args.preset}
    report("mcp_latency", args, inputs, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
