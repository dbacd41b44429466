"""The ``memlab`` command line: index, search and inspect a workspace; run the lab.

Subcommands: files, chunk, index, status, watch, search, get, synth, eval,
sweep, bench, demo. ``memlab SUBCOMMAND --help`` describes each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlab import __version__
from memlab.errors import EXIT_CODES, EXIT_INTERRUPTED, EXIT_RUNTIME, EXIT_USAGE, CliError

EMBEDDERS = ("auto", "local", "hashing", "none")
CHUNKERS = ("openclaw", "openclaw-exact", "heading", "line")
# Equal to memlab.index.VECTOR_BACKENDS (tested); not imported so `--help` stays fast.
VECTOR_BACKENDS = ("numpy", "faiss", "fp16", "sq8", "ivf", "hnsw")


# ---------------------------------------------------------------------- helpers
def _add_index_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("index options")
    g.add_argument(
        "--db",
        help="index file (default: one per tokenizer and embedder in the user cache,"
        " ~/.cache/memlab/indexes/WORKSPACE-HASH/IDENTITY.sqlite; memlab status prints it)",
    )
    g.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default=None,
        help="embedding provider (default: from --config, else auto = packaged local model)",
    )
    g.add_argument(
        "--model", help="a local sentence-transformers model folder (with --embedder local)"
    )
    g.add_argument(
        "--chunker", choices=CHUNKERS, default=None, help="chunker (default openclaw, bounded)"
    )
    g.add_argument("--tokens", type=int, default=None, help="chunk size in tokens (default 400)")
    g.add_argument("--overlap", type=int, default=None, help="chunk overlap in tokens (default 80)")
    g.add_argument("--extra", action="append", default=[], metavar="PATH", help="extra memory path")
    g.add_argument("--fts-tokenizer", choices=("unicode61", "trigram", "porter"), default=None)
    g.add_argument(
        "--vector-backend",
        choices=VECTOR_BACKENDS,
        default="numpy",
        help="vector-leg engine: numpy/faiss exact, fp16/sq8 quantised, ivf/hnsw approximate"
        " (default numpy; an approximate index is rebuilt per call, so exact is fastest here)",
    )
    g.add_argument("--config", help="OpenClaw config file (openclaw.json, JSON5)")
    g.add_argument("--agent", help="agent id whose memorySearch override applies (with --config)")
    g.add_argument(
        "--lock-timeout",
        type=float,
        default=30.0,
        help="seconds to wait for another process writing the index (default 30)",
    )


def _load_config(args: argparse.Namespace) -> Any:
    """The OpenClaw settings of ``--config`` (with ``--agent``'s override), else the defaults.

    Usage errors (exit 2): ``--agent`` without ``--config``, an empty ``--config``
    or ``--agent``, and, when no ``--embedder`` overrides the config's provider,
    a provider memlab cannot build (``config.provider_problem``: e.g. ``openai``
    without ``memorySearch.remote.baseUrl``), each named with the file and key.
    """
    from memlab.config import MemorySearchConfig, load_openclaw_config, provider_problem

    config = getattr(args, "config", None)
    agent = getattr(args, "agent", None)
    if config is not None and not config.strip():
        raise CliError("--config is empty: give the path of an openclaw.json file")
    if agent is not None and config is None:
        raise CliError(
            f"--agent {agent!r} needs the config that lists the agents: add --config PATH"
            " (an openclaw.json with agents.list)"
        )
    if config is None:
        return MemorySearchConfig()
    cfg = load_openclaw_config(config, agent)
    problem = provider_problem(cfg) if getattr(args, "embedder", None) is None else None
    if problem:
        raise CliError(f"{Path(config).expanduser()}: {problem}")
    return cfg


def _open_index(args: argparse.Namespace, cfg: Any = None) -> Any:
    from memlab.chunking import ChunkerConfig
    from memlab.embed import resolve_embedder
    from memlab.index import MemoryIndex

    cfg = cfg if cfg is not None else _load_config(args)
    provider = args.embedder or cfg.provider
    model = args.model or cfg.model
    remote = None
    if cfg.remote_base_url:
        remote = {
            "base_url": cfg.remote_base_url,
            "api_key": cfg.remote_api_key,
            "headers": cfg.remote_headers,
        }
    embedder = resolve_embedder(provider, model=model, remote=remote)
    chunker = ChunkerConfig(
        args.chunker or "openclaw",
        args.tokens if args.tokens is not None else cfg.chunk_tokens,
        args.overlap if args.overlap is not None else cfg.chunk_overlap,
    )
    return MemoryIndex(
        args.workspace,
        db_path=args.db or cfg.store_path,
        embedder=embedder,
        chunker=chunker,
        extra_paths=[*cfg.extra_paths, *args.extra],
        sources=cfg.sources,
        fts_tokenizer=args.fts_tokenizer or cfg.fts_tokenizer,
        vector_backend=args.vector_backend,
        lock_timeout=args.lock_timeout,
    )


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default))


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    widths = {
        c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) if rows else len(c) for c in columns
    }
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines.append("  ".join("-" * widths[c] for c in columns))
    for r in rows:
        lines.append("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns))
    return "\n".join(lines)


def _parse_set(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise CliError(f"--set expects key=value, got {item!r}")
        key, raw = item.split("=", 1)
        out[key.strip().replace("-", "_")] = _parse_value(raw.strip())
    return out


def _parse_value(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        return raw


# ---------------------------------------------------------------------- commands
def cmd_files(args: argparse.Namespace) -> int:
    from memlab.workspace import discover_memory_files, read_memory_file

    files = discover_memory_files(args.workspace, args.extra)
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
        _print_json(rows)
    else:
        print(
            _table(
                rows,
                ["path", "bytes", "lines", "sha256", "error"]
                if any(r["error"] for r in rows)
                else ["path", "bytes", "lines", "sha256"],
            )
        )
        print(f"\n{len(rows)} memory file(s)")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from memlab.chunking import ChunkerConfig, estimate_chars
    from memlab.workspace import MemoryFileError, read_memory_file

    path = Path(args.file)
    if path.is_dir():
        raise CliError(
            f"{path} is a directory; memlab chunk reads one Markdown file"
            f" (to list a workspace's memory files: memlab files {path})"
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
            "chunk": i,
            "lines": f"{c.start_line}-{c.end_line}",
            "start_line": c.start_line,
            "end_line": c.end_line,
            "chars": len(c.text),
            "weight": estimate_chars(c.text),
            "hash": c.hash if args.json else c.hash[:12],
            "heading": c.heading,
            **({"text": c.text} if args.json else {}),
        }
        for i, c in enumerate(chunks)
    ]
    if args.json:
        _print_json(rows)
        return 0
    cols = ["chunk", "lines", "chars", "weight", "hash"] + (
        ["heading"] if args.chunker == "heading" else []
    )
    print(_table(rows, cols))
    print(f"\n{len(chunks)} chunk(s) from {path} ({cfg.fingerprint()})")
    if args.show:
        for c in chunks:
            print(f"\n--- lines {c.start_line}-{c.end_line} ---\n{c.text}")
    return 0


def _announce_rebuild(index: Any) -> None:
    """Say on stderr, before it happens, that an existing index file is about to be rebuilt
    and why (``MemoryIndex.rebuild_reason``: "embedder changed from X to Y"); a new index
    or one in step says nothing."""
    reason = index.rebuild_reason()
    if reason and reason != "new index":
        print(f"memlab: rebuilding {index.db_path}: {reason}", file=sys.stderr)


def cmd_index(args: argparse.Namespace) -> int:
    index = _open_index(args)
    with index:
        if not args.force:
            _announce_rebuild(index)
        report = index.sync(force=args.force, progress=None if not args.quiet else False)
        n_trunc = (
            index.connect().execute("SELECT coalesce(sum(truncated), 0) FROM chunks").fetchone()[0]
        )
    d = {**report.as_dict(), "truncated_total": int(n_trunc)}
    if args.json:
        _print_json(d)
        return 0
    print(f"index: {index.db_path}")
    print(f"model: {index.model}   chunker: {index.chunker.fingerprint()}")
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
    index = _open_index(args)
    with index:
        if not index.db_path.exists():
            others = sorted(p.stem for p in index.db_path.parent.glob("*.sqlite"))
            raise CliError(
                f"no index at {index.db_path} (identity {index.identity});"
                f" run `memlab index {args.workspace}` with the same options"
                + (f" (this workspace has indexes for: {', '.join(others)})" if others else "")
            )
        st = index.status()
    if args.json:
        _print_json(st)
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
    if st["dirty_files"]:
        print("changed since last sync: " + ", ".join(st["dirty_files"][:10]))
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from memlab.watch import watch

    index = _open_index(args)
    with index:
        watch(
            index,
            debounce_ms=args.debounce_ms,
            settle_ms=args.settle_ms,
            max_seconds=args.max_seconds,
        )
    return 0


def _build_pipeline(args: argparse.Namespace, cfg: Any = None) -> Any:
    from memlab.pipeline import preset

    overrides = _parse_set(args.set)
    for name in (
        "vector_weight",
        "text_weight",
        "max_results",
        "min_score",
        "candidate_multiplier",
    ):
        v = getattr(args, name, None)
        if v is not None:
            overrides[name] = v
    try:
        if args.preset is None and getattr(args, "config", None):
            # OpenClaw's own query settings (weights, maxResults, minScore, MMR, decay).
            from memlab.pipeline import from_config

            return from_config(cfg if cfg is not None else _load_config(args)).replace(**overrides)
        return preset(args.preset or "openclaw", **overrides)
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc


def parse_now(raw: str) -> float:
    """``--now``: Unix seconds (``1736467200``), an ISO date (``2025-01-10``, midnight UTC)
    or an ISO datetime (``2025-01-10T09:30``, ``...+02:00``; naive = UTC) → Unix seconds."""
    from datetime import UTC, datetime

    try:
        return float(raw)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise CliError(
            f"--now {raw!r} is not a date: give Unix seconds, YYYY-MM-DD or an ISO datetime"
            " (YYYY-MM-DDTHH:MM[:SS][+HH:MM])"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)  # dated memory files are midnight UTC too
    return dt.timestamp()


def _sync_for_search(index: Any, no_sync: bool) -> None:
    """Bring the index in step before a search, or say what is stale.

    A missing index, or one whose fingerprint no longer matches, is (re)built either way
    (announced on stderr when an existing file is rebuilt). Then by default files changed
    since the last sync are synced (an unchanged workspace costs one stat per file);
    with ``--no-sync``, or when the sync cannot run (another writer holds the lock, the
    index folder is read-only), the stale files are named on stderr instead.
    """
    from memlab.index import IndexLockedError

    _announce_rebuild(index)
    index.ensure_synced()
    problem = "--no-sync"
    if not no_sync:
        try:
            index.ensure_synced(files=True)
            return
        except (IndexLockedError, OSError) as exc:
            problem = f"could not sync ({exc})"
    stale = index.stale_files()
    if stale:
        shown = ", ".join(stale[:10]) + (f" and {len(stale) - 10} more" if len(stale) > 10 else "")
        print(
            f"memlab: warning: {problem}: {len(stale)} file(s) changed since the last sync"
            f" are searched as last indexed: {shown}",
            file=sys.stderr,
        )


def _cell(c: str, v: Any) -> str:
    """One explain cell: ``-`` for an absent value (NaN, rank −1), floats to 4 places."""
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if c in ("vector_rank", "text_rank", "mmr_position"):
        return "-" if int(v) < 0 else str(int(v))
    if c == "decay" and isinstance(v, float) and 0 < v < 1e-3:
        return f"{v:.3g}"  # a multiplier like 1.2e-07 must not print as 0.0000
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def cmd_search(args: argparse.Namespace) -> int:
    """Search a workspace: sync (or warn), one search path with OpenClaw's fallbacks
    (``memlab.tools.search_with_fallback``) for plain, ``--explain`` and ``--json`` output,
    and ``--explain`` / ``--dropped`` accounting for every candidate
    (``memlab.pipeline.explain``)."""
    from memlab.pipeline import explain
    from memlab.tools import memory_search, search_with_fallback

    cfg = _load_config(args)  # read once: the pipeline and the index both use it
    pipeline = _build_pipeline(args, cfg)
    wanted = getattr(pipeline, "fts_tokenizer", None)
    if wanted and args.fts_tokenizer is None:
        args.fts_tokenizer = wanted  # a preset tuned on its own tokenizer (memlab-best: porter)
    now = parse_now(args.now) if args.now is not None else None
    explaining = args.explain or args.dropped
    index = _open_index(args, cfg)
    with index:
        _sync_for_search(index, args.no_sync)
        if args.json and not explaining:
            res = memory_search(
                index, args.query, pipeline=pipeline, citations=args.citations, now=now
            )
            if res.get("warning"):
                print(f"memlab: note: {res['warning']}", file=sys.stderr)
            _print_json(res)
            return 0
        out = search_with_fallback(index, pipeline, args.query, now=now)
        ex = explain(out.pipeline, out.candidates, out.ranking) if explaining else None
    if out.warning:
        print(f"memlab: note: {out.warning}", file=sys.stderr)
    p, df = out.pipeline, out.frame
    if args.json:
        assert ex is not None
        rows = ex if args.dropped else ex[ex["fate"] == "returned"]
        _print_json(
            {
                "system": p.name,
                "mode": ex.attrs["mode"],
                "formula": ex.attrs["formula"],
                "fallback": out.warning is not None,
                **({"warning": out.warning} if out.warning else {}),
                # NaN (a leg that did not find the chunk) as null: valid JSON.
                "candidates": rows.drop(columns=["pos"])
                .astype(object)
                .where(rows.drop(columns=["pos"]).notna(), None)
                .to_dict(orient="records"),
            }
        )
        return 0
    from memlab.rerank import snippet

    if df.empty:
        hint = f"minScore {p.min_score:g}: try --min-score 0" if p.min_score > 0 else ""
        print(f"no results for {args.query!r} ({p.name}{'; ' + hint if hint else ''})")
    else:
        rows = []
        for r in df.itertuples(index=False):
            line = " ".join(snippet(r.text, 200).split())
            rows.append(
                {
                    "#": r.rank + 1,
                    "score": f"{r.score:.3f}",
                    "where": f"{r.path}#L{r.start_line}-L{r.end_line}",
                    "snippet": line[: args.width] + ("…" if len(line) > args.width else ""),
                }
            )
        print(_table(rows, ["#", "score", "where", "snippet"]))
    if ex is None:
        return 0
    _print_explain(ex, p, args.dropped)
    return 0


def _print_explain(ex: Any, p: Any, dropped: bool) -> None:
    """The ``--explain`` tables: every term of every returned score (they add up:
    score = (vector_term + text_term + other) × decay + neighbor), then the dropped
    candidates with their reason (``--dropped``) or how many there are."""
    print(f"\nexplain ({p.name}; mode {ex.attrs['mode']}): {ex.attrs['formula']}")
    cols = ["vector_score", "vector_rank", "vector_norm", "vector_term"]
    cols += ["text_raw", "text_rank", "text_norm", "text_term"]
    if (ex["other"].fillna(0).abs() > 1e-12).any():
        cols.append("other")
    cols += ["fused", "decay"]
    if getattr(p, "neighbor_prev", 0) or getattr(p, "neighbor_next", 0):
        cols.append("neighbor")
    cols += ["score", "mmr_position"]
    kept = ex[ex["fate"] == "returned"]
    erows = []
    for r in kept.to_dict(orient="records"):
        d = {"#": int(r["rank"]) + 1, **{c: _cell(c, r[c]) for c in cols}}
        d["selected_by"] = r["reason"]
        erows.append(d)
    if erows:
        print(_table(erows, ["#", *cols, "selected_by"]))
    diff = p.diff()
    print("settings: " + (", ".join(f"{k}={v}" for k, v in diff.items()) or "openclaw defaults"))
    gone = ex[ex["fate"] == "dropped"]
    if not dropped:
        if len(gone):
            print(f"{len(gone)} candidate(s) dropped (--dropped lists them with the reason)")
        return
    print(f"\ndropped ({len(gone)} of {len(ex)} candidates):")
    dcols = ["vector_term", "text_term", "fused", "decay"]
    if "neighbor" in cols:
        dcols.append("neighbor")
    dcols.append("score")
    drows = [
        {
            "where": f"{r['path']}#L{r['start_line']}-L{r['end_line']}",
            **{c: _cell(c, r[c]) for c in dcols},
            "reason": r["reason"],
        }
        for r in gone.to_dict(orient="records")
    ]
    if drows:
        print(_table(drows, ["where", *dcols, "reason"]))


def cmd_get(args: argparse.Namespace) -> int:
    """``memory_get`` from the shell. ``--json`` prints the tool's JSON unchanged
    (OpenClaw's ``path required``, ``{text: "", path}`` for a missing file); in both
    modes a refused path, a missing file or an unreadable one is also explained on
    stderr (the rule broken, "does not exist", the read error) with exit code 2."""
    from memlab.tools import memory_get, memory_path_refusal, resolve_memory_path

    ws = Path(args.workspace).expanduser()
    if not ws.is_dir():
        raise CliError(f"workspace not found: {ws} (memlab get WORKSPACE PATH)")
    res = memory_get(args.workspace, args.path, args.from_, args.lines, extra_paths=args.extra)
    problem: str | None = None
    if "error" in res:
        refusal = memory_path_refusal(args.workspace, args.path, args.extra)
        if res["error"] == "path required" and refusal:
            problem = f"{args.path or repr(args.path)}: refused: {refusal}"
        elif res["error"].startswith(("from ", "lines ")):  # name the flag, not the tool field
            got = args.from_ if res["error"].startswith("from") else args.lines
            problem = f"--{res['error']}, got {got}"
        else:
            problem = f"{res['path']}: {res['error']}"
    elif res["text"] == "":
        found = resolve_memory_path(args.workspace, args.path, args.extra)
        if found is not None and not os.path.lexists(found[0]):
            problem = (
                f"{res['path']}: the file does not exist in {ws} (memlab files {ws} lists them)"
            )
    if args.json:
        _print_json(res)
    if problem:
        print(f"memlab: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        return 0
    sys.stdout.write(res["text"])
    if res["text"] and not res["text"].endswith("\n"):
        sys.stdout.write("\n")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from memlab.datasets.synthetic import SynthConfig, generate

    kwargs: dict[str, Any] = {"days": args.days, "seed": args.seed}
    if args.notes_per_day is not None:
        kwargs["notes_per_day"] = args.notes_per_day
    if args.queries_per_type is not None:
        kwargs["queries_per_type"] = args.queries_per_type
    if args.mix:
        kwargs["mix"] = tuple(m.strip() for m in args.mix.split(",") if m.strip())
    kwargs.update(_parse_set(args.set))
    try:
        cfg = SynthConfig(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CliError(f"bad synth settings: {exc}") from exc
    try:
        ds = generate(cfg, args.out, overwrite=args.overwrite)
    except FileExistsError as exc:
        raise CliError(f"{exc} (use --overwrite)") from exc
    counts = ds.queries["category"].value_counts().sort_index()
    print(f"wrote {ds.root}: workspace {ds.workspaces['default']}")
    print(f"{len(ds.queries)} queries, {len(ds.evidence)} evidence spans")
    for cat, n in counts.items():
        print(f"  {cat:12} {n}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
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


# ---------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memlab",
        description="Agent-memory retrieval lab: OpenClaw's memory_search reproduced, measured and improved.",
    )
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("files", help="list a workspace's memory files")
    p.add_argument("workspace")
    p.add_argument("--extra", action="append", default=[], metavar="PATH", help="extra memory path")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_files)

    p = sub.add_parser("chunk", help="print a Markdown file's chunks (line ranges, sizes, hashes)")
    p.add_argument("file")
    p.add_argument("--chunker", choices=CHUNKERS, default="openclaw")
    p.add_argument("--tokens", type=int, default=400)
    p.add_argument("--overlap", type=int, default=80)
    p.add_argument("--show", action="store_true", help="print each chunk's text too")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("index", help="create or update a workspace's index (incremental)")
    p.add_argument("workspace")
    _add_index_options(p)
    p.add_argument(
        "--force", action="store_true", help="full reindex (the embedding cache is kept)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("status", help="index path, fingerprint, counts, dirty or not")
    p.add_argument("workspace")
    _add_index_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("watch", help="keep the index fresh as memory files change (Ctrl-C stops)")
    p.add_argument("workspace")
    _add_index_options(p)
    p.add_argument("--debounce-ms", type=int, default=1500)
    p.add_argument("--settle-ms", type=int, default=1500)
    p.add_argument(
        "--max-seconds", type=float, default=None, help="stop after this long (for scripts)"
    )
    p.set_defaults(func=cmd_watch)

    p = sub.add_parser(
        "search", help="search a workspace (syncs changed files first; --no-sync to skip)"
    )
    p.add_argument("workspace")
    p.add_argument("query")
    p.add_argument(
        "--preset",
        default=None,
        help="openclaw (default; with --config: the config's own query settings),"
        " openclaw-latest, wsum, rrf, qmd-like, vector, bm25, memlab-best, memlab-best-chunk",
    )
    p.add_argument("--vector-weight", type=float, dest="vector_weight")
    p.add_argument("--text-weight", type=float, dest="text_weight")
    p.add_argument("--max-results", type=int, dest="max_results")
    p.add_argument("--min-score", type=float, dest="min_score")
    p.add_argument("--candidate-multiplier", type=float, dest="candidate_multiplier")
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="any pipeline parameter"
    )
    p.add_argument("--citations", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--json", action="store_true", help="the memory_search tool's JSON")
    p.add_argument(
        "--explain",
        action="store_true",
        help="every term of every score (they add up) and how many candidates were dropped",
    )
    p.add_argument(
        "--dropped",
        "--all",
        dest="dropped",
        action="store_true",
        help="with --explain (implied): list every dropped candidate, its scores and why",
    )
    p.add_argument(
        "--now",
        default=None,
        metavar="WHEN",
        help="the clock for temporal decay: Unix seconds, YYYY-MM-DD or an ISO datetime"
        " (default: now)",
    )
    p.add_argument(
        "--no-sync",
        action="store_true",
        help="do not sync changed files first; name the stale files on stderr instead",
    )
    p.add_argument("--width", type=int, default=80, help="snippet width in the table")
    _add_index_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("get", help="read lines of a memory file (memory_get)")
    p.add_argument("workspace")
    p.add_argument("path")
    p.add_argument("--from", type=int, dest="from_", default=None, help="first line (1-based)")
    p.add_argument("--lines", type=int, default=None, help="number of lines")
    p.add_argument("--extra", action="append", default=[], metavar="PATH")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_get)

    p = sub.add_parser(
        "synth", help="generate a synthetic memory workspace with questions and evidence"
    )
    p.add_argument("out")
    p.add_argument("--days", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--notes-per-day", type=int, dest="notes_per_day")
    p.add_argument("--queries-per-type", type=int, dest="queries_per_type")
    p.add_argument(
        "--mix",
        help="comma-separated phenomena (paraphrase,exact,update,redundancy,distractor,multi,cjk)",
    )
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="any SynthConfig field"
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a workspace memlab generated before"
    )
    p.set_defaults(func=cmd_synth)

    # memlab.demo imports only the standard library at module level: --help stays fast.
    from memlab.demo import DEFAULT_DAYS, DEFAULT_NOTES_PER_DAY, DEFAULT_QUERIES_PER_TYPE

    p = sub.add_parser(
        "demo",
        help="memlab's main job: where OpenClaw's 0.7/0.3 stands and what tuning buys"
        " (synthetic corpus → index → weight sweep → held-out comparison, paired test, plots)",
    )
    p.add_argument(
        "--out",
        default="demo-output",
        help="folder for the corpus, index, tables and plots (reused: a second run is cached)",
    )
    p.add_argument("--embedder", choices=("local", "hashing"), default="local")
    p.add_argument(
        "--days",
        type=int,
        default=DEFAULT_DAYS,
        help="daily logs in the corpus (default: %(default)s)",
    )
    p.add_argument(
        "--notes-per-day",
        type=int,
        default=DEFAULT_NOTES_PER_DAY,
        help="background notes per daily log (default: %(default)s)",
    )
    p.add_argument(
        "--questions-per-type",
        type=int,
        default=DEFAULT_QUERIES_PER_TYPE,
        help="questions per phenomenon, capped by what the generator supports"
        " (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=7)
    p.set_defaults(func=cmd_demo)

    try:
        from memlab import labcli

        labcli.add_parsers(sub)
    except ImportError:  # pragma: no cover - the lab commands land with memlab.eval
        pass
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
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
        from memlab.index import IndexLockedError, IndexUnusableError

        if isinstance(exc, EmbeddingError | IndexLockedError | IndexUnusableError | OSError):
            print(f"memlab: error: {exc}", file=sys.stderr)
            return EXIT_RUNTIME
        raise


if __name__ == "__main__":
    sys.exit(main())
