"""Shared helpers of the benchmark scripts: machine description, repeats, tables, JSON.

Every script under ``benchmarks/`` prints a table and, with ``--json PATH``,
writes ``{"benchmark", "command", "date", "commit", "machine", "memlab_version", "inputs",
"results"}`` (``provenance``: when, and from which commit of the repository) where every
timing is ``{"min", "median", "max", "n"}`` over repeats.
``--quick`` sizes a script to well under a minute on a 2-core machine (the
measured times of each script are in its ``--help``; ``QUICK_SECONDS`` below).
Output rules (``fmt``): an interval is printed only from 3 or more samples
(fewer: the value and "1 run"/"2 runs"), and a figure that was not measured
is printed as "not measured", never as None or NaN.

``random_lab_candidates`` builds a document-level candidate set with random
leg scores (no index, no text), used by the sweep benchmark and the CI
guards: every candidate is its own chunk and its own evidence unit, so
memlab's span metrics equal ranx's document metrics on it.

``chunk_as_unit`` is memlab-best-chunk scoring each chunk as one unit, the system the
chunk-level studies (locomo_quality, chunk_quality, chunk_lines, transfer_ideas,
model_swap) measured their documented figures with.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ command line
# Wall-clock seconds of each script's --quick run, measured on the 2-core reference machine
# (shared with other work) with an empty benchmark cache / with it filled by a first run.
# `memlab bench --quick` runs all four; its help states the sum.
QUICK_SECONDS: dict[str, tuple[int, int]] = {
    # measured 2026-12-01 (load average ~4 from other work); cached: the same run's log
    # minus its one-off corpus and index builds
    "sweep_speed": (6, 5),
    "search_latency": (33, 22),
    "index_throughput": (38, 25),
    "quality": (3, 3),
    # measured 2026-12-01 17:17-17:22 UTC at load ~4, niced, as two passes over an empty then
    # the filled MEMLAB_BENCH_CACHE; mcp_load builds its index in a fresh folder every run
    # (measured 14 and 19 s: the larger stated for both)
    "cold_search": (81, 41),
    "mcp_latency": (22, 14),
    "mcp_load": (19, 19),
    "embed_throughput": (95, 82),
    # measured 2026-12-02 04:47 UTC at load < 1, niced, empty then filled MEMLAB_BENCH_CACHE
    # (the indexes are rebuilt in a temporary folder every run)
    "best_line_cost": (9, 8),
}


def quick_help(name: str) -> str:
    """The --quick help text of a benchmark, with its measured duration."""
    if name not in QUICK_SECONDS:
        return "smaller sizes for a fast check (see the script's docstring)"
    first, cached = QUICK_SECONDS[name]
    return (
        f"small sizes: ~{first} s the first time on 2 cores, ~{cached} s once its "
        "corpora and indexes are cached"
    )


def parser(description: str, name: str | None = None) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark takes (``name``: the script,
    for the measured duration of its --quick run)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help=quick_help(name or ""))
    p.add_argument("--json", metavar="PATH", help="write every figure as JSON here")
    p.add_argument("--repeats", type=int, default=None, help="repeats per measurement")
    return p


_T0 = time.perf_counter()


def log(message: str) -> None:
    """A progress line on stderr with the seconds since the script started."""
    print(f"[{time.perf_counter() - _T0:7.1f} s] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ the machine
def machine() -> dict[str, Any]:
    """What the numbers were measured on: CPU, cores, memory, load, library versions."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("faiss", "sqlite_vec", "ranx", "torch"):
        m = sys.modules.get(mod)
        if m is not None:
            versions[mod] = str(getattr(m, "__version__", "?"))
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "versions": versions,
    }


def provenance() -> dict[str, str]:
    """``date``: now, UTC, ISO 8601 to the second; ``commit``: the repository's ``HEAD``
    (``git rev-parse``), with ``-dirty`` appended when tracked files differ from it, so a
    figure measured on uncommitted code says so; ``unknown`` outside a git checkout."""
    date = datetime.now(UTC).isoformat(timespec="seconds")

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("diff", "--quiet", "HEAD", "--").returncode == 1
    except (OSError, subprocess.SubprocessError):
        return {"date": date, "commit": "unknown"}
    if head.returncode != 0:
        return {"date": date, "commit": "unknown"}
    return {"date": date, "commit": head.stdout.strip() + ("-dirty" if dirty else "")}


def memlab_version() -> str:
    from memlab import __version__

    return __version__


# ------------------------------------------------------------------ studied systems
# The label of memlab-best-chunk's chunk-as-unit system (``memlab.pipeline.presets.CHUNK_AS_UNIT``:
# no best-line step, min_score 0): the system the chunk-level studies tuned and measured
# their documented figures with (docs/studies/); the preset ranks chunks by their best
# line and keeps this scoring as its tie-break.
CHUNK_UNIT_NAME = "memlab-best-chunk (chunks as units)"


def chunk_as_unit(**overrides: Any) -> Pipeline:
    """``memlab_best_chunk`` with ``CHUNK_AS_UNIT`` (each chunk scored as one unit), named
    ``CHUNK_UNIT_NAME``; ``overrides`` win over both, so a grid point may set its own
    ``min_score`` (passing it beside ``**CHUNK_AS_UNIT`` would be a duplicate keyword)."""
    from memlab.pipeline.presets import CHUNK_AS_UNIT, memlab_best_chunk

    return memlab_best_chunk(**{"name": CHUNK_UNIT_NAME, **CHUNK_AS_UNIT, **overrides})


# ------------------------------------------------------------------ measuring
def stats(values: Sequence[float]) -> dict[str, float]:
    """min / median / max / n of repeated measurements (empty → NaNs, n 0)."""
    v = [float(x) for x in values]
    if not v:
        return {"min": float("nan"), "median": float("nan"), "max": float("nan"), "n": 0}
    return {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}


def repeat(fn: Callable[[], Any], repeats: int, *, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls of ``fn`` after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux ru_maxrss is KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mb() -> float:
    """Current resident set size in MiB (from /proc; NaN where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


# ------------------------------------------------------------------ output
NOT_MEASURED = "not measured"
MIN_SAMPLES_FOR_INTERVAL = 3


def fmt(x: Any, digits: int = 3) -> str:
    """A table cell. Timings (``stats`` dicts): ``median [min–max]`` from 3 or more
    samples, the value and ``(1 run)`` / ``(2 runs)`` from fewer (a range of one or two
    samples is no interval), ``not measured`` from none. None and NaN: ``not measured``.
    Other floats to ``digits`` significant digits; anything else as ``str``."""
    if x is None:
        return NOT_MEASURED
    if isinstance(x, dict) and "median" in x:
        n = int(x.get("n", MIN_SAMPLES_FOR_INTERVAL))
        if n <= 0 or _isnan(x["median"]):
            return NOT_MEASURED
        if n < MIN_SAMPLES_FOR_INTERVAL:
            return f"{x['median']:.{digits}g} ({n} run{'s' if n > 1 else ''})"
        return f"{x['median']:.{digits}g} [{x['min']:.{digits}g}–{x['max']:.{digits}g}]"
    if isinstance(x, float | np.floating):
        return NOT_MEASURED if _isnan(x) else f"{float(x):.{digits}g}"
    return str(x)


def fmt_seconds(x: Any, digits: int = 3) -> str:
    """``fmt`` of a timing with its unit: ``0.12 s [0.11–0.13]``, ``0.12 s (1 run)``."""
    cell = fmt(x, digits)
    if cell == NOT_MEASURED:
        return cell
    value, _, rest = cell.partition(" ")
    return f"{value} s" + (f" {rest}" if rest else "")


def _isnan(v: Any) -> bool:
    try:
        return bool(np.isnan(float(v)))
    except (TypeError, ValueError):
        return False


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table: ``header`` then one line per row of cells (no trailing newline)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> None:
    """A plain-text table (timings shown as median [min–max])."""
    if not rows:
        print("(no rows)")
        return
    cols = list(columns or rows[0].keys())
    cells = [[fmt(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))


def report(
    name: str, args: argparse.Namespace, inputs: dict[str, Any], results: dict[str, Any]
) -> dict[str, Any]:
    """The benchmark's JSON document; written to ``args.json`` when given."""
    doc = {
        "benchmark": name,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        **provenance(),
        "machine": machine(),
        "memlab_version": memlab_version(),
        "quick": bool(getattr(args, "quick", False)),
        "inputs": inputs,
        "results": results,
    }
    if getattr(args, "json", None):
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, default=_plain) + "\n")
        print(f"wrote {path}")
    return doc


def _plain(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


# ------------------------------------------------------------------ data
def random_lab_candidates(
    n_queries: int = 1000,
    depth: int = 50,
    *,
    overlap: float = 0.3,
    relevant: tuple[int, int] = (1, 3),
    seed: int = 0,
) -> Any:
    """A document-level ``LabCandidates`` with random leg scores (no index, no text).

    Per query: ``depth`` vector hits (cosine, descending) and ``depth``
    keyword hits (FTS5-style negative bm25, best first) over a private pool of
    documents; a share ``overlap`` of the keyword hits are also vector hits.
    1–3 documents per query are relevant; each relevant document gets a boost
    in one or both legs, so that fusion weights matter. Every document is its
    own one-line chunk and evidence span (grade 1), hence memlab's span metrics
    are the standard document metrics. Deterministic for a seed.
    Returns the ``LabCandidates``; ``.extra`` holds the ranx-style dicts
    ``qrels``, ``vector_run`` and ``text_run`` (bm25 mapped as OpenClaw).
    """
    import pandas as pd

    from memlab.eval.lab import LabCandidates
    from memlab.eval.relevance import candidate_coverage, span_table
    from memlab.retrieval.candidates import CandidateSet, merge_row, pad_rows
    from memlab.retrieval.fusion import bm25_rank_to_score
    from memlab.store import ChunkTable

    rng = np.random.default_rng(seed)
    pool = 2 * depth
    n_docs = n_queries * pool
    rows = []
    ev_rows = []
    qrels: dict[str, dict[str, int]] = {}
    vrun: dict[str, dict[str, float]] = {}
    trun: dict[str, dict[str, float]] = {}
    paths = np.array([f"q{q}/d{j}.md" for q in range(n_queries) for j in range(pool)], dtype=object)
    for q in range(n_queries):
        base = q * pool
        n_rel = int(rng.integers(relevant[0], relevant[1] + 1))
        rel = rng.choice(pool, size=n_rel, replace=False)
        vec = rng.beta(2, 5, size=pool) * 0.8
        txt = rng.gamma(2.0, 2.0, size=pool)
        for d in rel:
            leg = rng.integers(0, 3)  # 0 vector, 1 keyword, 2 both
            if leg in (0, 2):
                vec[d] += rng.uniform(0.05, 0.3)
            if leg in (1, 2):
                txt[d] += rng.uniform(1.0, 6.0)
        v_docs = np.argsort(-vec, kind="stable")[:depth]
        n_shared = round(overlap * depth)
        shared = rng.choice(v_docs, size=n_shared, replace=False)
        others = np.setdiff1d(np.arange(pool), v_docs)
        k_docs = np.concatenate([shared, others[: depth - n_shared]])
        k_docs = k_docs[np.argsort(-txt[k_docs], kind="stable")]
        rows.append(
            merge_row(base + v_docs, vec[v_docs].astype(float), base + k_docs, -txt[k_docs])
        )
        qid = f"q{q}"
        qrels[qid] = {f"q{q}/d{d}.md": 1 for d in rel}
        vrun[qid] = {f"q{q}/d{d}.md": float(vec[d]) for d in v_docs}
        trun[qid] = {f"q{q}/d{d}.md": bm25_rank_to_score(-float(txt[d])) for d in k_docs}
        ev_rows.extend((qid, f"q{q}/d{d}.md", 1, 1) for d in rel)
    pos, vs, tr, vr, kr = pad_rows(rows)
    table = ChunkTable(
        rowids=np.arange(n_docs, dtype=np.int64),
        ids=paths.copy(),
        paths=paths,
        sources=np.full(n_docs, "memory", dtype=object),
        start_lines=np.ones(n_docs, dtype=np.int64),
        end_lines=np.ones(n_docs, dtype=np.int64),
        mtimes=np.zeros(n_docs),
        vectors=np.zeros((n_docs, 1), dtype=np.float32),
    )
    qids = [f"q{q}" for q in range(n_queries)]
    cs = CandidateSet(
        qids=qids,
        queries=qids,
        pos=pos,
        vec_score=vs,
        text_raw=tr,
        vec_rank=vr,
        text_rank=kr,
        table=table,
        depth=depth,
    )
    evidence = pd.DataFrame(ev_rows, columns=["qid", "path", "start_line", "end_line"])
    vocab = paths.tolist()
    spans = span_table(evidence, qids, vocab)
    safe = np.maximum(pos, 0)
    cand_path = np.where(pos >= 0, safe, -1)  # path index == document position
    covers = candidate_coverage(cand_path, table.start_lines[safe], table.end_lines[safe], spans)
    lc = LabCandidates(
        cs=cs,
        qids=qids,
        spans=spans,
        covers=covers,
        categories=np.full(n_queries, "random", dtype=object),
    )
    lc.extra = {"qrels": qrels, "vector_run": vrun, "text_run": trun}  # type: ignore[attr-defined]
    return lc


def cache_dir() -> Path:
    """Where benchmark corpora and indexes are kept between runs: ``MEMLAB_BENCH_CACHE``,
    else ``memlab.paths.cache_dir("bench")`` ($XDG_CACHE_HOME/memlab/bench, else
    ~/.cache/memlab/bench)."""
    from memlab.paths import cache_dir as memlab_cache_dir

    env = os.environ.get("MEMLAB_BENCH_CACHE")
    path = Path(env).expanduser() if env else memlab_cache_dir("bench")
    path.mkdir(parents=True, exist_ok=True)
    return path


def pseudo_words(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct pronounceable pseudo-words (consonant-vowel syllables), deterministic."""
    rng = np.random.default_rng(10_000 + seed)
    cons, vows = "bdfgklmnprstvz", "aeiou"
    out: dict[str, None] = {}
    while len(out) < n:
        k = int(rng.integers(2, 4))
        w = "".join(
            cons[int(rng.integers(0, 14))] + vows[int(rng.integers(0, 5))] for _ in range(k)
        )
        out.setdefault(w + cons[int(rng.integers(0, 14))], None)
    return list(out)


def note_lines(n: int, seed: int = 0, rare_words: int = 0) -> list[str]:
    """``n`` distinct note lines in the style of the synthetic corpus (meetings, todos,
    decisions, notes, command logs), each ending in a unique ``#n`` tag so that every
    line has a token no other line has. Deterministic for a seed.

    The templates use a few hundred words, far fewer than real notes; ``rare_words``
    > 0 adds that many words per line drawn from a Zipf(1.2) law over 50,000
    pseudo-words, giving the long-tailed term statistics of real text (which keyword
    search speed depends on)."""
    from memlab.datasets.synthetic import lexicon as lx

    rng = np.random.default_rng(seed)
    templates = [t for group in lx.FILLER.values() for t in group]
    repos = [p.lower() + "-" + s for p in lx.PROJECTS[:8] for s in ("app", "api", "infra")]
    pools: dict[str, Sequence[str]] = {
        "project": lx.PROJECTS,
        "F": lx.FIRST_NAMES,
        "component": lx.COMPONENTS,
        "weekday": lx.WEEKDAYS,
        "vendor": lx.VENDORS,
        "topic": lx.LUNCH_TOPICS,
        "repo": repos,
    }
    out = []
    tpl = rng.integers(0, len(templates), size=n)
    for i in range(n):
        t = templates[tpl[i]]
        vals: dict[str, Any] = {}
        for key, pool in pools.items():
            if "{" + key in t:
                vals[key] = pool[int(rng.integers(0, len(pool)))]
        if "{P}" in t:
            vals["P"] = (
                f"{lx.FIRST_NAMES[int(rng.integers(0, len(lx.FIRST_NAMES)))]} "
                f"{lx.LAST_NAMES[int(rng.integers(0, len(lx.LAST_NAMES)))]}"
            )
        hh, mm = int(rng.integers(8, 19)), int(rng.integers(0, 4)) * 15
        vals.update(
            time=f"{hh:02d}:{mm:02d}",
            n=int(rng.integers(2, 400)),
            m=int(rng.integers(0, 40)),
            s=int(rng.integers(3, 300)),
            pr=int(rng.integers(100, 9999)),
        )
        out.append(t.format(**vals) + f" #n{i}")
    if rare_words:
        vocab = pseudo_words(50_000)
        wrng = np.random.default_rng(seed + 20_000)
        ranks = wrng.zipf(1.2, size=(n, rare_words))
        ranks = np.where(ranks > len(vocab), wrng.integers(1, len(vocab) + 1, ranks.shape), ranks)
        out = [
            f"{line[: line.rindex(' #n')]} ({' '.join(vocab[r - 1] for r in rr)}){line[line.rindex(' #n') :]}"
            for line, rr in zip(out, ranks.tolist(), strict=True)
        ]
    return out


NOTE_RARE_WORDS = 3  # pseudo-words per note in the search-latency corpus


def note_workspace(n_chunks: int, seed: int = 0, lines_per_file: int = 50) -> Path:
    """A workspace of ``n_chunks`` one-line notes (``note_lines`` with ``NOTE_RARE_WORDS``
    Zipf-distributed words each) in daily logs (``memory/YYYY-MM-DD.md``,
    ``lines_per_file`` list items each, newest 2026-03-31), cached under ``cache_dir()``.
    With the line chunker every note is one chunk."""
    import datetime as dt

    root = cache_dir() / f"notes-z{NOTE_RARE_WORDS}-{n_chunks}-s{seed}"
    ws = root / "workspace"
    done = root / "complete"
    if done.exists():
        return ws
    lines = note_lines(n_chunks, seed, NOTE_RARE_WORDS)
    mem = ws / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    end = dt.date(2026, 3, 31)
    for f, lo in enumerate(range(0, n_chunks, lines_per_file)):
        day = end - dt.timedelta(days=f)
        body = "".join(f"- {t}\n" for t in lines[lo : lo + lines_per_file])
        (mem / f"{day.isoformat()}.md").write_text(body, encoding="utf-8")
    done.write_text(str(n_chunks))
    return ws


def query_texts(lines: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` queries made from random corpus lines: the ``#n`` tag and one other word
    dropped, so a query resembles its source line without being identical to it."""
    rng = np.random.default_rng(seed + 1)
    out = []
    for i in rng.choice(len(lines), size=min(n, len(lines)), replace=False):
        words = lines[int(i)].split()[:-1]
        if len(words) > 3:
            del words[int(rng.integers(0, len(words)))]
        out.append(" ".join(words))
    return out
