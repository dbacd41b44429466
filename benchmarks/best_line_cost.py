"""What ranking chunks by their best line costs: index size and build time, query latency.

``memlab-best-chunk`` ranks OpenClaw's ~400-token chunks by their best line under
``memlab-best`` (``memlab.stages.best_line``): a search also runs ``memlab-best`` on the
line view of the same files (``MemoryIndex.line_view``, one row per line). This measures,
per workspace size, on ``note_workspace`` (one-line notes in daily logs, the hashing
embedder at 384 dimensions: cost does not depend on meaning):

- rows and file size of the chunk index and of its line view, and the build time of each
  (the line view's first search builds it);
- per-query latency (median over the queries, query embedding included, as a tool call
  pays it) of the preset, of its line ranking in the plain best-line order
  (``best_line_order="max"``: what the preset's new-line order adds) and of its
  chunk-as-unit system (``CHUNK_AS_UNIT``), through ``memlab.tools.memory_search``, each
  query by the three in turn; and the ratio of the first to the last.

``--sizes`` are chunk counts of the chunk index (default 1k,10k; ``--quick`` 1k); each
size's workspace holds enough notes to make about that many chunks. Indexes go to a
temporary folder, deleted afterwards. ``--embedder local`` builds with the packaged
all-MiniLM-L6-v2 instead (its embedding cache is bypassed, so each run embeds again).

    nice -n 10 .venv/bin/python benchmarks/best_line_cost.py --json best_line_cost.json
    nice -n 10 .venv/bin/python benchmarks/best_line_cost.py --embedder local --sizes 1000
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import (
    chunk_as_unit,
    log,
    note_lines,
    note_workspace,
    parser,
    print_table,
    query_texts,
    report,
)

# Notes per chunk of OpenClaw's 400-token / 80-overlap chunker on note_workspace's lines
# (measured: 2,000 notes make 151 chunks, ≈ 13 each); sizes are approximate chunk counts.
NOTES_PER_CHUNK = 13


def measure(n_chunks: int, nq: int, embedder: str = "hashing") -> dict[str, Any]:
    """Build both indexes over a workspace of about ``n_chunks`` chunks and time ``nq``
    queries of the preset and of its chunk-as-unit system; ``embedder`` ``"hashing"``
    (384-d, fast: the cost of the index itself) or ``"local"`` (all-MiniLM-L6-v2: what
    embedding every line costs)."""
    from memlab.embed import HashingEmbedder, resolve_embedder
    from memlab.pipeline.presets import preset
    from memlab.store import MemoryIndex
    from memlab.tools import memory_search

    n_notes = n_chunks * NOTES_PER_CHUNK
    ws = note_workspace(n_notes)
    tmp = Path(tempfile.mkdtemp(prefix="best-line-cost-"))
    try:
        idx = MemoryIndex(
            ws,
            db_path=tmp / "chunks.sqlite",
            embedder=HashingEmbedder(dimensions=384)
            if embedder == "hashing"
            else resolve_embedder(embedder),
            fts_tokenizer="porter",
            progress=False,
        )
        t0 = time.perf_counter()
        idx.sync()
        t_chunks = time.perf_counter() - t0
        t0 = time.perf_counter()
        view = idx.line_view("porter")
        t_lines = time.perf_counter() - t0
        queries = query_texts(note_lines(n_notes), nq)
        systems = {
            "memlab-best-chunk": preset("memlab-best-chunk"),
            # its line ranking without the new-line order (what that order adds)
            "max order": preset("memlab-best-chunk", best_line_order="max"),
            "chunks as units": chunk_as_unit(),
        }
        for p in systems.values():
            memory_search(idx, queries[0], pipeline=p)  # warm: tables and vectors loaded
        # Each query by every system in turn, so that a busy spell of the shared machine
        # weighs on all of them alike (their differences are a few ms).
        times: dict[str, list[float]] = {name: [] for name in systems}
        for q in queries:
            for name, p in systems.items():
                t0 = time.perf_counter()
                out = memory_search(idx, q, pipeline=p)
                times[name].append(time.perf_counter() - t0)
                if "error" in out:
                    raise RuntimeError(f"{name}: {out['error']}")
        lat = {name: statistics.median(t) * 1000 for name, t in times.items()}
        return {
            "chunks": len(idx.table),
            "lines": len(view.table),
            "chunk_index_mb": idx.db_path.stat().st_size / 2**20,
            "line_view_mb": view.db_path.stat().st_size / 2**20,
            "build_chunks_s": t_chunks,
            "build_lines_s": t_lines,
            "ms_preset": lat["memlab-best-chunk"],
            "ms_max_order": lat["max order"],
            "ms_chunk_unit": lat["chunks as units"],
            "ratio": lat["memlab-best-chunk"] / lat["chunks as units"],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = parser(__doc__.splitlines()[0], "best_line_cost")
    ap.add_argument("--sizes", default=None, help="comma list of chunk counts (default 1000,10000)")
    ap.add_argument("--nq", type=int, default=50, help="queries per size")
    ap.add_argument(
        "--embedder",
        choices=("hashing", "local"),
        default="hashing",
        help="hashing (default; the index's own cost) or local (all-MiniLM-L6-v2, the packaged "
        "model: what embedding every line costs; no cache, so every run embeds again)",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in (args.sizes or ("1000" if args.quick else "1000,10000")).split(",")]
    rows = []
    for n in sizes:
        log(f"size {n}: building the chunk index and its line view ...")
        rows.append({"size": n, "embedder": args.embedder, **measure(n, args.nq, args.embedder)})
    print_table(rows)
    inputs = {"sizes": sizes, "nq": args.nq, "embedder": args.embedder}
    report("best_line_cost", args, inputs, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
