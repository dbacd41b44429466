"""``memlab flush simulate DATASET``: OpenClaw's pre-compaction memory flush, replayed.

Reads a conversation data set (any loader: ``locomo``, ``beam``, ``longmemeval``,
``realmem``, ``folder``), replays it under the flush settings (an ``openclaw.json`` given by
``--config``, else the spec's defaults; flags override either) with a flush policy, and
writes the memory it implies — the notes, the transcripts (the sessions corpus) and both,
each a data set ``memlab eval folder --path DIR/<memory>`` scores — into the user cache, or
into ``--out DIR`` (a new or empty folder, or one this command wrote). The engine lives in
:mod:`memlab.flush` (imported inside the command, so ``memlab --help`` stays light).
"""

from __future__ import annotations

import argparse
from typing import Any

from memlab.config.vocab import DATASETS, FLUSH_LAYOUTS, FLUSH_POLICIES, FLUSH_RESETS
from memlab.errors import EXIT_OK, CliError


def add_parser(sub: Any) -> None:
    """Register ``flush`` (with its ``simulate`` command) on the ``memlab`` subparsers."""
    p = sub.add_parser(
        "flush", help="simulate OpenClaw's memory flush before compaction on a conversation"
    )
    fsub = p.add_subparsers(dest="flush_command", metavar="COMMAND", required=True)
    s = fsub.add_parser(
        "simulate",
        help="replay a data set's conversations, write the memory workspace the flushes imply",
    )
    s.add_argument("dataset", choices=[d for d in DATASETS if d != "synthetic"])
    s.add_argument("--path", help="the data set's file or folder (default: where its loader looks)")
    s.add_argument("--config", help="an openclaw.json: agents.defaults.compaction.memoryFlush …")
    s.add_argument("--policy", choices=FLUSH_POLICIES, default="extractive")
    s.add_argument("--layout", choices=FLUSH_LAYOUTS, default="daily")
    s.add_argument("--reset", choices=FLUSH_RESETS, help="when an agent session starts over")
    s.add_argument("--context-window", type=int, help="context window in tokens (200000)")
    s.add_argument("--soft-threshold", type=int, help="softThresholdTokens (4000)")
    s.add_argument("--reserve-floor", type=int, help="reserveTokensFloor (20000)")
    s.add_argument("--force-bytes", type=int, help="forceFlushTranscriptBytes (2 MiB; 0 off)")
    s.add_argument("--read-only", action="store_true", help="the workspace is read-only")
    s.add_argument("--budget", type=int, help="token budget per flush (extractive policy)")
    s.add_argument("--out", help="write here (new, empty, or written by this command)")
    s.add_argument("--json", action="store_true", help="the summary as JSON")
    s.set_defaults(func=cmd_flush_simulate)


def cmd_flush_simulate(args: argparse.Namespace) -> int:
    """Run ``memlab.flush.flush_study`` and print where the memory went and what it holds."""
    from memlab.cli.common import print_json
    from memlab.cli.labsetup import LabError, load_dataset
    from memlab.flush import FlushConfig, flush_study, load_flush_config

    try:
        cfg = load_flush_config(args.config) if args.config else FlushConfig()
        changes = {
            "context_window": args.context_window,
            "soft_threshold_tokens": args.soft_threshold,
            "reserve_tokens_floor": args.reserve_floor,
            "force_flush_transcript_bytes": args.force_bytes,
            "reset": args.reset,
        }
        cfg = cfg.with_(**{k: v for k, v in changes.items() if v is not None})
        if args.read_only:
            cfg = cfg.with_(read_only=True)
        ds = load_dataset(args.dataset, args.path)
        fw = flush_study(
            ds, cfg, args.policy, out_dir=args.out, layout=args.layout, budget_tokens=args.budget
        )
    except (LabError, ValueError, FileNotFoundError, FileExistsError) as exc:
        raise CliError(str(exc)) from exc
    summary = fw.run.summary()
    report = {
        "out": str(fw.root),
        "policy": fw.run.policy,
        "threshold_tokens": cfg.threshold,
        "compaction_limit_tokens": cfg.compaction_limit,
        "config_source": cfg.source,
        **summary,
        "datasets": {m: str(d.root) for m, d in fw.datasets.items()},
    }
    if args.json:
        print_json(report)
        return EXIT_OK
    print(f"memory written to {fw.root} (config: {cfg.source})")
    print(
        f"flush at {cfg.threshold:,} tokens (window {cfg.context_window:,} − reserve "
        f"{cfg.reserve_tokens_floor:,} − soft {cfg.soft_threshold_tokens:,}), compaction past "
        f"{cfg.compaction_limit:,}; reset {cfg.reset}{'; read-only' if cfg.read_only else ''}"
    )
    for k in ("conversations", "sessions", "turns", "transcript_tokens", "agent_sessions"):
        print(f"  {k}: {summary[k]:,}")
    for k in ("flushes", "flushes_by_bytes", "skipped_read_only", "compactions", "notes"):
        print(f"  {k}: {summary[k]:,}")
    print(f"  note tokens: {summary['note_tokens']:,}; turns covered: {summary['turns_covered']:,}")
    for m, d in fw.datasets.items():
        print(f"  {m} data set: memlab eval folder --path {d.root}")
    return EXIT_OK
