"""``memlab bench``: run the speed, load and guard benchmarks of memlab's repository.

The benchmark scripts (``benchmarks/*.py``) are not part of the installed package: they
read the repository's committed corpora (``datasets/``), write beside its committed
results, and time the checkout's own code. ``memlab bench`` therefore runs them from a
checkout of the repository, found by one rule (`find_checkout`): ``$MEMLAB_CHECKOUT`` when
set (a folder that is not a checkout is an error, never replaced by another), else the
folder above the imported ``memlab`` package (an editable install, or a run from the
checkout), else the current directory. Without one it names the benchmarks and says how to
run them from a checkout (exit 2). The quality studies (``studies/*.py``,
docs/studies/index.md) are run by name too, never by default.

Module-level imports are the standard library and ``memlab.errors`` only, so ``memlab
--help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from memlab.errors import CliError

__all__ = [
    "BENCHMARKS",
    "CHECKOUT_ENV",
    "OTHER_SCRIPTS",
    "QUICK_SECONDS_CACHED",
    "QUICK_SECONDS_FIRST",
    "add_parser",
    "cmd_bench",
    "find_checkout",
    "is_checkout",
    "no_checkout_message",
    "script_path",
]

# What `memlab bench` runs, in order, with what each measures (docs/benchmarks.md).
BENCHMARKS: dict[str, str] = {
    "sweep_speed": "weight sweeps over cached candidates: the fast path vs ranx vs one at a time",
    "search_latency": "search latency and memory from 1k to 1M chunks vs OpenClaw's pinned path",
    "index_throughput": "indexing throughput vs the embedder's own; incremental sync",
    "quality": "the regression guard: every preset's recall / nDCG vs benchmarks/baseline.json",
    "cold_search": "`memlab search` cold, end to end, onnx vs torch; `import memlab`",
    "mcp_latency": "memory_search through the warm MCP server, query embedding included",
    "mcp_load": "the MCP server under concurrent clients while a writer appends",
    "embed_throughput": "embedding throughput of the packaged model per backend",
    "best_line_cost": "what ranking chunks by their best line costs: index, build, latency",
}
# The other scripts of benchmarks/, run by name (`memlab bench NAME`) or directly, never by
# default: the reliability runs (docs/reliability.md) and the Ray, learned-stage and harvest
# timings.
OTHER_SCRIPTS: dict[str, str] = {
    "load": "searches under a live writer, a huge daily log, many tiny files",
    "kill_loop": "SIGKILL the indexer at random moments, many times",
    "ray_eval": "`memlab eval` on Ray: local vs 1 and 2 workers",
    "learned_stage": "the learned stage's cost per query",
    "harvest_speed": "`memlab harvest` on 1,000 sessions / 10,000 memory_search calls",
}
# `memlab bench --quick`, measured on the 2-core reference machine (shared with other
# work): seconds with an empty benchmark cache, and once its corpora and indexes are cached.
# benchmarks/_common.py QUICK_SECONDS has the per-script figures; keep the two in step.
QUICK_SECONDS_FIRST, QUICK_SECONDS_CACHED = 306, 219
# A checkout of memlab's repository to run the benchmarks from (docs/cli.md).
CHECKOUT_ENV = "MEMLAB_CHECKOUT"
# Where the installed package sits: memlab/cli/bench.py → the folder holding memlab/.
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def is_checkout(folder: Path) -> bool:
    """Whether ``folder`` is a checkout of memlab's repository: it holds the benchmarks'
    shared module, ``benchmarks/_common.py``."""
    return (folder / "benchmarks" / "_common.py").is_file()


def find_checkout() -> tuple[Path | None, list[str]]:
    """The checkout ``memlab bench`` runs from, and the places looked at (for the message
    when there is none): ``$MEMLAB_CHECKOUT`` when set, else the folder above the imported
    package, else the current directory. A ``$MEMLAB_CHECKOUT`` that is not a checkout is a
    ``CliError`` (a place given that is wrong is never replaced by another)."""
    given = os.environ.get(CHECKOUT_ENV)
    if given:
        folder = Path(given).expanduser().resolve()
        if not is_checkout(folder):
            raise CliError(
                f"{CHECKOUT_ENV}={given} is not a checkout of memlab's repository (no"
                f" {folder / 'benchmarks' / '_common.py'}): point it at the folder holding"
                " pyproject.toml, memlab/ and benchmarks/, or unset it"
            )
        return folder, [f"${CHECKOUT_ENV} ({folder})"]
    looked = [f"${CHECKOUT_ENV} (not set)"]
    for folder, what in ((PACKAGE_PARENT, "above the memlab package"), (Path.cwd(), "here")):
        if is_checkout(folder):
            return folder, [*looked, f"{folder} ({what})"]
        looked.append(f"{folder} ({what})")
    return None, looked


def script_path(checkout: Path, name: str) -> Path | None:
    """The script ``name`` of a checkout: ``benchmarks/NAME.py``, else the study
    ``studies/NAME.py``; None when there is neither."""
    for folder in (checkout / "benchmarks", checkout / "studies"):
        if (folder / f"{name}.py").is_file():
            return folder / f"{name}.py"
    return None


def no_checkout_message(names: list[str], looked: list[str], quick: bool) -> str:
    """What ``memlab bench`` says when no checkout is found: the benchmarks there are, that
    they run from a checkout of memlab's repository, and the commands that run them."""
    width = max(len(n) for n in [*BENCHMARKS, *OTHER_SCRIPTS])
    rows = [f"  {n.ljust(width)}  {what}" for n, what in {**BENCHMARKS, **OTHER_SCRIPTS}.items()]
    name = names[0] if len(names) == 1 else None
    bench = " ".join(["memlab bench", *([name] if name else []), *(["--quick"] if quick else [])])
    # A name that is not one of benchmarks/ is a study's (studies/), or a typo that
    # the checkout's own `memlab bench` then names.
    folder = "benchmarks" if not name or name in {**BENCHMARKS, **OTHER_SCRIPTS} else "studies"
    script = f"python {folder}/{name or 'NAME'}.py" + (" --quick" if quick or not name else "")
    return "\n".join(
        [
            "memlab bench runs the benchmark scripts of memlab's repository (benchmarks/*.py),"
            " which the installed package does not include, and found no checkout (looked at: "
            + "; ".join(looked)
            + ").",
            "",
            f"The benchmarks (`memlab bench` runs the first {len(BENCHMARKS)}, the others by"
            " name, as the quality studies of studies/):",
            *rows,
            "",
            "From a checkout of the repository (a git clone: the folder holding pyproject.toml,"
            " memlab/ and benchmarks/), either:",
            f"  {CHECKOUT_ENV}=/path/to/checkout {bench}",
            f"  cd /path/to/checkout && {script}",
        ]
    )


def cmd_bench(args: argparse.Namespace) -> int:
    """Run benchmark scripts in turn (each in its own process, as its docs describe);
    prints each one's wall time and the total, and returns the worst exit code. No
    checkout to run them from: a ``CliError`` naming them and the commands (exit 2)."""
    import subprocess
    import time

    names = [args.name] if args.name else list(BENCHMARKS)
    checkout, looked = find_checkout()
    if checkout is None:
        raise CliError(no_checkout_message(names, looked, args.quick))
    scripts = {}
    for n in names:
        script = script_path(checkout, n)
        if script is None:
            raise CliError(
                f"no benchmark {n!r} (looked for {checkout / 'benchmarks' / f'{n}.py'} and"
                f" studies/{n}.py); choose from {', '.join(BENCHMARKS)}"
            )
        scripts[n] = script
    rc = 0
    t_all = time.perf_counter()
    for n, script in scripts.items():
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        if args.json_dir:
            cmd += ["--json", str(Path(args.json_dir) / f"{n}.json")]
        print(f"== {n}", flush=True)
        t = time.perf_counter()
        code = subprocess.call(cmd)
        # A benchmark that failed in any way (an error, a signal: negative codes) is a
        # runtime failure of `memlab bench` (docs/cli.md), whatever code it exited with.
        rc = rc or (0 if code == 0 else 1)
        print(f"== {n}: {time.perf_counter() - t:.0f} s", flush=True)
    if len(names) > 1:
        print(f"== all: {time.perf_counter() - t_all:.0f} s", flush=True)
    return rc


def add_parser(sub: Any) -> None:
    """Add the ``bench`` subcommand to ``memlab``'s subparsers."""
    p = sub.add_parser(
        "bench",
        help="run the benchmark scripts (benchmarks/*.py)",
        description="Run the speed, load and guard benchmarks of memlab's repository"
        " (benchmarks/*.py, docs/benchmarks.md), each in its own process. They run from a"
        f" checkout of the repository: ${CHECKOUT_ENV}, else the folder above the memlab"
        " package, else the current directory; without one, the list of benchmarks and how"
        " to run them (exit 2).",
    )
    p.add_argument("name", nargs="?", help=", ".join(BENCHMARKS) + " (default: all)")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"small sizes: all {len(BENCHMARKS)} take ~{QUICK_SECONDS_FIRST} s the first time"
        " on 2 cores, "
        f"~{QUICK_SECONDS_CACHED} s once their corpora and indexes are cached",
    )
    p.add_argument("--json-dir", help="write each benchmark's JSON here")
    p.set_defaults(func=cmd_bench)
