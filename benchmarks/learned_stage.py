"""Cost of the learned stage per query: ``memlab-best`` with and without a linear model.

A 10,000-note workspace (``note_workspace``, one line per chunk, hashing embedder,
porter FTS5), ``memlab-best``'s candidates (every chunk a vector candidate, up to
1,000 per leg). For each query alone (the search path scores one query) the
score stages run with ``learned_model`` off and on; the added time is the
difference of the medians. The model is ``learned.fitted_model()`` when it has been
fitted, else the same number of features with unit constants (the cost does not
depend on the values). Goal: ≤ 2 ms per query at 10k chunks (docs/studies/learned.md).

Run: ``nice -n 10 .venv/bin/python benchmarks/learned_stage.py --json out.json``
(``--quick``: 2,000 chunks, 10 queries).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

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

TARGET_MS = 2.0


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=None, help="workspace size (default 10000)")
    ap.add_argument("--queries", type=int, default=None, help="queries timed (default 50)")
    args = ap.parse_args()
    from memlab.chunking import ChunkerConfig
    from memlab.embed import HashingEmbedder
    from memlab.pipeline.presets import memlab_best
    from memlab.stages import learned
    from memlab.store import MemoryIndex

    n = args.chunks or (2_000 if args.quick else 10_000)
    nq = args.queries or (10 if args.quick else 50)
    repeats = args.repeats or 5
    ws = note_workspace(n)
    idx = MemoryIndex(
        ws,
        db_path=ws.parent / "learned-porter.sqlite",
        embedder=HashingEmbedder(),
        chunker=ChunkerConfig("line"),
        fts_tokenizer="porter",
        progress=False,
    )
    log(f"index of {n} chunks")
    idx.ensure_synced()
    queries = query_texts(note_lines(n, 0, NOTE_RARE_WORDS), nq)
    model = learned.fitted_model() or tuple(
        (f, 0.0, 1.0, 1.0) for f in [*learned.BASE_FEATURES, "vz*qlen", "tz*agree"]
    )
    off = memlab_best()
    on = memlab_best(neighbor_prev=0.0, neighbor_next=0.0, learned_model=model)
    log("candidates")
    cs = off.retrieve(idx, queries)
    on.scores(cs.subset([0]))  # warm the per-table caches (neighbours, lengths, headings)
    on.scores(cs)
    per = {"off": [], "on": []}
    for qi in range(len(cs)):
        one = cs.subset([qi])
        for name, p in (("off", off), ("on", on)):
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                p.scores(one)
                times.append(time.perf_counter() - t)
            per[name].append(min(times))
    off_ms = statistics.median(per["off"]) * 1e3
    on_ms = statistics.median(per["on"]) * 1e3
    added = [(b - a) * 1e3 for a, b in zip(per["off"], per["on"], strict=True)]
    res = {
        "chunks": n,
        "queries": len(cs),
        "candidates_per_query": float(cs.valid.sum(axis=1).mean()),
        "features": len(model),
        "scores_off_ms_median": round(off_ms, 3),
        "scores_on_ms_median": round(on_ms, 3),
        "added_ms_median": round(statistics.median(added), 3),
        "added_ms_max": round(max(added), 3),
        "ratio_on_off": round(on_ms / off_ms, 3),
        "target_ms": TARGET_MS,
        "within_target": statistics.median(added) <= TARGET_MS,
    }
    print_table([res])
    report("learned_stage", args, {"chunks": n, "queries": nq, "repeats": repeats}, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
