"""``memlab harvest``: an agent's own queries as a dataset (``memlab.datasets.harvest``).

Module-level imports stay light: the harvest code loads when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlab.cli.common import print_json
from memlab.errors import CliError

__all__ = ["add_parser", "cmd_harvest"]


def add_parser(sub: Any) -> None:
    """Register ``harvest`` on the ``memlab`` subparsers."""
    p = sub.add_parser(
        "harvest",
        help="an agent's own memory_search queries, what it was shown and what it used,"
        " read from its session transcripts (read-only) into a dataset folder",
        description="Read an OpenClaw agent's session transcripts (never written) and write"
        " OUT in memlab's folder format: queries.jsonl (one row per memory_search call),"
        " shown.trec (the hits the agent saw, a TREC run for memlab eval --run),"
        " evidence.jsonl (implicit relevance from memory_get reads and Source: citations),"
        " dataset.json; and print the query log's health. docs/folder-format.md describes"
        " every file.",
    )
    p.add_argument("workspace", help="the agent's workspace (MEMORY.md, memory/ ...)")
    p.add_argument(
        "--out",
        required=True,
        metavar="OUT",
        help="the dataset folder to write (new, empty, or an earlier harvest's); never inside"
        " the workspace or the transcripts",
    )
    p.add_argument(
        "--sessions",
        metavar="DIR",
        default=None,
        help="folder of JSONL transcripts (default: --agent's under OpenClaw's state folder,"
        " else WORKSPACE/sessions)",
    )
    p.add_argument(
        "--agent",
        metavar="ID",
        default=None,
        help="OpenClaw agent id: read <state>/agents/ID/sessions/*.jsonl and the release's"
        " agent database <state>/agents/ID/agent/openclaw-agent.sqlite (state:"
        " $OPENCLAW_STATE_DIR, else ~/.openclaw)",
    )
    p.add_argument(
        "--snapshot",
        action="store_true",
        help="copy the memory files into OUT/workspace (a frozen dataset) instead of naming"
        " the workspace by its path",
    )
    p.add_argument("--json", action="store_true", help="print the summary and report as JSON")
    p.set_defaults(func=cmd_harvest)


def cmd_harvest(args: argparse.Namespace) -> int:
    """``memlab harvest``: write the dataset, print the report (``--json``: as JSON).
    A refused OUT, no transcripts, or none with a query: exit 2, nothing written."""
    from memlab.datasets.harvest import HarvestError, harvest

    try:
        result = harvest(
            args.workspace,
            args.out,
            sessions=args.sessions,
            agent=args.agent,
            snapshot=args.snapshot,
        )
    except HarvestError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        print_json(result.to_json())
    else:
        print(result.text())
        print(f"\nwrote {result.out}", file=sys.stderr)
    return 0
