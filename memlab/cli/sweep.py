"""``memlab sweep``: sweep pipeline parameters over a dataset's cached candidates, tuned on a
train split and reported on the held-out rest (``memlab.eval.sweep``).

It shares the dataset options, the lab and its error handling with ``memlab eval``
(:mod:`memlab.cli.lab`). Module-level imports stay light (the lab is imported inside the
command), so ``memlab --help`` does not load the evaluation package.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from memlab.cli.common import parse_set
from memlab.cli.labsetup import (
    LabError,
    add_dataset_arguments,
    build_lab,
    close_lab,
    lab_command,
)
from memlab.cli.report import add_format_argument

__all__ = ["add_parser", "cmd_sweep", "lab_embedder", "sweep_on"]


def cmd_sweep(args: argparse.Namespace) -> int:
    """``memlab sweep``: the table (swept, coupled and effective weights, train mean and
    CI, held-out mean), then the chosen setting with its ties (how many, the plateau
    around it, the curve's spread, the rule that chose) and its held-out value;
    ``SweepWarning`` texts go to stderr. ``--json``: table, best() in full, warnings."""

    from memlab.eval.sweep import parse_range
    from memlab.pipeline.presets import preset

    grid: dict[str, list[Any]] = {}
    for item in args.param:
        if "=" not in item:
            raise LabError(f"--param expects name=START:STOP:STEP or name=a,b,c; got {item!r}")
        name, spec = item.split("=", 1)
        try:
            grid[name.strip().replace("-", "_")] = parse_range(spec)
        except ValueError as exc:
            raise LabError(f"--param {item!r}: {exc}") from exc
    if args.preset_file:  # the base from a preset file, checked before the lab is built
        from memlab.config.preset_file import read_preset_file

        try:
            pf = read_preset_file(args.preset_file)
        except (FileNotFoundError, ValueError) as exc:
            raise LabError(str(exc)) from None
        base = pf.pipeline.replace(**parse_set(args.set))
        args.base_preset = pf.base
    else:
        try:
            base = preset(args.preset, **parse_set(args.set))
        except (TypeError, ValueError) as exc:
            raise LabError(str(exc)) from None
        args.base_preset = args.preset
    lab = build_lab(args)
    try:
        return sweep_on(lab, args, base, grid)
    finally:
        close_lab(lab)


def sweep_on(lab: Any, args: argparse.Namespace, base: Any, grid: dict[str, list[Any]]) -> int:
    """The body of ``memlab sweep`` once its lab is built: sweep and print."""
    import warnings

    from memlab.config.preset_file import json_value
    from memlab.eval.sweep import SweepWarning, sweep

    with warnings.catch_warnings():
        # Printed below as plain lines (stderr), not as Python warning records.
        warnings.simplefilter("ignore", SweepWarning)
        try:
            res = sweep(
                lab,
                base,
                grid,
                [args.metric],
                train=args.train,
                seed=args.seed,
                couple=not args.no_couple,
            )
        except ValueError as exc:
            raise LabError(str(exc)) from exc
    best = res.best()
    if args.format != "text":  # the table alone on stdout, for a report or a paper
        from memlab.eval.tables import sweep_table

        print(sweep_table(res, args.format))
        for w in res.warnings:
            print(f"warning: {w}", file=sys.stderr)
        return 0
    if args.json:
        table = res.table.astype(object).where(res.table.notna(), None)
        print(
            json.dumps(
                {
                    "base": repr(base),
                    # what `memlab export --result` rebuilds the chosen setting from
                    "base_preset": getattr(args, "base_preset", None),
                    "base_settings": {k: json_value(v) for k, v in base.get_params().items()},
                    "embedder": lab_embedder(lab),
                    "chunker": lab.chunker.as_dict(),
                    "table": table.to_dict(orient="records"),
                    "best": best,
                    "coupled": res.coupled,
                    "warnings": res.warnings,
                    "seconds": res.seconds,
                },
                indent=2,
                default=str,
            )
        )
        for w in res.warnings:
            print(f"warning: {w}", file=sys.stderr)
        return 0
    print(
        f"{lab!r}; base {base!r}; {res.info['settings']} settings × {res.info['queries']} queries"
        f" scored in {res.info['score_seconds']:.2f} s"
    )
    if res.coupled:
        how = ", ".join(f"{k} = {v}" for k, v in res.coupled.items())
        print(f"coupled: {how} in every setting (sweep both weights for a 2-D grid)")
    eff = [c for c in ("vector_weight_eff", "text_weight_eff") if c in res.table.columns]
    cols = [*res.setting_params, *eff, "mean", "low", "high"] + (["test_mean"] if res.train else [])
    print(res.curve().loc[:, cols].round(4).to_string(index=False))
    label = "train" if res.train else "all"
    setting = ", ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in best["setting"].items()
    )
    print(
        f"\nbest {args.metric}: {setting} — {label} {best.get('train_mean', best.get('mean')):.4f}"
        f" [{best['low']:.4f}, {best['high']:.4f}]"
        + (
            f"; held-out {best['test_mean']:.4f} ({len(res.test or [])} queries)"
            if res.train
            else ""
        )
        + f"; tuned on {best['tuned_on']}"
    )
    if best["effective_weights"] is not None:
        ew = best["effective_weights"]
        print(f"  fused as vector {ew['vector_weight']:.3f} / text {ew['text_weight']:.3f}")
    n_tied = len(best["tied"])
    ties = (
        f"  ties: {n_tied} of {res.info['settings']} settings within"
        f" {res.info.get('tie_tolerance', 1e-12):g} of the best"
    )
    if n_tied == 1:
        ties = "  ties: none"
    pl = best["plateau"]
    if pl is not None and pl["n"] > 1:
        ties += f"; plateau {pl['param']} {pl['low']:g}–{pl['high']:g} ({pl['n']} settings)"
    print(ties + f"; spread over the grid {best['spread']:.4f}; chosen by: {best['rule']}")
    from memlab.eval.groups import sweep_groups

    q = lab.dataset.queries
    spread = sweep_groups(res, dict(zip(q["qid"], q["group"], strict=True)))
    if spread is not None:
        print(f"\n{spread[1]}")
    sys.stdout.flush()  # the table first, then the warnings, when both go to one terminal
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def lab_embedder(lab: Any) -> dict[str, Any] | None:
    """``{provider, model}`` of the lab's embedder (None: keyword only): the embedder a
    sweep tuned with, recorded in its JSON."""
    e = lab.embedder
    return None if e is None else {"provider": e.provider, "model": e.model}


def add_parser(sub: Any) -> None:
    """Add the ``sweep`` subcommand to ``memlab``'s subparsers; a ``LabError`` it raises
    becomes a ``CliError`` (exit 2)."""
    p = sub.add_parser(
        "sweep", help="sweep pipeline parameters; best setting tuned on a train split"
    )
    add_dataset_arguments(p)
    p.add_argument(
        "--param",
        action="append",
        required=True,
        help="e.g. vector_weight=0:1:0.05 (repeatable: a grid)",
    )
    p.add_argument("--preset", default="openclaw", help="the base system (default openclaw)")
    p.add_argument(
        "--preset-file",
        default=None,
        metavar="FILE",
        help="the base system from a preset file (memlab export --target mcp), instead of --preset",
    )
    p.add_argument("--metric", default="recall@6")
    p.add_argument("--train", type=float, default=None, help="train fraction; the rest is held out")
    p.add_argument(
        "--no-couple",
        action="store_true",
        help="sweeping one weight keeps the other fixed (default: text_weight = 1 - vector_weight)",
    )
    add_format_argument(p)
    p.set_defaults(func=lab_command(cmd_sweep))
