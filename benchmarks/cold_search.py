"""`memlab search` cold, end to end, onnx vs torch; `import memlab` (docs/benchmarks.md §7–§8).

**Cold search.** A workspace from memlab's synthetic generator (``SynthConfig(days=D)``:
one daily log per day, ~1 chunk each with OpenClaw's chunker; ``--days 1000`` gives
~1,000 chunks), indexed once with the packaged all-MiniLM-L6-v2 into the benchmark
cache (``cache_dir()``, never the repository). Then ``memlab search WS QUERY --json``
runs as a fresh process per call — the path a CLI user or an agent calling the CLI
pays every time: interpreter start, imports, opening the index, the sync check, loading
the model, embedding the query, the search. ``--local-backend torch``
(sentence-transformers, the old path) and ``onnx`` (onnxruntime + tokenizers) run
interleaved (the order alternates per round) on the same index, same queries (the
generator's own), after one untimed warm-up call each (page cache warm, as for a user
calling repeatedly; it also records which heavy modules the search process imported).
Per call: wall seconds and the child's peak RSS (``wait4``).
Reported: median [min–max] per backend, the ratio torch / onnx of the medians, and
whether both backends returned the same result list for every query.

**Import.** ``python -c "import memlab"`` in a fresh interpreter (median of N, against
``python -c pass``), ``memlab --help``, and the heavy modules loaded by the import.

    python benchmarks/cold_search.py --json benchmarks/results/cold_search.json
    python benchmarks/cold_search.py --quick            # 20 days, 2 rounds
    python benchmarks/cold_search.py --parts import     # the import part alone (seconds)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import cache_dir, log, parser, print_table, report, stats

BACKENDS = ("torch", "onnx")
# Modules a query must not need; torch's presence is the guard.
HEAVY = ("torch", "sentence_transformers", "transformers", "sklearn", "onnxruntime", "scipy")
FULL = {"days": 1000, "rounds": 10, "import_runs": 15}
QUICK = {"days": 20, "rounds": 2, "import_runs": 5}


def memlab_command() -> list[str]:
    """How a user starts memlab: the venv's ``memlab`` console script next to this
    interpreter, else ``python -m memlab.cli``."""
    script = Path(sys.executable).with_name("memlab")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "memlab.cli"]


def timed_run(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` once: wall seconds, the child's peak RSS in MiB (``wait4``), exit code,
    stdout and stderr (both read through files, so a large output cannot block the pipe)."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {
            "seconds": seconds,
            "rss_mb": usage.ru_maxrss / 1024.0,
            "code": proc.returncode,
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


def indexed_workspace(days: int, seed: int = 0) -> dict[str, Any]:
    """The synthetic workspace of ``days`` days and its local-model index (onnx backend:
    the same vectors and identity as torch), built once under ``cache_dir()``.
    Returns workspace, db, queries, chunks and the build's seconds (from its first run)."""
    from memlab.datasets.synthetic import SynthConfig, generate

    root = cache_dir() / f"cold-synth-d{days}-s{seed}"
    info_file = root / "build.json"
    if info_file.is_file():
        return json.loads(info_file.read_text())
    log(f"generating a {days}-day synthetic workspace in {root}")
    ds = generate(SynthConfig(days=days, seed=seed), root / "data", overwrite=True)
    ws = Path(ds.workspaces["default"])
    db = root / "index.sqlite"
    db.unlink(missing_ok=True)
    log("indexing it with the local model (onnx backend), once")
    cmd = [*memlab_command(), "index", str(ws), "--db", str(db), "--embedder", "local"]
    r = timed_run([*cmd, "--local-backend", "onnx", "--quiet", "--json"])
    if r["code"] != 0:
        raise RuntimeError(f"memlab index {ws} failed ({r['code']}): {r['stderr'][-2000:]}")
    built = json.loads(r["stdout"])
    info = {
        "workspace": str(ws),
        "db": str(db),
        "days": days,
        "chunks": built["chunks"],
        "files": built["files"],
        "build_seconds": r["seconds"],
        "queries": [str(q) for q in ds.queries["query"].tolist()],
    }
    info_file.write_text(json.dumps(info, indent=1))
    return info


def hits(stdout: str) -> list[tuple[str, int, int]]:
    """The (path, startLine, endLine) list of a ``memlab search --json`` answer."""
    return [(r["path"], r["startLine"], r["endLine"]) for r in json.loads(stdout)["results"]]


def heavy_modules_of(args: list[str]) -> list[str]:
    """The ``HEAVY`` modules a ``memlab ARGS`` process has imported when it exits (run
    through ``memlab.cli.main`` in a wrapper that reports ``sys.modules`` at exit)."""
    code = (
        "import atexit, json, sys\n"
        f"HEAVY = {HEAVY!r}\n"
        "atexit.register(lambda: sys.stderr.write('\\nHEAVY ' + json.dumps("
        "[m for m in HEAVY if m in sys.modules]) + '\\n'))\n"
        f"sys.argv = ['memlab', *{args!r}]\n"
        "from memlab.cli import main\n"
        "sys.exit(main())\n"
    )
    r = timed_run([sys.executable, "-c", code])
    if r["code"] != 0:
        raise RuntimeError(f"memlab {' '.join(args)} failed ({r['code']}): {r['stderr'][-2000:]}")
    for line in reversed(r["stderr"].splitlines()):
        if line.startswith("HEAVY "):
            return json.loads(line[6:])
    raise RuntimeError(f"no module report from memlab {' '.join(args)}: {r['stderr'][-1000:]}")


def bench_search(days: int, rounds: int) -> dict[str, Any]:
    """Interleaved cold ``memlab search`` calls, torch vs onnx (see the module docstring)."""
    info = indexed_workspace(days)
    ws, db, queries = info["workspace"], info["db"], info["queries"]

    def args(backend: str, query: str) -> list[str]:
        common = ["--db", db, "--embedder", "local", "--local-backend", backend, "--json"]
        return ["search", ws, query, *common]

    # The warm-up call of each backend (page cache; the onnx export if not cached yet) is
    # the module probe: the same search, through a wrapper that reports sys.modules.
    heavy = {b: heavy_modules_of(args(b, queries[0])) for b in BACKENDS}
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in BACKENDS}
    same = 0
    for i in range(rounds):
        q = queries[(i * 7) % len(queries)]
        order = BACKENDS if i % 2 == 0 else BACKENDS[::-1]
        answers = {}
        for b in order:
            r = timed_run([*memlab_command(), *args(b, q)])
            if r["code"] != 0:
                raise RuntimeError(f"memlab search ({b}) failed: {r['stderr'][-2000:]}")
            runs[b].append(r)
            answers[b] = hits(r["stdout"])
        same += answers["torch"] == answers["onnx"]
        log(
            f"round {i + 1}/{rounds}: "
            + ", ".join(f"{b} {runs[b][-1]['seconds']:.2f} s" for b in BACKENDS)
        )
    per = {
        b: {
            "seconds": stats([r["seconds"] for r in runs[b]]),
            "rss_mb": stats([r["rss_mb"] for r in runs[b]]),
            "heavy_modules": heavy[b],
        }
        for b in BACKENDS
    }
    paired = [t["seconds"] / o["seconds"] for t, o in zip(runs["torch"], runs["onnx"], strict=True)]
    return {
        "workspace": {k: info[k] for k in ("days", "files", "chunks", "build_seconds")},
        "rounds": rounds,
        "backends": per,
        "ratio_torch_over_onnx": per["torch"]["seconds"]["median"]
        / per["onnx"]["seconds"]["median"],
        "paired_ratio": stats(paired),
        "same_results": same,
    }


def bench_import(runs: int) -> dict[str, Any]:
    """``import memlab`` and ``memlab --help`` in fresh interpreters, ``runs`` each,
    interleaved with a bare ``python -c pass``; the heavy modules the import loads."""
    py = sys.executable
    cmds = {
        "python_startup": [py, "-c", "pass"],
        "import_memlab": [py, "-c", "import memlab"],
        "memlab_help": [*memlab_command(), "--help"],
    }
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for c in cmds.values():  # warm-up: .pyc files and the page cache
        timed_run(c)
    for _ in range(runs):
        for k, c in cmds.items():
            r = timed_run(c)
            if r["code"] != 0:
                raise RuntimeError(f"{' '.join(c)} failed: {r['stderr'][-1000:]}")
            times[k].append(r["seconds"])
    probe = [
        py,
        "-c",
        f"import sys, json, memlab; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))",
    ]
    heavy = json.loads(timed_run(probe)["stdout"])
    out: dict[str, Any] = {f"{k}_seconds": stats(v) for k, v in times.items()}
    out["import_memlab_net_seconds"] = (
        out["import_memlab_seconds"]["median"] - out["python_startup_seconds"]["median"]
    )
    out["heavy_after_import"] = heavy
    out["help_heavy_modules"] = heavy_modules_of(["--help"])
    out["runs"] = runs
    return out


def main() -> int:
    p = parser(__doc__.split("\n\n")[0], "cold_search")
    p.add_argument("--days", type=int, help="synthetic days (≈ chunks; default 1000, quick 20)")
    p.add_argument("--parts", default="search,import", help="search, import or both")
    args = p.parse_args()
    size = QUICK if args.quick else FULL
    days = args.days or size["days"]
    rounds = args.repeats or size["rounds"]
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    if not set(parts) <= {"search", "import"} or not parts:
        p.error(f"--parts: choose from search, import (got {args.parts!r})")
    results: dict[str, Any] = {}
    if "import" in parts:
        log("import memlab / memlab --help in fresh interpreters")
        results["import"] = bench_import(args.repeats or size["import_runs"])
        i = results["import"]
        print_table(
            [
                {"what": "python -c pass", "seconds": i["python_startup_seconds"]},
                {"what": "python -c 'import memlab'", "seconds": i["import_memlab_seconds"]},
                {"what": "memlab --help", "seconds": i["memlab_help_seconds"]},
            ]
        )
        print(f"heavy modules after import memlab: {i['heavy_after_import'] or 'none'}")
    if "search" in parts:
        results["search"] = s = bench_search(days, rounds)
        print_table(
            [
                {
                    "backend": b,
                    "seconds": s["backends"][b]["seconds"],
                    "peak RSS MiB": s["backends"][b]["rss_mb"],
                    "heavy modules": ",".join(s["backends"][b]["heavy_modules"]) or "none",
                }
                for b in BACKENDS
            ]
        )
        print(
            f"{s['workspace']['chunks']} chunks; torch/onnx {s['ratio_torch_over_onnx']:.1f}x; "
            f"same results {s['same_results']}/{s['rounds']}"
        )
    inputs = {"days": days, "rounds": rounds, "parts": parts, "backends": list(BACKENDS)}
    report("cold_search", args, inputs, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
