"""``memlab eval``: presets (and a ``--config`` or ``--preset-file`` system) on a dataset,
the metric table with paired tests, and the notes under it (`defects_line`, `units_line`,
`shapes_line`, `evidence_ranks_table`); ``--save`` writes the experiment. The set-up it
shares with ``memlab sweep`` is :mod:`memlab.cli.labsetup`; ``memlab bench`` is
:mod:`memlab.cli.bench`.

Module-level imports stay light (the lab is imported inside each command), so
``memlab --help`` does not load the evaluation package.

Size: one command whose parts change together: the systems it runs (`_systems`,
`file_systems`), what it refuses before running (`check_save_folder`, `external_runs`),
the run (`cmd_eval`, `eval_on`) and the lines around its table.
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
from memlab.cli.labsetup import (
    DEFAULT_METRICS,
    DEFAULT_PRESETS,
    LabError,
    add_dataset_arguments,
    build_lab,
    close_lab,
    dataset_defaults,
    defects_line,
    lab_command,
)

__all__ = ["add_parsers", "cmd_eval", "eval_on", "external_runs"]


def _systems(names: list[str], sets: list[str]) -> list[Any]:
    from memlab.pipeline.presets import preset

    overrides = parse_set(sets)
    out = []
    for n in names:
        try:
            out.append(preset(n, **overrides))
        except (TypeError, ValueError) as exc:
            raise LabError(str(exc)) from exc
    return out


def file_systems(args: argparse.Namespace) -> list[Any]:
    """The systems ``--preset-file`` and ``--config`` (with ``--agent``) describe, with the
    ``--set`` items over them, in that order: the file's system (named as the file names
    it) and the config's (``config_system``, named ``config`` or ``config:AGENT``). Every
    problem of either file is a ``LabError`` naming it, raised before the lab is built."""
    from memlab.config.load import config_system, load_search_config

    out = []
    overrides = parse_set(args.set)
    if getattr(args, "agent", None) is not None and not getattr(args, "config", None):
        raise LabError(f"--agent {args.agent!r} needs --config (the openclaw.json listing it)")
    try:
        if args.preset_file:
            from memlab.config.preset_file import read_preset_file

            pf = read_preset_file(args.preset_file)
            args.preset_file_read = pf
            out.append(pf.pipeline.replace(**overrides) if overrides else pf.pipeline)
        if args.config:
            cfg, note = load_search_config(args.config, args.agent, check_provider=False)
            if note:
                print(f"memlab: note: {note}", file=sys.stderr)
            args.config_read = cfg
            name = "config" if args.agent is None else f"config:{args.agent}"
            out.append(config_system(cfg, {"name": name, **overrides}))
    except (FileNotFoundError, TypeError, ValueError) as exc:
        raise LabError(str(exc)) from None
    return out


def file_stem(args: argparse.Namespace, p: Any) -> str:
    """The stem of the file a ``--preset-file`` / ``--config`` system came from."""
    pf = getattr(args, "preset_file_read", None)
    path = pf.path if pf is not None and p.name == pf.pipeline.name else args.config
    return Path(str(path)).stem


def warn_index_mismatch(lab: Any, args: argparse.Namespace) -> None:
    """Say on stderr when a ``--preset-file`` or ``--config`` system is measured on another
    index than the one it names: another embedder (tuned weights do not carry over to
    another embedder) or another chunker (the lab's unit is ``--unit``'s)."""
    model = lab.embedder.model if lab.embedder is not None else "fts-only"
    chunker = lab.chunker.as_dict()
    pf = getattr(args, "preset_file_read", None)
    if pf is not None:
        tuned = (pf.embedder or {}).get("model")
        if tuned and tuned != model:
            print(
                f"memlab: warning: {pf.path} was tuned with {tuned}; this lab embeds with"
                f" {model}: the tuned weights may not carry over",
                file=sys.stderr,
            )
        if pf.chunker and pf.chunker != chunker:
            print(
                f"memlab: warning: {pf.path} names the chunker {pf.chunker}; this lab's units"
                f" are {chunker} (--unit)",
                file=sys.stderr,
            )
    cfg = getattr(args, "config_read", None)
    if cfg is not None:
        from memlab.config.load import index_settings

        idx = index_settings(cfg)
        if lab.chunker.kind == "openclaw" and (idx.chunk_tokens, idx.chunk_overlap) != (
            lab.chunker.tokens,
            lab.chunker.overlap,
        ):
            print(
                f"memlab: warning: {args.config} chunks {idx.chunk_tokens}/{idx.chunk_overlap}"
                f" tokens; this lab's chunks are {lab.chunker.tokens}/{lab.chunker.overlap}",
                file=sys.stderr,
            )


def check_save_folder(folder: str | None, overwrite: bool) -> None:
    """Refuse ``--save DIR`` before anything runs when ``DIR`` is a file, or a folder that
    holds anything, unless ``--overwrite`` and the folder holds an experiment
    (``experiment.json``): then the files of the earlier run
    (``memlab.eval.experiment.EXPERIMENT_FILES``) are removed first, and nothing else."""
    if not folder:
        if overwrite:
            raise LabError("--overwrite goes with --save DIR (the folder it may replace)")
        return
    from memlab.eval.experiment import EXPERIMENT_FILES

    p = Path(folder).expanduser()
    if p.exists() and not p.is_dir():
        raise LabError(f"--save {p}: a file is there; --save names a folder")
    if not p.is_dir() or not any(p.iterdir()):
        return
    held = (p / "experiment.json").is_file()
    if not overwrite:
        what = "an earlier experiment" if held else "files that are not an experiment"
        fix = "add --overwrite to replace it" if held else "choose a new folder"
        raise LabError(f"--save {p} holds {what}; {fix} (memlab never replaces it silently)")
    if not held:
        raise LabError(
            f"--save {p} --overwrite: the folder holds no experiment (experiment.json), so it"
            " is not replaced; choose a new folder"
        )
    for name in EXPERIMENT_FILES:
        (p / name).unlink(missing_ok=True)


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
    given = file_systems(args)  # --preset-file, --config: checked before anything runs
    chosen = args.preset or ([] if given else list(defaults["presets"]))
    presets = [p for item in chosen for p in item.split(",") if p]
    systems = _systems(presets, args.set)
    for g in given:  # a file's system named like a preset that runs: the file's stem added
        taken = {s.name for s in systems}
        systems.append(g.replace(name=f"{g.name}@{file_stem(args, g)}") if g.name in taken else g)
    runs = external_runs(args.run)
    check_save_folder(args.save, args.overwrite)
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
        warn_index_mismatch(lab, args)
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
        from memlab.eval.depth import metric_depth
        from memlab.eval.evidence import evidence_ranks

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
        "--overwrite",
        action="store_true",
        help="with --save: replace the experiment an earlier run saved there (never a folder"
        " holding anything else)",
    )
    p.add_argument(
        "--preset-file",
        default=None,
        metavar="FILE",
        help="a preset file (memlab export --target mcp) as one more system, named as the file"
        " names it; with it (or --config) and no --preset, only those systems run",
    )
    p.add_argument(
        "--config",
        default=None,
        help="an openclaw.json (2026-04, 2026.9.6 or a QMD backend config): the system it"
        " describes as one more system, named config (config:AGENT with --agent)",
    )
    p.add_argument("--agent", default=None, help="with --config: the agent whose settings apply")
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
