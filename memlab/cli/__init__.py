"""The ``memlab`` command line: index, search and inspect a workspace; run the lab.

Subcommands: files, chunk, index, status, watch, search, get, doctor, mcp, export,
synth, eval, sweep, stats, bench, demo, harvest, judge. ``memlab SUBCOMMAND --help`` describes each.

The package: :mod:`memlab.cli.common` (argument helpers, ``--set`` parsing, the
table and JSON printers, opening an index), :mod:`memlab.cli.engine` (files,
chunk, index, status, watch, get, synth, demo), :mod:`memlab.cli.search`
(search), :mod:`memlab.cli.doctor` (doctor), :mod:`memlab.cli.server` (mcp),
:mod:`memlab.cli.export` (export), :mod:`memlab.cli.flush` (flush), :mod:`memlab.cli.harvest` (harvest),
:mod:`memlab.cli.judge` (judge), :mod:`memlab.cli.report` (the tables' formats, notes and
the CI guard of eval and sweep),
:mod:`memlab.cli.lab` (eval), :mod:`memlab.cli.sweep` (sweep), :mod:`memlab.cli.stats`
(stats), :mod:`memlab.cli.bench` (bench); this module builds the
parser and runs a command (``memlab = "memlab.cli:main"``; ``python -m
memlab.cli`` runs :mod:`memlab.cli.__main__`). Module-level imports are the
standard library and these light modules only, so ``memlab --help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from memlab import __version__
from memlab.cli.bench import add_parser as add_bench_parser
from memlab.cli.common import DeferredParser, add_index_options, parse_set, parse_value
from memlab.cli.doctor import add_parser as add_doctor_parser
from memlab.cli.engine import (
    add_demo_arguments,
    cmd_chunk,
    cmd_demo,
    cmd_files,
    cmd_get,
    cmd_index,
    cmd_status,
    cmd_synth,
    cmd_watch,
)
from memlab.cli.export import add_parser as add_export_parser
from memlab.cli.flush import add_parser as add_flush_parser
from memlab.cli.harvest import add_parser as add_harvest_parser
from memlab.cli.judge import add_parser as add_judge_parser
from memlab.cli.lab import add_parsers as add_lab_parsers
from memlab.cli.search import add_parser as add_search_parser
from memlab.cli.search import cmd_search, parse_now
from memlab.cli.server import add_parser as add_mcp_parser
from memlab.cli.stats import add_parser as add_stats_parser
from memlab.cli.sweep import add_parser as add_sweep_parser
from memlab.config.vocab import (
    CHUNKERS,
    DATASETS,
    DEFAULT_MEMORY_FILES,
    MEMORY_FILE_RULES,
    OPENCLAW_CURRENT_GET_CORPORA,
    SYNTH_PHENOMENA,
    SYNTH_RELEASE_PHENOMENA,
    VECTOR_BACKENDS,
)
from memlab.config.vocab import CLI_EMBEDDERS as EMBEDDERS
from memlab.errors import EXIT_CODES, EXIT_INTERRUPTED, EXIT_RUNTIME, EXIT_USAGE, CliError

__all__ = [
    "CHUNKERS",
    "EMBEDDERS",
    "VECTOR_BACKENDS",
    "build_parser",
    "cmd_chunk",
    "cmd_demo",
    "cmd_files",
    "cmd_get",
    "cmd_index",
    "cmd_search",
    "cmd_status",
    "cmd_synth",
    "cmd_watch",
    "main",
    "parse_now",
    "parse_set",
    "parse_value",
]


def build_parser() -> argparse.ArgumentParser:
    """The ``memlab`` argument parser: the engine subcommands (defined here, so each
    ``cmd_*`` is looked up in this module when the parser is built) and those of the other
    ``memlab.cli`` modules (each module's ``add_parser`` / ``add_parsers``)."""
    parser = argparse.ArgumentParser(
        prog="memlab",
        description="Agent-memory retrieval lab: OpenClaw's memory_search reproduced, measured and improved.",
    )
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=DeferredParser)

    p = sub.add_parser("files", help="list a workspace's memory files")
    p.add_argument("workspace")
    p.add_argument("--extra", action="append", default=[], metavar="PATH", help="extra memory path")
    p.add_argument("--memory-files", choices=MEMORY_FILE_RULES, default=DEFAULT_MEMORY_FILES)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_files)

    p = sub.add_parser("chunk", help="print a Markdown file's chunks (line ranges, sizes, hashes)")
    p.add_argument("file")
    p.add_argument("--chunker", choices=CHUNKERS, default="openclaw")
    p.add_argument("--tokens", type=int, default=400)
    p.add_argument("--overlap", type=int, default=80)
    p.add_argument("--show", action="store_true", help="print each chunk's text too")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--memory-files",
        choices=MEMORY_FILE_RULES,
        default=None,
        help="chunk FILE, or every memory file of a workspace folder, as an index of this rule"
        " stores it (openclaw-2026.9: per-entry MEMORY.md, annotations shown)",
    )
    p.add_argument("--extra", action="append", default=[], metavar="PATH", help="extra memory path")
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("index", help="create or update a workspace's index (incremental)")
    p.add_argument("workspace")
    add_index_options(p)
    p.add_argument(
        "--force", action="store_true", help="full reindex (the embedding cache is kept)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("status", help="index path, fingerprint, counts, dirty or not")
    p.add_argument("workspace")
    add_index_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("watch", help="keep the index fresh as memory files change (Ctrl-C stops)")
    p.add_argument("workspace")
    add_index_options(p)
    p.add_argument(
        "--debounce-ms",
        type=int,
        default=None,
        help="quiet time before a sync (default 1500; a QMD config's update.debounceMs)",
    )
    p.add_argument("--settle-ms", type=int, default=1500)
    p.add_argument(
        "--max-seconds", type=float, default=None, help="stop after this long (for scripts)"
    )
    p.set_defaults(func=cmd_watch)

    add_search_parser(sub)

    p = sub.add_parser("get", help="read lines of a memory file (memory_get)")
    p.add_argument("workspace")
    p.add_argument("path")
    p.add_argument("--from", type=int, dest="from_", default=None, help="first line (1-based)")
    p.add_argument("--lines", type=int, default=None, help="number of lines")
    p.add_argument(
        "--preset",
        default=None,
        help="the system whose memory_get answers: openclaw (default, 2026-04: whole file)"
        " or openclaw-current (2026.9.6: 120 lines / 12,000 chars, from=N notice, USER.md)",
    )
    p.add_argument(
        "--corpus",
        choices=OPENCLAW_CURRENT_GET_CORPORA,
        default=None,
        help="with the 2026.9.6 release: memory_get's corpus argument",
    )
    p.add_argument("--extra", action="append", default=[], metavar="PATH")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_get)

    p = sub.add_parser(
        "synth", help="generate a synthetic memory workspace with questions and evidence"
    )
    p.add_argument("out")
    p.add_argument("--days", type=int, default=None, help="daily logs (default 60; --like: fitted)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--notes-per-day", type=int, dest="notes_per_day")
    p.add_argument("--queries-per-type", type=int, dest="queries_per_type")
    p.add_argument(
        "--mix",
        help=f"comma-separated phenomena ({','.join(SYNTH_PHENOMENA + SYNTH_RELEASE_PHENOMENA)})",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any SynthConfig field, the realism knobs included: paraphrase=0..1,"
        " style=notes|conversation, level=unit|file, confusability=0..1, mix_weights=w,w,..."
        " (with --like: kept as given, the rest fitted)",
    )
    p.add_argument(
        "--like",
        choices=DATASETS,
        metavar="KIND",
        help="fit the realism knobs to this dataset's statistics (memlab stats KIND) and print"
        " each fitted statistic beside its target: " + ", ".join(DATASETS),
    )
    p.add_argument(
        "--like-path", help="the --like dataset's file or folder (as memlab stats --path)"
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a corpus memlab synth generated there before (never a folder holding"
        " anything else)",
    )
    p.set_defaults(func=cmd_synth)

    # The demo's arguments are added on first use (parse or help): their defaults live in
    # memlab.demo, a lab module that `memlab search` must not load.
    p = sub.add_parser(
        "demo",
        help="memlab's main job: where OpenClaw's 0.7/0.3 stands and what tuning buys"
        " (synthetic corpus → index → weight sweep → held-out comparison, paired test, plots)",
        populate=add_demo_arguments,
    )
    p.set_defaults(func=cmd_demo)

    add_mcp_parser(sub)
    add_export_parser(sub)
    add_doctor_parser(sub)
    add_flush_parser(sub)
    add_harvest_parser(sub)
    add_judge_parser(sub)
    add_lab_parsers(sub)
    add_sweep_parser(sub)
    add_stats_parser(sub)
    add_bench_parser(sub)
    return parser


def show_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, *_: object
) -> None:
    """How a warning reads on the command line: ``memlab: warning: MESSAGE`` on stderr (not
    Python's ``file:line: UserWarning:``), as the errors read."""
    print(f"memlab: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memlab ARGV`` and return its exit code (docs/cli.md): 0 ok, 1 a runtime
    failure, 2 a usage error, 3 a failed CI guard (``memlab eval --fail-below``,
    ``--fail-on-regression``), 130 interrupted; no subcommand prints the help (2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = show_warning  # restored by catch_warnings
            rc = int(args.func(args) or 0)
        # A command passing on a child's code (memlab bench) keeps to the documented set.
        return rc if rc in EXIT_CODES else EXIT_RUNTIME
    # Exit codes (docs/cli.md): 0 ok; 1 a runtime failure (embedding provider, locked or
    # unusable index, an I/O error while working); 2 a usage error (bad argument, config,
    # path or input file; argparse exits 2 too); 130 interrupted.
    except CliError as exc:
        print(f"memlab: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except (
        FileNotFoundError,
        NotADirectoryError,
        IsADirectoryError,
        PermissionError,
        ValueError,
    ) as exc:
        print(f"memlab: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        from memlab.embed import EmbeddingError
        from memlab.store import IndexLockedError, IndexUnusableError

        if isinstance(exc, EmbeddingError | IndexLockedError | IndexUnusableError | OSError):
            print(f"memlab: error: {exc}", file=sys.stderr)
            return EXIT_RUNTIME
        raise
