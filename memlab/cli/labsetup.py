"""What the lab commands share (``memlab eval``, :mod:`memlab.cli.lab`; ``memlab sweep``,
:mod:`memlab.cli.sweep`; ``memlab flush``): the dataset options (`add_dataset_arguments`),
loading a dataset (`load_dataset`), the lab (`build_lab`, `close_lab`, `ray_runner`), the
defaults per dataset (`dataset_defaults`) and the error wrapper (`lab_command`, `LabError`).

Module-level imports stay light (the lab is imported inside each function), so
``memlab --help`` does not load the evaluation package.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memlab.cli import report
from memlab.config.vocab import (
    DATASETS,
    DEFAULT_LOCAL_BACKEND,
    EVAL_LEVELS,
    FTS_TOKENIZERS,
    LAB_EMBEDDERS,
    LOCAL_BACKENDS,
    UNITS,
)
from memlab.errors import CliError

__all__ = [
    "DEFAULT_METRICS",
    "DEFAULT_PRESETS",
    "LabError",
    "add_dataset_arguments",
    "build_lab",
    "close_lab",
    "dataset_defaults",
    "defects_line",
    "lab_command",
    "load_dataset",
    "ray_runner",
]

# The lab baselines (one shared candidate generation: OR keyword query) beside the two
# OpenClaw systems as shipped: wsum vs rrf is a fusion comparison, wsum vs openclaw
# the AND query plus minScore (docs/presets.md).
DEFAULT_PRESETS = ("vector", "bm25", "openclaw", "openclaw-latest", "wsum", "rrf")
DEFAULT_METRICS = "recall@6,ndcg@10,mrr"


class LabError(Exception):
    """A usage error of a lab command; reported as ``memlab: error: ...`` (exit 2)."""


def load_dataset(
    kind: str, path: str | None, *, seed: int = 0, days: int = 60, qrels: str = "both"
) -> Any:
    """A Dataset by kind: ``synthetic`` (a folder from ``memlab synth``, or generated into
    the user cache when no path is given, and regenerated there when the cached corpus
    records another config: ``generated_with``), ``locomo`` (the dev split JSON; default
    ../shared/datasets/locomo), ``beam`` (the BEAM folder; default ../shared/datasets/beam),
    ``longmemeval`` (its JSON), ``realmem`` (a folder of persona files; default
    ``$MEMLAB_REALMEM`` or ../shared/datasets/realmem), ``folder`` (memlab's format, with
    the labels ``qrels`` picks: ``memlab.datasets.judgments.select_qrels``).

    Nothing is written into ``path``: a ``synthetic`` path that holds no corpus
    (no ``queries.jsonl``: a real workspace, a mistyped path) is refused with a
    ``LabError`` naming it and the command that generates one (``memlab synth PATH``).
    """
    from memlab.datasets.base import load_folder

    if kind != "folder" and qrels != "both":
        raise LabError(f"--qrels {qrels} picks a folder dataset's labels; {kind} has its own")
    if kind == "folder":
        if not path:
            raise LabError("--path is required for a folder dataset")
        return load_folder(path, qrels=qrels)
    if kind == "synthetic":
        if path:
            folder = Path(path).expanduser()
            if (folder / "queries.jsonl").is_file():
                return load_folder(folder)
            what = (
                "does not exist"
                if not folder.exists()
                else "is not a folder"
                if not folder.is_dir()
                else "is not a memlab synth corpus (no queries.jsonl)"
            )
            # The hint never names the user's folder as a target: it may be a workspace.
            raise LabError(
                f"--path {folder} {what}; memlab writes nothing there. Leave out --path to"
                f" use a corpus generated in the user cache"
                f" ({_cache_dir() / f'synthetic-d{days}-s{seed}'}), or generate one into a"
                " new folder (memlab synth NEW_FOLDER) and pass --path NEW_FOLDER"
            )
        from memlab.datasets.synthetic import SynthConfig, generate, generated_with

        out = _cache_dir() / f"synthetic-d{days}-s{seed}"
        cfg = SynthConfig(days=days, seed=seed)
        # A corpus an older memlab cached (another default mix, say) is regenerated.
        if generated_with(out, cfg):
            return load_folder(out)
        return generate(cfg, out, overwrite=True)
    if kind in ("locomo", "beam", "longmemeval", "realmem"):
        from memlab.datasets.base import DataNotFoundError
        from memlab.datasets.beam import load_beam
        from memlab.datasets.locomo import load_locomo
        from memlab.datasets.longmemeval import load_longmemeval
        from memlab.datasets.realmem import load_realmem

        load = {
            "locomo": load_locomo,
            "beam": load_beam,
            "longmemeval": load_longmemeval,
            "realmem": load_realmem,
        }
        try:  # where each looks, and what it says when the data is not there: locate_data
            return load[kind](path or None)
        except DataNotFoundError as exc:
            raise LabError(str(exc)) from None
    raise LabError(f"dataset must be one of {', '.join(DATASETS)}; got {kind!r}")


def _cache_dir() -> Path:
    from memlab.paths import cache_root

    return cache_root()


def build_lab(args: argparse.Namespace) -> Any:
    """The lab of ``memlab eval`` / ``memlab sweep``: a `Lab` with ``cache_vectors=True``, as
    the library's own benchmarks and the widgets use, so each system runs on the index it is
    defined for (``memlab-best`` on porter, ``openclaw`` on unicode61) in one run;
    ``--fts-tokenizer`` is the tokenizer of the systems that do not declare their own."""
    from memlab.eval.lab import Lab

    embedder: Any = args.embedder
    backend = getattr(args, "local_backend", DEFAULT_LOCAL_BACKEND)
    model = getattr(args, "model", None)
    if model is not None and embedder != "local":
        raise LabError(
            f"--model names a local model folder: use it with --embedder local, not {embedder}"
        )
    if embedder == "local" and (backend != DEFAULT_LOCAL_BACKEND or model is not None):
        from memlab.embed import resolve_embedder

        try:
            embedder = resolve_embedder("local", model=model, backend=backend)
        except ValueError as exc:
            raise LabError(f"--model: {exc}") from exc
    qrels = getattr(args, "qrels", "both")
    ds = load_dataset(args.dataset, args.path, seed=args.seed, days=args.days, qrels=qrels)
    level = getattr(args, "level", None) or ds.info.get("level", "unit")
    runner = ray_runner(args)
    try:
        return Lab(
            ds,
            cache_vectors=True,
            embedder=embedder,
            unit=args.unit,
            fts_tokenizer=args.fts_tokenizer,
            level=level,
            executor=runner,
        )
    except BaseException:
        if runner is not None:
            runner.close()
        raise


def dataset_defaults(kind: str) -> dict[str, Any]:
    """What ``memlab eval <kind>`` runs when not told: presets, metrics and baseline (None
    = ``openclaw`` when run). RealMem: its own metrics at session level and its baselines
    (``memlab.datasets.realmem``)."""
    if kind == "realmem":
        from memlab.datasets.realmem import REALMEM_BASELINE, REALMEM_METRICS, REALMEM_PRESETS

        return {
            "presets": REALMEM_PRESETS,
            "metrics": ",".join(REALMEM_METRICS),
            "baseline": REALMEM_BASELINE,
        }
    return {"presets": DEFAULT_PRESETS, "metrics": DEFAULT_METRICS, "baseline": None}


def defects_line(ds: Any) -> str | None:
    """``defects (info["defects"]): name n, …`` for the non-zero defect counts a loader
    recorded, or None when it recorded none or all are 0."""
    found = {k: v for k, v in (ds.info.get("defects") or {}).items() if v}
    if not found:
        return None
    return f"{ds.name} defects (info['defects']): " + ", ".join(
        f"{k} {v}" for k, v in found.items()
    )


def ray_runner(args: argparse.Namespace) -> Any:
    """The `memlab.eval.raylab.RayRunner` of ``--ray ADDRESS`` (``--ray-workers N``), started,
    or None without ``--ray``; Ray missing or the cluster unreachable is a ``LabError``
    saying what to do. Ray is imported here only, so a command without ``--ray`` never
    loads it."""
    address = getattr(args, "ray", None)
    if not address:
        if getattr(args, "ray_workers", None) is not None:
            raise LabError("--ray-workers needs --ray ADDRESS (or --ray local)")
        return None
    from memlab.eval.raylab import RayRunner, RayUnavailable, embedder_factory

    backend = getattr(args, "local_backend", DEFAULT_LOCAL_BACKEND)
    factory = embedder_factory(args.embedder, model=getattr(args, "model", None), backend=backend)
    try:
        return RayRunner(address, workers=args.ray_workers, embedder_factory=factory).start()
    except (RayUnavailable, ValueError) as exc:
        raise LabError(str(exc)) from exc


def close_lab(lab: Any) -> None:
    """Close the lab's executor (a Ray runner: disconnect, and stop the cluster
    ``--ray local`` started), after a one-line summary of what ran on it on stderr."""
    runner = getattr(lab, "executor", None)
    if runner is None:
        return
    stats = runner.stats
    if stats:
        tasks = sum(s["candidates"]["tasks"] + s.get("texts", {}).get("tasks", 0) for s in stats)
        embedded = sum(s.get("embed", {}).get("docs", 0) for s in stats)
        queries = sum(s.get("embed", {}).get("queries", 0) for s in stats)
        seconds = sum(s["seconds"] for s in stats)
        print(
            f"ray ({runner.address}, {runner.cpus} worker{'' if runner.cpus == 1 else 's'}):"
            f" {len(stats)} retrieval{'' if len(stats) == 1 else 's'}, {tasks}"
            f" tasks, {embedded} chunks and {queries} questions embedded on Ray Data (the rest"
            f" from the vector cache), {seconds:.1f} s",
            file=sys.stderr,
        )
    runner.close()


def add_dataset_arguments(p: argparse.ArgumentParser) -> None:
    """The options of a lab command over a dataset (``memlab eval``, ``memlab sweep``): the
    dataset and where it is, the unit and level, the embedder, the split seed, ``--set``,
    ``--json`` and ``--ray``."""
    p.add_argument(
        "dataset",
        choices=DATASETS,
        help="folder: memlab's folder format (docs/folder-format.md; memlab synth and memlab"
        " harvest write it)",
    )
    p.add_argument("--path", help="dataset file or folder")
    p.add_argument(
        "--unit",
        choices=UNITS,
        default="chunk",
        help="OpenClaw chunks or one turn/line per unit",
    )
    p.add_argument(
        "--level",
        choices=EVAL_LEVELS,
        default=None,
        help="score the ranked units, or their files (a file's rank = its best unit's; a "
        "file = a session); default: the dataset's (realmem: file), else unit",
    )
    p.add_argument("--embedder", choices=LAB_EMBEDDERS, default="local")
    p.add_argument(
        "--model",
        help="another local sentence-transformers model folder for --embedder local (default:"
        " the packaged all-MiniLM-L6-v2; nothing is downloaded); its indexes are its own",
    )
    p.add_argument(
        "--local-backend",
        choices=LOCAL_BACKENDS,
        default=DEFAULT_LOCAL_BACKEND,
        help="how the local model runs: onnx (default: onnxruntime, no torch import), torch"
        " (sentence-transformers; same vectors and indexes) or onnx-int8 (int8-quantised,"
        " its own indexes)",
    )
    p.add_argument(
        "--fts-tokenizer",
        choices=FTS_TOKENIZERS,
        default="unicode61",
        help="FTS5 tokenizer of the systems that do not declare one (memlab-best runs on"
        " porter whatever this says; default unicode61, OpenClaw's)",
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
    report.add_qrels_argument(p)
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each workspace's indexing and candidate generation as a Ray task and the"
        " embedding on a Ray Data actor pool: 'local' starts a cluster on this machine for"
        " the run, else a head address (HOST:6379, auto, ray://HOST:10001); results equal a"
        " local run's. Needs pip install 'memlab[ray]' (docs/ray.md)",
    )
    p.add_argument(
        "--ray-workers",
        type=int,
        metavar="N",
        help="with --ray: tasks and embedding actors at once (default: the cluster's CPUs;"
        " with --ray local, the local cluster's CPUs)",
    )


def lab_command(fn: Any) -> Any:
    """``fn`` (a lab command) with a ``LabError`` it raises turned into a ``CliError``, which
    ``memlab.cli.main`` prints as ``memlab: error: ...`` (exit 2)."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except LabError as exc:
            raise CliError(str(exc)) from exc

    return run
