"""The lab's command line: ``memlab eval``, and what ``memlab sweep`` (:mod:`memlab.cli.sweep`)
shares with it: the dataset options (`add_dataset_arguments`), the lab (`build_lab`,
`close_lab`) and the error wrapper (`lab_command`). ``memlab bench`` is
:mod:`memlab.cli.bench`.

Module-level imports stay light (the lab is imported inside each command), so
``memlab --help`` does not load the evaluation package.

Size: ``memlab eval`` (`cmd_eval`, `eval_on` and the notes under its table: `defects_line`,
`units_line`, `shapes_line`, `evidence_ranks_table`) is one command that changes together.
The set-up ``memlab sweep`` reuses (`build_lab`, `close_lab`, `add_dataset_arguments`,
`lab_command`) would move out when a third lab command needs it.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

from memlab.cli import report
from memlab.cli.common import parse_set
from memlab.errors import CliError
from memlab.vocab import (
    DATASETS,
    DEFAULT_LOCAL_BACKEND,
    EVAL_LEVELS,
    FTS_TOKENIZERS,
    LAB_EMBEDDERS,
    LOCAL_BACKENDS,
    UNITS,
)

__all__ = [
    "DATASETS",
    "DEFAULT_PRESETS",
    "LabError",
    "add_dataset_arguments",
    "add_parsers",
    "build_lab",
    "close_lab",
    "cmd_eval",
    "external_runs",
    "lab_command",
    "load_dataset",
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


def _systems(names: list[str], sets: list[str]) -> list[Any]:
    from memlab.presets import preset

    overrides = parse_set(sets)
    out = []
    for n in names:
        try:
            out.append(preset(n, **overrides))
        except (TypeError, ValueError) as exc:
            raise LabError(str(exc)) from exc
    return out


def external_runs(items: list[str]) -> dict[str, Path]:
    """``--run NAME=FILE`` options as {name: file} (a bare ``FILE`` is named by its stem),
    in order; a missing file or a repeated name is a ``LabError``."""
    out: dict[str, Path] = {}
    for item in items:
        name, eq, file = item.partition("=")
        if not eq:
            name, file = Path(item).stem, item
        name, path = name.strip(), Path(file).expanduser()
        if not name:
            raise LabError(f"--run {item!r}: give it a name, --run NAME=FILE")
        if not path.is_file():
            raise LabError(f"--run {item!r}: {path} is not a file (a TREC run file)")
        if name in out:
            raise LabError(f"--run: the name {name!r} is given twice")
        out[name] = path
    return out


def cmd_eval(args: argparse.Namespace) -> int:
    """``memlab eval``: run presets on a dataset (``run_experiment``) and print the metric
    table with paired tests against the baseline (``openclaw`` when run); ``--run`` adds
    other systems' TREC runs as rows; ``--save`` writes the experiment (with its TREC
    files), ``--json`` prints it."""
    defaults = dataset_defaults(args.dataset)
    chosen = args.preset or list(defaults["presets"])
    presets = [p for item in chosen for p in item.split(",") if p]
    systems = _systems(presets, args.set)
    runs = external_runs(args.run)
    metrics = [m for m in (args.metrics or defaults["metrics"]).split(",") if m]
    if args.evidence_ranks and args.json:
        raise LabError(
            "--evidence-ranks prints a table, not JSON: leave out --json, or call "
            "memlab.eval.evidence.evidence_ranks from Python"
        )
    lab = build_lab(args)
    try:
        baseline = args.baseline or defaults["baseline"]
        if not args.baseline and baseline not in presets:  # a default that is not run
            baseline = "openclaw" if "openclaw" in presets else None
        runs = report.with_deployed(lab.dataset, runs)  # a harvested folder's "as deployed" row
        return eval_on(lab, args, baseline, systems, metrics, runs)
    finally:
        close_lab(lab)


def eval_on(
    lab: Any,
    args: argparse.Namespace,
    baseline: str | None,
    systems: list[Any],
    metrics: list[str],
    runs: dict[str, Path],
) -> int:
    """The body of ``memlab eval`` once its lab is built: run, print, save."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.trecrun import RunMappingError

    run = partial(run_experiment, systems, lab, metrics, baseline=baseline, test=args.test)
    run = partial(run, pinned=args.pinned, external_runs=runs)  # reran by report: same systems
    try:
        res = run(keep_runs=bool(args.save))
    except RunMappingError as exc:
        raise LabError(str(exc)) from exc
    if args.save:
        res.save(args.save)
    defects = defects_line(lab.dataset)
    if args.json:
        print(json.dumps(res.to_json(), indent=2, default=str))
        if defects:  # stdout is the JSON; the defects are said beside it
            print(defects, file=sys.stderr)
        return report.guard_exit(res, args)
    head = sys.stdout if args.format == "text" else sys.stderr  # other formats: the table
    for line in (f"{lab!r}", defects, units_line(lab, systems), shapes_line(lab, systems)):
        if line:
            print(line, file=head)
    report.print_eval_table(res, lab, args, run)  # --format, its notes, without same-day logs
    if args.format == "text":  # other formats: stdout is the table alone
        report.print_group_spread(lab, res, metrics[0])
    if args.by_category:
        for m in metrics:
            print(f"\n{m} by category:")
            print(res.by_category(m).round(3).to_string())
    if args.evidence_ranks:
        from memlab.eval.evidence import evidence_ranks
        from memlab.eval.experiment import metric_depth

        k = metric_depth(metrics)
        saved = {}
        for p in systems:
            q = p if args.pinned else p.at_k(k)  # as the table ran it
            saved[p.name] = ranks = evidence_ranks(lab.candidates_for_system(q), q)
            print(f"\n{evidence_ranks_table(ranks, q)}")
        if args.save:
            import pandas as pd

            out = Path(args.save) / "evidence_ranks.csv"
            pd.concat(saved, names=["system"]).reset_index(level=0).to_csv(out, index=False)
            print(f"\nevidence ranks of every span: {out}")
    return report.guard_exit(res, args)


def evidence_ranks_table(ranks: Any, p: Any) -> str:
    """``memlab eval --evidence-ranks``: the share of evidence spans (``ranks``, from
    ``memlab.eval.evidence.evidence_ranks`` of system ``p`` as the table ran it) by rank
    bin and category (``rank_shares``), as a titled text table (shares in %)."""
    from memlab.eval.evidence import rank_shares

    shares = rank_shares(ranks)
    body = shares.drop(columns="spans").mul(100).round(1)
    body.insert(0, "spans", shares["spans"].astype(int))
    return (
        f"where {p.name} ranks the evidence ({p.depth} candidates per leg, all ranked): "
        "% of evidence spans, pooled, by the rank of their first covering result\n"
        + body.to_string()
    )


def units_line(lab: Any, systems: list[Any]) -> str | None:
    """One line naming the systems whose file rule chunks by its own fixed chunker
    (``memlab.store.filerules.chunker_fingerprint``: release 2026.9.6's chunks of
    ``memlab.chunking.release.MAX_CHARS`` characters under
    ``memory_files="openclaw-2026.9"``) when the lab's unit is not OpenClaw's chunk,
    so their rows are not at the unit the table is at; None when there is none."""
    from memlab.chunking.release import MAX_CHARS, OVERLAP_CHARS
    from memlab.eval.lab import unit_chunker
    from memlab.store.filerules import chunker_fingerprint

    if lab.chunker == unit_chunker("chunk"):
        return None
    unit = lab.chunker.fingerprint()
    fixed = [p for p in systems if chunker_fingerprint(p.memory_files, lab.chunker) != unit]
    if not fixed:
        return None
    rules = sorted({p.memory_files for p in fixed})
    return (
        f"{', '.join(p.name for p in fixed)}: memory_files={', '.join(rules)} chunks with the "
        f"release's fixed chunker ({MAX_CHARS}/{OVERLAP_CHARS} characters), not {unit!r}: "
        f"{'its row is' if len(fixed) == 1 else 'their rows are'} at chunk level"
    )


def shapes_line(lab: Any, systems: list[Any]) -> str | None:
    """One line saying how the shape-aware stages read the dataset's files
    (``memlab.stages.shape.file_shapes``) for the first system that has one
    (``file_context > 0`` or ``neighbor_shape != "off"``), over its candidates, which the
    run already retrieved; None when no system has a shape-aware stage. A system that
    ranks chunks by their best line (``best_line``) is read through its line system, on
    the lines of the same files (``Lab.line_lab_for``)."""
    from memlab.stages.shape import file_shapes

    def reader(p: Any) -> tuple[Any, Any]:
        return (p.line_system(), lab.line_lab_for(p)) if p.best_line else (p, lab)

    read = [(p, *reader(p)) for p in systems]
    aware = [t for t in read if t[1].file_context > 0 or t[1].neighbor_shape != "off"]
    if not aware:
        return None
    p, q, on = aware[0]
    n = file_shapes(on.candidates_for([q])[q.name].cs)
    parts = []
    if q.file_context > 0:
        parts.append(f"file context in {n['conversations']} conversations")
    if q.neighbor_shape == "roles":
        parts.append(
            f"role rule in {n['user_assistant']} user–assistant files, prev/next window in "
            f"the other {n['files'] - n['user_assistant']}"
        )
    who = f"{p.name} (chunks ranked by their best line under {q.name})" if p is not q else p.name
    return f"{who} reads {n['files']} files: {'; '.join(parts)} (memlab.stages.shape)"


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


def add_parsers(sub: Any) -> None:
    """Add the ``eval`` subcommand to ``memlab``'s subparsers; a ``LabError`` it raises
    becomes a ``CliError`` (exit 2)."""
    p = sub.add_parser(
        "eval",
        help="compare presets on a dataset: recall/nDCG table with paired tests",
        epilog="The folder dataset (memlab's folder format: dataset.json, queries.jsonl,"
        " evidence.jsonl, the workspace) is described in docs/folder-format.md; memlab"
        " harvest writes one from an agent's own transcripts.",
    )
    add_dataset_arguments(p)
    p.add_argument(
        "--preset",
        action="append",
        help=f"system(s) to run (default {','.join(DEFAULT_PRESETS)}; realmem: recency, random,"
        " bm25, vector, wsum, memlab-best, memlab-best-chunk)",
    )
    p.add_argument(
        "--metrics",
        default=None,
        help=f"default {DEFAULT_METRICS} (realmem: its own, recall_any@5,10,20, recall_all@10,"
        " ndcg_jk@10)",
    )
    p.add_argument(
        "--baseline",
        default=None,
        help="system to test against (default openclaw when run; realmem: bm25)",
    )
    p.add_argument("--test", choices=("ttest", "randomization"), default="ttest")
    p.add_argument(
        "--pinned", action="store_true", help="keep each system's own maxResults (no raise to k)"
    )
    p.add_argument(
        "--by-category",
        action="store_true",
        help="per metric, its mean per question category (rows) and system (columns)",
    )
    p.add_argument(
        "--evidence-ranks",
        action="store_true",
        help="per system, the share of evidence spans at ranks 1-5, 6-10, 11-20, 21-50, "
        "51-200 and lower, dropped or never retrieved, by category (where the missed "
        "evidence sits; not with --json; --save also writes evidence_ranks.csv)",
    )
    p.add_argument(
        "--no-settings",
        action="store_true",
        help="leave out the kw/depth/fusion/weights/min columns (each system's keyword "
        "query mode, candidates per leg, fusion, effective weights, threshold)",
    )
    p.add_argument(
        "--save",
        help="folder for experiment.json, per_query.csv and the TREC files: runs.trec,"
        " qrels.trec, docs.tsv (unit id -> path and lines) and a README saying which"
        " figures trec_eval / ir_measures reproduce from them",
    )
    p.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="another system's TREC run (qid Q0 docno rank score tag) as a row of the table,"
        " with the same metrics and paired tests; docnos are unit ids of a saved docs.tsv,"
        " memlab chunk ids, or PATH:LINE / PATH:START-END of the question's workspace"
        " (repeatable)",
    )
    report.add_eval_report_arguments(p)
    p.set_defaults(func=lab_command(cmd_eval))


def lab_command(fn: Any) -> Any:
    """``fn`` (a lab command) with a ``LabError`` it raises turned into a ``CliError``, which
    ``memlab.cli.main`` prints as ``memlab: error: ...`` (exit 2)."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except LabError as exc:
            raise CliError(str(exc)) from exc

    return run
