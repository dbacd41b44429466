"""Load and size benchmarks: searches under a live writer, a huge daily log, many tiny files.

``load``: an open-loop generator issues ``--rate`` searches per second (``memory_search``,
each thread with its own ``MemoryIndex`` on one index file) for ``--seconds``, while a
writer process appends a line to today's log every ``--append-every`` seconds and a
``memlab watch`` loop in that process re-indexes it. Latency is measured from each
search's scheduled start (queueing included) to its answer; errors are counted (expected:
none). After the run, every appended line must be findable.

``big-log``: index one daily log of ``--megabytes`` MB, then append a line and sync
again; reports time, peak memory (RSS) and the chunk rows rewritten by the append.

``tiny-files``: ``--files`` one-line files: full sync, no-op sync, one-file change.

    .venv/bin/python benchmarks/load.py load --seconds 60 --rate 50
    .venv/bin/python benchmarks/load.py big-log --megabytes 50
    .venv/bin/python benchmarks/load.py tiny-files --files 10000

Each prints one JSON object. tests/test_concurrency.py and tests/test_hostile.py run
reduced forms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

DIMS = 64
TODAY = "memory/2026-12-31.md"


def _embedder(kind: str) -> Any:
    from memlab.embed import HashingEmbedder

    if kind == "none":
        return None
    if kind == "hashing-words":
        return HashingEmbedder(DIMS, char_ngrams=None)
    if kind == "hashing":
        return HashingEmbedder(DIMS)
    raise ValueError(f"embedder must be hashing, hashing-words or none; got {kind!r}")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------------- big log
def big_log_run(workdir: str | Path, megabytes: float = 50, embedder: str = "hashing") -> dict:
    """Index one ``megabytes`` MB daily log, append a line, sync again.

    Run it in a fresh process for a meaningful ``peak_rss_mb`` (the process's maximum
    resident set, including the interpreter and imports: compare with
    ``rss_before_mb``, taken after the imports and the embedder's warm-up).
    """
    from memlab.retrieval.textquery import build_fts_query
    from memlab.store import MemoryIndex

    root = Path(workdir)
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    log = ws / TODAY
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    size, i = 0, 0
    with log.open("w", encoding="utf-8") as fh:
        while size < megabytes * 1_000_000:
            line = f"- {i:08d} " + " ".join(rng.choices(words, k=12)) + "\n"
            fh.write(line)
            size += len(line)
            i += 1
    emb = _embedder(embedder)
    if emb is not None:
        emb.embed_documents(["warm up"])
    before = _rss_mb()
    idx = MemoryIndex(ws, db_path=root / "index.sqlite", embedder=emb, progress=False)
    r1 = idx.sync()
    with log.open("a", encoding="utf-8") as fh:
        fh.write("- appended zzappendedzz line\n")
    r2 = idx.sync()
    pos, _ = idx.keyword_search(build_fts_query("zzappendedzz"), 3)
    idx.close()
    return {
        "megabytes": round(size / 1e6, 1),
        "lines": i,
        "embedder": embedder,
        "chunks": r1.chunks,
        "full_seconds": round(r1.seconds, 2),
        "append_seconds": round(r2.seconds, 2),
        "append_chunks_added": r2.chunks_added,
        "append_chunks_removed": r2.chunks_removed,
        "append_embedded": r2.embedded,
        "append_found": bool(pos.size),
        "rss_before_mb": round(before, 1),
        "peak_rss_mb": round(_rss_mb(), 1),
        "index_mb": round((root / "index.sqlite").stat().st_size / 1e6, 1),
    }


# ---------------------------------------------------------------------- tiny files
def tiny_files_run(workdir: str | Path, files: int = 10_000, embedder: str = "hashing") -> dict:
    """Full sync, no-op sync and one-file-change sync over ``files`` one-line files."""
    from memlab.store import MemoryIndex

    ws = Path(workdir) / "ws"
    for i in range(files):
        p = ws / "memory" / f"d{i % 100}" / f"n{i}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"- tiny note tok{i}x\n", encoding="utf-8")
    emb = _embedder(embedder)
    if emb is not None:
        emb.embed_documents(["warm up"])
    idx = MemoryIndex(ws, db_path=Path(workdir) / "index.sqlite", embedder=emb, progress=False)
    full = idx.sync()
    noop = idx.sync()
    (ws / "memory/d0/n0.md").write_text("- changed\n", encoding="utf-8")
    one = idx.sync()
    idx.close()
    return {
        "files": files,
        "full_seconds": round(full.seconds, 2),
        "noop_seconds": round(noop.seconds, 2),
        "one_change_seconds": round(one.seconds, 2),
        "chunks": full.chunks,
        "peak_rss_mb": round(_rss_mb(), 1),
    }


# ---------------------------------------------------------------------- load
WRITER = r"""
import sys, threading, time
from pathlib import Path
sys.path.insert(0, {bench!r})
from load import _embedder
from memlab.store import MemoryIndex
from memlab.files.watch import watch
ws, db, every, seconds = Path({ws!r}), Path({db!r}), {every!r}, {seconds!r}
idx = MemoryIndex(ws, db_path=db, embedder=_embedder({embedder!r}), progress=False)
stop = threading.Event()
t = threading.Thread(target=watch, kwargs=dict(index=idx, debounce_ms=200, settle_ms=200,
                     stop=stop, verbose=False), daemon=True)
t.start()
print("ready", flush=True)
n, t0 = 0, time.monotonic()
while time.monotonic() - t0 < seconds:
    with (ws / {today!r}).open("a", encoding="utf-8") as fh:
        fh.write(f"- appended line zzap{{n:06d}}zz during the load run\n")
    n += 1
    time.sleep(every)
time.sleep(1.5)  # let the watcher settle
stop.set()
t.join(30)
print(n, flush=True)
"""


def prepare_workspace(root: Path, days: int = 60) -> tuple[Path, list[str]]:
    """A synthetic workspace (``memlab synth``) and its questions, plus today's log."""
    from memlab.datasets.synthetic import SynthConfig, generate

    ds = generate(SynthConfig(days=days, seed=1), root / "synth")
    ws = Path(ds.workspaces["default"])
    (ws / TODAY).write_text("# 2026-12-31\n", encoding="utf-8")
    return ws, [str(q) for q in ds.queries["query"]]


def load_run(
    workdir: str | Path,
    *,
    seconds: float = 60.0,
    rate: float = 50.0,
    threads: int = 8,
    append_every: float = 0.2,
    embedder: str = "hashing",
    days: int = 60,
) -> dict:
    """Hold ``rate`` searches/s for ``seconds`` against one index while a writer appends.

    Open loop: search k is scheduled at ``t0 + k / rate`` and taken by the next free
    thread; its latency runs from the scheduled time to the answer, so a saturated
    system shows growing latencies instead of silently lowering the rate. Reports
    latency percentiles (ms), errors (exceptions or ``memory_search`` error payloads),
    the achieved rate, and how many appended lines a final search cannot find.
    """
    from memlab.retrieval.textquery import build_fts_query
    from memlab.store import MemoryIndex
    from memlab.tools import memory_search

    root = Path(workdir)
    ws, queries = prepare_workspace(root, days)
    db = root / "index.sqlite"
    setup = MemoryIndex(ws, db_path=db, embedder=_embedder(embedder), progress=False)
    setup.sync()
    setup.close()
    bench = str(Path(__file__).resolve().parent)
    code = WRITER.format(
        bench=bench,
        ws=str(ws),
        db=str(db),
        every=append_every,
        seconds=seconds,
        embedder=embedder,
        today=TODAY,
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    if writer.stdout.readline().strip() != "ready":
        raise RuntimeError(f"writer failed: {writer.stderr.read() if writer.stderr else ''}")

    total = int(seconds * rate)
    latencies = np.full(total, np.nan)
    service = np.full(total, np.nan)
    errors: list[str] = []
    lock = threading.Lock()
    next_k = [0]
    t0 = time.monotonic() + 0.5

    def worker() -> None:
        idx = MemoryIndex(ws, db_path=db, embedder=_embedder(embedder), progress=False)
        rng = random.Random(threading.get_ident())
        try:
            while True:
                with lock:
                    k = next_k[0]
                    next_k[0] += 1
                if k >= total:
                    return
                due = t0 + k / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                q = rng.choice(queries) if rng.random() < 0.8 else f"zzap{rng.randrange(999):06d}zz"
                start = time.monotonic()
                try:
                    out = memory_search(idx, q)
                    if "error" in out:
                        with lock:
                            errors.append(out["error"])
                except Exception as exc:  # counted, never fatal for the run
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                end = time.monotonic()
                latencies[k] = end - due
                service[k] = end - start
        finally:
            idx.close()

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.monotonic() - t0
    out, err = writer.communicate(timeout=120)
    appended = int(out.strip().splitlines()[-1]) if writer.returncode == 0 else 0
    n_chunks = len(MemoryIndex(ws, db_path=db, embedder=None).table)
    check = MemoryIndex(ws, db_path=db, embedder=_embedder(embedder), progress=False)
    missing = [
        n
        for n in range(appended)
        if check.keyword_search(build_fts_query(f"zzap{n:06d}zz"), 2)[0].size == 0
    ]
    check.close()
    lat = latencies[~np.isnan(latencies)] * 1000
    svc = service[~np.isnan(service)] * 1000
    pct = (50, 90, 99)
    return {
        "seconds": round(elapsed, 1),
        "target_rate": rate,
        "achieved_rate": round(len(lat) / elapsed, 1),
        "searches": len(lat),
        "errors": len(errors),
        "error_samples": errors[:5],
        "latency_ms": {f"p{p}": round(float(np.percentile(lat, p)), 1) for p in pct}
        | {"max": round(float(lat.max()), 1)},
        "service_ms": {f"p{p}": round(float(np.percentile(svc, p)), 1) for p in pct},
        "appended_lines": appended,
        "appended_missing_after_settle": len(missing),
        "writer_exit": writer.returncode,
        "writer_stderr": err[-500:] if writer.returncode else "",
        "threads": threads,
        "embedder": embedder,
        "index_chunks": n_chunks,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("load")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rate", type=float, default=50.0)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--append-every", type=float, default=0.2)
    p.add_argument("--embedder", default="hashing")
    p.add_argument("--days", type=int, default=180, help="days of the synthetic workspace")
    p = sub.add_parser("big-log")
    p.add_argument("--megabytes", type=float, default=50.0)
    p.add_argument("--embedder", default="hashing")
    p = sub.add_parser("tiny-files")
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--embedder", default="hashing")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlab-load-") as tmp:
        if args.cmd == "load":
            res = load_run(
                tmp,
                seconds=args.seconds,
                rate=args.rate,
                threads=args.threads,
                append_every=args.append_every,
                embedder=args.embedder,
                days=args.days,
            )
            bad = res["errors"] or res["appended_missing_after_settle"] or res["writer_exit"]
        elif args.cmd == "big-log":
            res = big_log_run(tmp, args.megabytes, args.embedder)
            bad = not res["append_found"]
        else:
            res = tiny_files_run(tmp, args.files, args.embedder)
            bad = False
    res["machine"] = {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)}
    print(json.dumps(res, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
