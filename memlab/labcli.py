"""The lab's command line: ``memlab eval``, ``memlab sweep`` and ``memlab bench``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DATASETS = ("synthetic", "locomo", "longmemeval", "folder")
DEFAULT_PRESETS = ("vector", "bm25", "openclaw", "openclaw-latest", "rrf")


class LabError(Exception):
    pass


def load_dataset(kind: str, path: str | None, *, seed: int = 0, days: int = 60) -> Any:
    """A Dataset by kind: ``synthetic`` (a folder from ``memlab synth``, or generated into
    the cache when no path is given), ``locomo`` (the dev split JSON; default
    ../shared/datasets/locomo), ``longmemeval`` (its JSON), ``folder`` (memlab's format)."""
    from memlab.datasets.base import load_folder

    if kind == "folder":
        if not path:
            raise LabError("--path is required for a folder dataset")
        return load_folder(path)
    if kind == "synthetic":
        if path and (Path(path) / "queries.jsonl").exists():
            return load_folder(path)
        from memlab.datasets.synthetic import SynthConfig, generate

        out = Path(path) if path else _cache_dir() / f"synthetic-d{days}-s{seed}"
        if (out / "queries.jsonl").exists():
            return load_folder(out)
        return generate(SynthConfig(days=days, seed=seed), out)
    if kind == "locomo":
        from memlab.datasets.locomo import load_locomo, locomo_default_path

        src = path or locomo_default_path()
        if src is None:
            raise LabError(
                "LoCoMo not found: pass --path locomo-dev.json (or set MEMLAB_LOCOMO); "
                "memlab ships the loader, not the data (CC BY-NC)"
            )
        return load_locomo(src)
    if kind == "longmemeval":
        if not path:
            raise LabError("--path to a LongMemEval JSON file is required")
        from memlab.datasets.longmemeval import load_longmemeval

        return load_longmemeval(path)
    raise LabError(f"dataset must be one of {', '.join(DATASETS)}; got {kind!r}")


def _cache_dir() -> Path:
    from memlab.paths import cache_root

    return cache_root()


def _lab(args: argparse.Namespace) -> Any:
    from memlab.eval.lab import Lab

    ds = load_dataset(args.dataset, args.path, seed=args.seed, days=args.days)
    return Lab(ds, embedder=args.embedder, unit=args.unit, fts_tokenizer=args.fts_tokenizer)


def _systems(names: list[str], sets: list[str]) -> list[Any]:
    from memlab.cli import _parse_set
    from memlab.pipeline import preset

    overrides = _parse_set(sets)
    out = []
    for n in names:
        try:
            out.append(preset(n, **overrides))
        except (TypeError, ValueError) as exc:
            raise LabError(str(exc)) from exc
    return out


def cmd_eval(args: argparse.Namespace) -> int:
    from memlab.eval.experiment import run_experiment

    presets = [p for item in (args.preset or list(DEFAULT_PRESETS)) for p in item.split(",") if p]
    systems = _systems(presets, args.set)
    metrics = [m for m in args.metrics.split(",") if m]
    lab = _lab(args)
    baseline = args.baseline if args.baseline else ("openclaw" if "openclaw" in presets else None)
    res = run_experiment(
        systems,
        lab,
        metrics,
        baseline=baseline,
        test=args.test,
        pinned=args.pinned,
        keep_runs=bool(args.save),
    )
    if args.save:
        res.save(args.save)
    if args.json:
        print(json.dumps(res.to_json(), indent=2, default=str))
        return 0
    print(f"{lab!r}")
    print(res.format())
    if args.by_category:
        print(f"\n{metrics[0]} by category:")
        print(res.by_category(metrics[0]).round(3).to_string())
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from memlab.eval.sweep import parse_range, sweep
    from memlab.pipeline import preset

    grid: dict[str, list[Any]] = {}
    for item in args.param:
        if "=" not in item:
            raise LabError(f"--param expects name=START:STOP:STEP or name=a,b,c; got {item!r}")
        name, spec = item.split("=", 1)
        grid[name.strip().replace("-", "_")] = parse_range(spec)
    from memlab.cli import _parse_set

    base = preset(args.preset, **_parse_set(args.set))
    lab = _lab(args)
    res = sweep(lab, base, grid, [args.metric], train=args.train, seed=args.seed)
    best = res.best()
    if args.json:
        print(
            json.dumps(
                {
                    "table": res.table.to_dict(orient="records"),
                    "best": best,
                    "seconds": res.seconds,
                },
                indent=2,
                default=str,
            )
        )
        return 0
    print(
        f"{lab!r}; base {base.name}; {res.info['settings']} settings × {res.info['queries']} queries"
        f" scored in {res.info['score_seconds']:.2f} s"
    )
    cols = [*res.params, "mean", "low", "high"] + (["test_mean"] if res.train else [])
    print(res.curve().loc[:, cols].round(4).to_string(index=False))
    label = "train" if res.train else "all"
    print(
        f"\nbest {args.metric}: {best['setting']} — {label} {best.get('train_mean', best.get('mean')):.4f}"
        f" [{best['low']:.4f}, {best['high']:.4f}]"
        + (
            f"; held-out {best['test_mean']:.4f} ({len(res.test or [])} queries)"
            if res.train
            else ""
        )
        + f"; tuned on {best['tuned_on']}"
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import subprocess

    root = Path(__file__).resolve().parents[1] / "benchmarks"
    names = (
        [args.name]
        if args.name
        else ["sweep_speed", "search_latency", "index_throughput", "quality"]
    )
    rc = 0
    for n in names:
        script = root / f"{n}.py"
        if not script.exists():
            raise LabError(f"no benchmark {n!r} (looked for {script})")
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        if args.json_dir:
            cmd += ["--json", str(Path(args.json_dir) / f"{n}.json")]
        print(f"== {n}", flush=True)
        rc = max(rc, subprocess.call(cmd))
    return rc


def _dataset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", choices=DATASETS)
    p.add_argument("--path", help="dataset file or folder")
    p.add_argument(
        "--unit",
        choices=("chunk", "turn"),
        default="chunk",
        help="OpenClaw chunks or one turn/line per unit",
    )
    p.add_argument("--embedder", choices=("local", "hashing", "none"), default="local")
    p.add_argument(
        "--fts-tokenizer", choices=("unicode61", "trigram", "porter"), default="unicode61"
    )
    p.add_argument("--seed", type=int, default=0, help="split seed (and synthetic seed)")
    p.add_argument("--days", type=int, default=60, help="synthetic corpus size in days (no --path)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a pipeline parameter for every system",
    )
    p.add_argument("--json", action="store_true")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "eval", help="compare presets on a dataset: recall/nDCG table with paired tests"
    )
    _dataset_args(p)
    p.add_argument(
        "--preset", action="append", help=f"system(s) to run (default {','.join(DEFAULT_PRESETS)})"
    )
    p.add_argument("--metrics", default="recall@6,ndcg@10,mrr")
    p.add_argument("--baseline", default=None, help="system to test against (default openclaw)")
    p.add_argument("--test", choices=("ttest", "randomization"), default="ttest")
    p.add_argument(
        "--pinned", action="store_true", help="keep each system's own maxResults (no raise to k)"
    )
    p.add_argument("--by-category", action="store_true")
    p.add_argument("--save", help="folder for experiment.json, per_query.csv, runs.trec")
    p.set_defaults(func=_wrap(cmd_eval))

    p = sub.add_parser(
        "sweep", help="sweep pipeline parameters; best setting tuned on a train split"
    )
    _dataset_args(p)
    p.add_argument(
        "--param",
        action="append",
        required=True,
        help="e.g. vector_weight=0:1:0.05 (repeatable: a grid)",
    )
    p.add_argument("--preset", default="openclaw")
    p.add_argument("--metric", default="recall@6")
    p.add_argument("--train", type=float, default=None, help="train fraction; the rest is held out")
    p.set_defaults(func=_wrap(cmd_sweep))

    p = sub.add_parser("bench", help="run the benchmark scripts (benchmarks/*.py)")
    p.add_argument("name", nargs="?", help="sweep_speed, search_latency, index_throughput, quality")
    p.add_argument("--quick", action="store_true", help="sized to finish in about a minute")
    p.add_argument("--json-dir", help="write each benchmark's JSON here")
    p.set_defaults(func=_wrap(cmd_bench))


def _wrap(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        from memlab.errors import CliError

        try:
            return fn(args)
        except LabError as exc:
            raise CliError(str(exc)) from exc

    return run
