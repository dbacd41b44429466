"""How ``memlab eval`` and ``memlab sweep`` report: the table's format (``--format``), which
labels a folder's table uses (``--qrels``), the notes a table needs (judged@k, metrics at
their ceiling, the implicit labels' bias), the questions with a same-day log left out, the
"as deployed" row of a harvested folder, and the CI guard (``--fail-below``, ``--against``,
``--fail-on-regression``: exit 3).

Module-level imports are the standard library and light memlab modules only, so
``memlab --help`` stays fast; the lab loads when a command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memlab.config.vocab import (
    DEFAULT_REGRESSION_MARGIN,
    DEPLOYED,
    QRELS_SOURCES,
    TABLE_FORMATS,
)
from memlab.errors import EXIT_OK, EXIT_REGRESSION, CliError

__all__ = [
    "add_eval_report_arguments",
    "add_format_argument",
    "add_qrels_argument",
    "guard_exit",
    "print_eval_table",
    "print_group_spread",
    "with_deployed",
]


def add_qrels_argument(p: argparse.ArgumentParser) -> None:
    """``--qrels human|implicit|both`` (a folder dataset's labels)."""
    p.add_argument(
        "--qrels",
        choices=QRELS_SOURCES,
        default="both",
        help="folder datasets: the labels to score with: human (judgments.jsonl from memlab"
        " judge, and evidence written by hand), implicit (harvest's, from the agent's reads"
        " and citations) or both (default; a human label replaces an implicit one of the"
        " same span)",
    )


def add_format_argument(p: argparse.ArgumentParser) -> None:
    """``--format text|markdown|latex|csv``."""
    p.add_argument(
        "--format",
        choices=TABLE_FORMATS,
        default="text",
        help="how the table is printed: text (default), markdown, latex (booktabs;"
        " superscript letters mark the systems a mean beats significantly) or csv; the"
        " notes go to stderr",
    )


def add_eval_report_arguments(p: argparse.ArgumentParser) -> None:
    """``memlab eval``'s reporting and guard options."""
    add_format_argument(p)
    g = p.add_argument_group("CI guard (exit 3 when it fails)")
    g.add_argument(
        "--fail-below",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 3 when a system's mean METRIC (as --metrics names it) is below VALUE,"
        " naming each (repeatable)",
    )
    g.add_argument(
        "--against",
        metavar="RUN_DIR",
        help="compare with a run memlab eval --save wrote (same dataset fingerprint, else"
        " exit 2): per system and metric the change, paired test, Holm-corrected",
    )
    g.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --against: exit 3 when a system's metric dropped by more than --margin"
        " and significantly (p_adj <= alpha)",
    )
    g.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_REGRESSION_MARGIN,
        help="with --fail-on-regression: the smallest drop that fails (default"
        f" {DEFAULT_REGRESSION_MARGIN})",
    )


def with_deployed(dataset: Any, runs: dict[str, Path]) -> dict[str, Path]:
    """``runs`` with the "as deployed" row of a harvested folder: ``deployed`` =
    ``ROOT/shown.trec`` (the hits the agent saw) when the dataset is harvest's, the file
    holds a hit and no run of that name is given."""
    trec = Path(dataset.root) / "shown.trec"
    if "harvest" not in (dataset.info or {}) or DEPLOYED in runs:
        return runs
    if not trec.is_file() or trec.stat().st_size == 0:
        return runs
    return {**runs, DEPLOYED: trec}


def _notes(res: Any, lab: Any, args: argparse.Namespace) -> list[str]:
    from memlab.datasets.judgments import IMPLICIT_JUDGE
    from memlab.eval.caveats import ceiling_warnings, judged_warnings, visible_units

    scored = set(res.per_query["qid"])
    q = lab.dataset.queries
    units = None
    pipes = [s for s in res.systems if hasattr(s, "retrieval_spec")]
    if pipes and getattr(lab, "executor", None) is None:  # a Ray lab's indexes are remote
        # the lab the first system ran on: its indexes are built already
        units = visible_units(lab.lab_for(pipes[0]))[q["qid"].isin(scored).to_numpy()]
    notes = [*judged_warnings(res), *ceiling_warnings(res, units)]
    names = [s.name for s in res.systems]
    implicit = IMPLICIT_JUDGE in set(lab.dataset.evidence.get("judge", []))
    if DEPLOYED in names and implicit and getattr(args, "qrels", "both") != "human":
        notes.append(
            f"{DEPLOYED} is scored with implicit labels, which come from what it showed"
            " the agent: it scores high by construction; compare the others with it for"
            " what they find besides (docs/folder-format.md)"
        )
    return notes


def print_eval_table(
    res: Any,
    lab: Any,
    args: argparse.Namespace,
    rerun: Callable[..., Any],
) -> None:
    """The table of ``memlab eval`` in ``--format``, its notes (text: below it; other
    formats: on stderr, so stdout is the table alone), and the same table without the
    questions whose own day's log was visible (``same_day_log``, harvest's flag) when
    some scored question has one (``rerun(queries=qids)`` runs the experiment on those)."""
    from memlab.eval.tables import experiment_table

    fmt = getattr(args, "format", "text")
    text = fmt == "text"
    show = (
        (lambda r: r.format(settings=not args.no_settings))
        if text
        else (lambda r: experiment_table(r, fmt))
    )
    print(show(res))
    for note in _notes(res, lab, args):
        print(f"warning: {note}", file=sys.stdout if text else sys.stderr)
    q = lab.dataset.queries
    if "same_day_log" not in q.columns:
        return
    flagged = q["same_day_log"].fillna(False).astype(bool)
    scored = set(res.per_query["qid"])
    hidden = [x for x in q.loc[flagged, "qid"] if x in scored]
    if not hidden or len(hidden) == len(scored):
        return
    rest = rerun(queries=[x for x in q.loc[~flagged, "qid"] if x in scored])
    head = (
        f"without the {len(hidden)} questions whose own day's log was visible"
        " (same_day_log: it may hold the answer, written after the question)"
    )
    print("")
    print({"markdown": f"**{head}**", "latex": f"% {head}", "csv": f"# {head}"}.get(fmt, head))
    print(show(rest))


def print_group_spread(lab: Any, res: Any, metric: str) -> None:
    """Each group's figure and the leader's lead in it (``memlab.eval.groups``), when the
    dataset has two groups or more."""
    from memlab.eval.groups import experiment_groups

    q = lab.dataset.queries
    spread = experiment_groups(res, dict(zip(q["qid"], q["group"], strict=True)), metric)
    if spread is not None:
        print(f"\n{spread[1]}")


def guard_exit(res: Any, args: argparse.Namespace) -> int:
    """Run the guard ``args`` asks for on ``res`` and return the exit code: 3
    (``EXIT_REGRESSION``) when a mean is below its ``--fail-below`` floor or, with
    ``--fail-on-regression``, a metric dropped against ``--against`` (each named on
    stderr); else 0. Bad options, a saved run that cannot be read or is on another dataset:
    ``CliError`` (exit 2). The comparison with ``--against`` is printed (stderr)."""
    from memlab.eval.guard import (
        GuardError,
        below_floor,
        compare_to_saved,
        load_saved_run,
        parse_floors,
        regressions,
    )

    failed: list[str] = []
    against = getattr(args, "against", None)
    if getattr(args, "fail_on_regression", False) and not against:
        raise CliError("--fail-on-regression needs --against RUN_DIR (a memlab eval --save run)")
    try:
        floors = parse_floors(getattr(args, "fail_below", []) or [], res.metrics)
        failed += [f"below the floor: {m}" for m in below_floor(res, floors)]
        if against:
            cmp = compare_to_saved(res, load_saved_run(against), args.margin)
            alpha = float(res.info.get("alpha", 0.01))
            print(f"against {against}:", file=sys.stderr)
            print(cmp.round(4).to_string(index=False), file=sys.stderr)
            if args.fail_on_regression:
                failed += [f"regression: {m}" for m in regressions(cmp, args.margin, alpha)]
    except GuardError as exc:
        raise CliError(str(exc)) from exc
    for msg in failed:
        print(f"memlab: guard: {msg}", file=sys.stderr)
    return EXIT_REGRESSION if failed else EXIT_OK
