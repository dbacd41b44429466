"""``memlab judge OUT``: judge a dataset folder's questions by hand, most decisive first
(``memlab.eval.judge``); the answers go to ``OUT/judgments.jsonl`` as they are given.

Module-level imports stay light: the lab loads when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memlab.config.vocab import DEFAULT_JUDGE_PRESETS, JUDGE_GAINS, JUDGE_KEYS, LAB_EMBEDDERS, UNITS
from memlab.errors import CliError

__all__ = ["add_parser", "cmd_judge"]

DEFAULT_DEPTH = 10


def add_parser(sub: Any) -> None:
    """Register ``judge`` on the ``memlab`` subparsers."""
    keys = ", ".join(f"{k} {m}" for k, m in JUDGE_KEYS.items())
    p = sub.add_parser(
        "judge",
        help="judge a dataset folder's questions by hand, the answers that decide the"
        " presets' comparison first (writes OUT/judgments.jsonl)",
        description="Pool the top K results of each preset (each question as of its"
        " cut-off) and the hits the agent saw (OUT/shown.trec), one item per line span, and"
        " ask for a judgment of each, the spans whose label can change which preset is"
        " better first (minimal test collections); stop when every pair of presets is"
        f" decided. Keys: {keys}; at a terminal one key press, otherwise one answer per"
        " line. Every answer is appended to OUT/judgments.jsonl at once: q, Ctrl-C or a"
        " kill lose nothing and a second run resumes. memlab eval folder --path OUT --qrels"
        " human|both scores with them (docs/folder-format.md).",
    )
    p.add_argument("out", metavar="OUT", help="a dataset folder (memlab harvest writes one)")
    p.add_argument(
        "--preset",
        action="append",
        help="presets to compare (comma-separated, repeatable; default"
        f" {','.join(DEFAULT_JUDGE_PRESETS)})",
    )
    p.add_argument(
        "--pool-depth",
        type=int,
        default=DEFAULT_DEPTH,
        metavar="K",
        help=f"results of each preset pooled per question (default {DEFAULT_DEPTH})",
    )
    p.add_argument(
        "--gain",
        choices=JUDGE_GAINS,
        default="precision",
        help="the metric pairs are decided on: precision@K (default) or DCG@K",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="once every pair is decided, go on with the rest of the pool",
    )
    p.add_argument("--embedder", choices=LAB_EMBEDDERS, default="local")
    p.add_argument("--unit", choices=UNITS, default="chunk", help="the unit judged")
    p.set_defaults(func=cmd_judge)


def cmd_judge(args: argparse.Namespace) -> int:
    """``memlab judge``: build the pool, then ask (``memlab.eval.judge.terminal``): exit 0
    when the pool is done or on q, 130 on Ctrl-C; a folder that is no dataset, an unknown
    preset or a bad depth: exit 2."""
    from memlab.datasets.base import load_folder
    from memlab.eval.judge import judge_folder
    from memlab.eval.judge.terminal import run_loop
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    out = Path(args.out).expanduser()
    if args.pool_depth < 1:
        raise CliError(f"--pool-depth must be >= 1, got {args.pool_depth}")
    names = [
        n for item in (args.preset or [",".join(DEFAULT_JUDGE_PRESETS)]) for n in item.split(",")
    ]
    try:
        systems = [preset(n) for n in names if n]
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    ds = load_folder(out)
    lab = Lab(ds, cache_vectors=True, embedder=args.embedder, unit=args.unit)
    try:
        session = judge_folder(out, lab, systems, args.pool_depth, args.gain, args.all)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    pool, store = session.pool, session.store
    print(
        f"pool: {len(pool.items)} spans over {len(ds.queries)} questions, top {pool.depth} of"
        f" {', '.join(pool.systems)}; asked most decisive first ({args.gain}@{pool.depth});"
        f" answers go to {store.path}",
        file=sys.stderr,
    )
    return run_loop(session)
