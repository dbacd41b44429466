"""The engine commands of ``memlab``: files, chunk, index, status, watch, get, synth, demo.

``memlab search`` lives in :mod:`memlab.cli.search`. Each ``cmd_*`` takes the parsed
arguments and returns an exit code (docs/cli.md); module-level imports stay light
(the engine is imported inside each command), so ``memlab --help`` is fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from memlab.cli.common import (
    announce_rebuild,
    chunk_row,
    format_table,
    load_config,
    open_index,
    parse_set,
    print_json,
)
from memlab.errors import EXIT_USAGE, CliError, nearest_name

__all__ = [
    "add_demo_arguments",
    "cmd_chunk",
    "cmd_demo",
    "cmd_files",
    "cmd_get",
    "cmd_index",
    "cmd_status",
    "cmd_synth",
    "cmd_watch",
]


def cmd_files(args: argparse.Namespace) -> int:
    """``memlab files``: the memory files discovery finds (path, bytes, lines, hash prefix),
    with the read error of each unreadable one; ``--json`` prints the rows."""
    from memlab.config.vocab import DEFAULT_MEMORY_FILES
    from memlab.files.workspace import read_memory_file, resolve_workspace
    from memlab.store.filerules import discover_files

    rule = getattr(args, "memory_files", DEFAULT_MEMORY_FILES)
    files = discover_files(rule, resolve_workspace(args.workspace), args.extra)
    rows = []
    for f in files:
        try:
            ft = read_memory_file(f.abspath, f.path)
            rows.append(
                {
                    "path": f.path,
                    "bytes": ft.size,
                    "lines": ft.text.count("\n") + 1,
                    "sha256": ft.hash[:12],
                    "error": "",
                }
            )
        except OSError as exc:
            rows.append({"path": f.path, "bytes": "", "lines": "", "sha256": "", "error": str(exc)})
    if args.json:
        print_json(rows)
    else:
        print(
            format_table(
                rows,
                ["path", "bytes", "lines", "sha256", "error"]
                if any(r["error"] for r in rows)
                else ["path", "bytes", "lines", "sha256"],
            )
        )
        print(f"\n{len(rows)} memory file(s)")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    """``memlab chunk``: one Markdown file's chunks (line range, chars, weight, hash;
    ``--show`` adds each text, ``--json`` the full rows). A directory, a missing or an
    unreadable file is a ``CliError`` (exit 2). With ``--memory-files RULE`` a workspace
    folder or a file is chunked as an index of that rule stores it
    (``memlab.cli.chunkrule.chunk_by_rule``)."""
    from memlab.chunking import ChunkerConfig, estimate_chars
    from memlab.files.workspace import MemoryFileError, read_memory_file

    if getattr(args, "memory_files", None):
        from memlab.cli.chunkrule import chunk_by_rule

        return chunk_by_rule(args)
    path = Path(args.file)
    if path.is_dir():
        raise CliError(
            f"{path} is a directory; memlab chunk reads one Markdown file, or a workspace"
            f" with --memory-files RULE (to list its memory files: memlab files {path})"
        )
    if not path.exists():
        raise CliError(f"file not found: {path}")
    try:
        text = read_memory_file(path).text
    except MemoryFileError as exc:  # unreadable, not a regular file, binary or not UTF-8
        raise CliError(f"cannot chunk {path}: {exc.reason}") from exc
    cfg = ChunkerConfig(args.chunker, args.tokens, args.overlap)
    chunks = cfg.chunk(text)
    rows = [
        {
            **chunk_row(i, c, estimate_chars(c.text), args.json),
            "heading": c.heading,
            **({"text": c.text} if args.json else {}),
        }
        for i, c in enumerate(chunks)
    ]
    if args.json:
        print_json(rows)
        return 0
    cols = ["chunk", "lines", "chars", "weight", "hash"] + (
        ["heading"] if args.chunker == "heading" else []
    )
    print(format_table(rows, cols))
    print(f"\n{len(chunks)} chunk(s) from {path} ({cfg.fingerprint()})")
    if args.show:
        for c in chunks:
            print(f"\n--- lines {c.start_line}-{c.end_line} ---\n{c.text}")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    """``memlab index``: create or update the index (incremental; ``--force`` = full
    reindex), then print the sync report (``--json``: the report as a dict plus
    ``truncated_total``); files that could not be read are named on stderr."""
    index = open_index(args)
    with index:
        if not args.force:
            announce_rebuild(index)
        report = index.sync(force=args.force, progress=None if not args.quiet else False)
        n_trunc = (
            index.connect().execute("SELECT coalesce(sum(truncated), 0) FROM chunks").fetchone()[0]
        )
    d = {**report.as_dict(), "truncated_total": int(n_trunc)}
    if args.json:
        print_json(d)
        return 0
    print(f"index: {index.db_path}")
    print(f"model: {index.model}   chunker: {index.fingerprint()['chunker']}")
    if report.full_reindex:
        print(f"full reindex ({report.reason})")
    print(
        f"files {report.files} (changed {report.files_changed}, removed {report.files_removed},"
        f" failed {len(report.files_failed)})   chunks {report.chunks} (+{report.chunks_added}"
        f" -{report.chunks_removed})"
    )
    print(
        f"embedded {report.embedded}   cache hits {report.cache_hits}   time {report.seconds:.2f} s"
    )
    if index.has_vectors:
        print(
            f"chunks longer than the model's input limit (embedded truncated): {n_trunc} of"
            f" {report.chunks}"
        )
        if getattr(report, "zero_vectors", 0):
            print(
                f"zero vectors from the provider (stored as zero; such chunks are found by"
                f" keyword only): {report.zero_vectors}"
            )
    for path, reason in report.files_failed:
        print(f"  skipped {path}: {reason}", file=sys.stderr)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """``memlab status``: index path, identity, counts, dirty files and whether the
    fingerprint is current; no index file for these options is a ``CliError`` naming
    the indexes the workspace does have."""
    index = open_index(args)
    with index:
        if not index.db_path.exists():
            others = sorted(
                p.stem for p in index.db_path.parent.glob("*.sqlite") if ".lines-" not in p.stem
            )
            raise CliError(
                f"no index at {index.db_path} (identity {index.identity});"
                f" run `memlab index {args.workspace}` with the same options"
                + (f" (this workspace has indexes for: {', '.join(others)})" if others else "")
            )
        st = index.status()
    from memlab.config.release import agent_store_path, normalize_agent_id

    # Where the release keeps this agent's index (spec §4): a path and an exists check only.
    agent = normalize_agent_id(getattr(args, "agent", None))
    store = agent_store_path(agent)
    st["openclaw_store"] = {"path": str(store), "agent": agent, "exists": store.exists()}
    if args.json:
        print_json(st)
        return 0
    for key in (
        "workspace",
        "index_path",
        "identity",
        "files",
        "chunks",
        "truncated_chunks",
        "cache_entries",
        "dirty",
    ):
        print(f"{key:18} {st[key]}")
    if st["fingerprint_current"]:
        print(f"{'fingerprint':18} current")
    else:
        print(f"{'fingerprint':18} STALE (memlab index will rebuild: {index.rebuild_reason()})")
    for k, v in (st["fingerprint"] or {}).items():
        print(f"  {k:16} {v}")
    for tok, path in st["line_views"].items():  # synced with this index (best_line systems)
        print(f"{'line_view':18} {path} ({tok}; one line per row, synced with this index)")
    store = st["openclaw_store"]
    shown = "exists" if store["exists"] else "absent"
    print(
        f"{'openclaw_store':18} {store['path']} ({shown}; OpenClaw 2026.9.6's own index for"
        f" agent {store['agent']}, never opened by memlab)"
    )
    if st["dirty_files"]:
        print("changed since last sync: " + ", ".join(st["dirty_files"][:10]))
    if st["skipped_files"]:
        print(f"skipped (not indexed; read again once changed): {len(st['skipped_files'])}")
        for item in st["skipped_files"]:
            print(f"  {item['path']}: {item['reason']}")
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """``memlab watch``: keep the index in step with the memory files until Ctrl-C
    (or ``--max-seconds``), with OpenClaw's debounce."""
    from memlab.config.load import watch_settings
    from memlab.files.watch import watch

    cfg = load_config(args)
    timing = watch_settings(cfg)  # a QMD config's update.debounceMs and update.interval
    debounce = args.debounce_ms if args.debounce_ms is not None else timing.get("debounce_ms", 1500)
    index = open_index(args, cfg)
    with index:
        watch(
            index,
            debounce_ms=int(debounce),
            settle_ms=args.settle_ms,
            max_seconds=args.max_seconds,
            interval_s=timing.get("interval_s"),
        )
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    """``memory_get`` from the shell. ``--json`` prints the tool's JSON unchanged
    (OpenClaw's ``path required``, ``{text: "", path}`` for a missing file); in both
    modes a refused path, a missing file or an unreadable one is also explained on
    stderr (the rule broken, "does not exist", the read error) with exit code 2."""
    from memlab.tools.variants import tool_variant

    ws = Path(args.workspace).expanduser()
    if not ws.is_dir():
        raise CliError(f"workspace not found: {ws} (memlab get WORKSPACE PATH)")
    variant = tool_variant(get_rules(args))  # the tools of the preset's memory-file rule
    corpus = getattr(args, "corpus", None)
    if corpus is not None and corpus not in variant.get_corpora:
        raise CliError(
            f"--corpus is not an argument of the {variant.rules} memory_get"
            " (OpenClaw 2026.9.6's memory_get takes it: add --preset openclaw-current)"
        )
    res = variant.get(
        args.workspace, args.path, args.from_, args.lines, extra_paths=args.extra, corpus=corpus
    )
    problem, note = variant.get_report(
        res, args.workspace, args.path, args.extra, args.from_, args.lines
    )
    if args.json:
        print_json(res)
    if problem:
        print(f"memlab: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        return 0
    if note:
        print(f"memlab: note: {note}", file=sys.stderr)
    sys.stdout.write(res["text"])
    if res["text"] and not res["text"].endswith("\n"):
        sys.stdout.write("\n")
    return 0


def get_rules(args: argparse.Namespace) -> str:
    """The memory-file rules of ``memlab get``'s ``--preset`` (default ``openclaw``:
    ``openclaw-2026.4``); an unknown preset is a ``CliError``."""
    name = getattr(args, "preset", None)
    if name is None:
        from memlab.config.vocab import DEFAULT_MEMORY_FILES

        return DEFAULT_MEMORY_FILES
    from memlab.pipeline.presets import preset

    try:
        return preset(name).memory_files
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc


def cmd_synth(args: argparse.Namespace) -> int:
    """``memlab synth``: generate a synthetic corpus (``SynthConfig`` from the flags,
    then ``--set`` fields) and print its query counts by category; with ``--like KIND``
    the realism knobs are first fitted to that dataset's statistics (``synthetic.fit``;
    the flags and ``--set`` fields given are kept as given) and each fitted statistic is
    printed beside its target. A bad setting, an unknown ``--like`` dataset, or a folder it
    may not write (a workspace, a folder holding anything else, a corpus generated before
    without ``--overwrite``: ``synthetic.writer.check_target``) is a ``CliError``."""
    from memlab.cli.stats import fit_like_args
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.datasets.synthetic.writer import SynthTargetError

    kwargs: dict[str, Any] = {"seed": args.seed}
    if args.days is not None:
        kwargs["days"] = args.days
    if args.notes_per_day is not None:
        kwargs["notes_per_day"] = args.notes_per_day
    if args.queries_per_type is not None:
        kwargs["queries_per_type"] = args.queries_per_type
    if args.mix:
        kwargs["mix"] = tuple(m.strip() for m in args.mix.split(",") if m.strip())
    kwargs.update(parse_set(args.set))
    fields = [f.name for f in dataclasses.fields(SynthConfig)]
    for key in kwargs:
        if key not in fields:
            close = nearest_name(key, fields)
            hint = f"did you mean {close}?" if close else f"valid: {', '.join(fields)}"
            raise CliError(f"bad synth settings: unknown setting {key!r} ({hint})")
    try:
        cfg = SynthConfig(**kwargs) if args.like is None else fit_like_args(args, kwargs)
    except (TypeError, ValueError) as exc:
        raise CliError(f"bad synth settings: {exc}") from exc
    try:
        ds = generate(cfg, args.out, overwrite=args.overwrite)
    except SynthTargetError as exc:  # the fix in this command's words
        raise CliError(
            exc.what + ("; --overwrite replaces it" if exc.overwritable else "")
        ) from exc
    counts = ds.queries["category"].value_counts().sort_index()
    print(f"wrote {ds.root}: workspace {ds.workspaces['default']}")
    print(f"{len(ds.queries)} queries, {len(ds.evidence)} evidence spans")
    for cat, n in counts.items():
        print(f"  {cat:12} {n}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``memlab demo``: the end-to-end demonstration (``memlab.demo.run_demo``)."""
    from memlab.demo import run_demo

    # progress=None: bars only when stderr is a terminal, none when piped.
    return run_demo(
        out=args.out,
        embedder=args.embedder,
        days=args.days,
        notes_per_day=args.notes_per_day,
        queries_per_type=args.questions_per_type,
        seed=args.seed,
        progress=None,
    )


def add_demo_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``memlab demo``, with ``memlab.demo``'s defaults (corpus size,
    questions per type); called on first use of the subparser (``DeferredParser``)."""
    # memlab.demo imports only the standard library at module level: this stays fast.
    from memlab.demo import DEFAULT_DAYS, DEFAULT_NOTES_PER_DAY, DEFAULT_QUERIES_PER_TYPE

    p.add_argument(
        "--out",
        default="demo-output",
        help="folder for the corpus, index, tables and plots (reused: a second run is cached)",
    )
    p.add_argument("--embedder", choices=("local", "hashing"), default="local")
    p.add_argument(
        "--days",
        type=int,
        default=None,
        help="daily logs (sessions) in the corpus (default: fitted to the shipped persona;"
        f" without it {DEFAULT_DAYS})",
    )
    p.add_argument(
        "--notes-per-day",
        type=int,
        default=None,
        help="background notes per day (default: fitted to the shipped persona; without it"
        f" {DEFAULT_NOTES_PER_DAY})",
    )
    p.add_argument(
        "--questions-per-type",
        type=int,
        default=DEFAULT_QUERIES_PER_TYPE,
        help="questions of the largest phenomenon (the others in the persona's proportions),"
        " capped by what the generator supports (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=7)
