"""``memlab stats``: how a dataset's questions relate to their memory (``memlab.eval.stats``),
and ``memlab synth --like``'s fit of the realism knobs to those statistics (``fit_like_args``).

Module-level imports stay light (the lab is imported inside the command), so ``memlab
--help`` does not load the evaluation package.
"""

from __future__ import annotations

import argparse
from typing import Any

from memlab.cli.labsetup import lab_command
from memlab.config.vocab import DATASETS, LAB_EMBEDDERS
from memlab.errors import CliError

__all__ = ["add_parser", "cmd_stats", "fit_like_args"]


def add_parser(sub: Any) -> None:
    """Add the ``stats`` subcommand to ``memlab``'s subparsers."""
    p = sub.add_parser(
        "stats",
        help="a dataset's realism: term overlap of questions and evidence, the best other"
        " unit's overlap, embedding similarities, span length, mix, per category and group",
    )
    p.add_argument("dataset", choices=DATASETS)
    p.add_argument("--path", help="dataset file or folder (a harvested folder: kind folder)")
    p.add_argument(
        "--embedder",
        choices=LAB_EMBEDDERS,
        default="local",
        help="the vectors of the similarity columns: local (the packaged all-MiniLM-L6-v2,"
        " default; cached with the lab's vectors), hashing (fast), none (no similarities)",
    )
    p.add_argument("--seed", type=int, default=0, help="synthetic seed (no --path)")
    p.add_argument("--days", type=int, default=60, help="synthetic corpus size in days (no --path)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lab_command(cmd_stats))


def cmd_stats(args: argparse.Namespace) -> int:
    """``memlab stats``: ``corpus_stats`` of the dataset, as a table (``format_stats``) or
    JSON (``{"term_overlap": x, "by_category": {...}, "by_group": {...}, ...}``)."""
    from memlab.cli.common import print_json
    from memlab.cli.labsetup import load_dataset
    from memlab.eval.stats import corpus_stats, format_stats

    ds = load_dataset(args.dataset, args.path, seed=args.seed, days=args.days)
    stats = corpus_stats(ds, args.embedder)
    stats.pop("per_query")
    if args.json:
        print_json(stats)
    else:
        print(format_stats(stats))
    return 0


def fit_like_args(args: argparse.Namespace, fixed: dict[str, Any]) -> Any:
    """``memlab synth --like``: the config fitted to ``--like`` (``synthetic.fit.fit_like`` on the dataset's
    statistics without embeddings), its table printed; ``fixed``: the fields given (kept;
    ``--queries-per-type N``: the largest category asks N, the others in proportion)."""
    from memlab.cli.labsetup import LabError, load_dataset
    from memlab.datasets.synthetic.fit import fit_like
    from memlab.eval.stats import corpus_stats

    try:
        target = load_dataset(args.like, args.like_path, seed=args.seed)
    except LabError as exc:
        raise CliError(str(exc)) from exc
    stats = corpus_stats(target)
    stats.pop("per_query")
    seed = fixed.pop("seed")
    fit = fit_like(stats, seed=seed, fixed=fixed)
    print(
        f"fitted to {args.like} ({target.root}: {stats['queries']} questions,"
        f" {stats['groups']} groups)"
    )
    print(fit.format())
    return fit.config
