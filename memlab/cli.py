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
from memlab.errors import CliError

EMBEDDERS = ("auto", "local", "hashing", "none")
CHUNKERS = ("openclaw", "openclaw-exact", "heading", "line")
# Equal to memlab.index.VECTOR_BACKENDS (tested); not imported so `--help` stays fast.
VECTOR_BACKENDS = ("numpy", "faiss", "fp16", "sq8", "ivf", "hnsw")


# ---------------------------------------------------------------------- helpers
def _add_index_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("index options")
    g.add_argument("--db", help="index file (default WORKSPACE/.memlab/index.sqlite)")
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
    from memlab.config import MemorySearchConfig, load_openclaw_config

    if getattr(args, "config", None):
        return load_openclaw_config(args.config, args.agent)
    return MemorySearchConfig()


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
    from memlab.workspace import read_memory_file

    path = Path(args.file)
    if not path.is_file():
        raise CliError(f"file not found: {path}")
    text = read_memory_file(path).text
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


def cmd_index(args: argparse.Namespace) -> int:
    index = _open_index(args)
    with index:
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
            raise CliError(f"no index at {index.db_path}; run `memlab index {args.workspace}`")
        st = index.status()
    if args.json:
        _print_json(st)
        return 0
    for key in (
        "workspace",
        "index_path",
        "files",
        "chunks",
        "truncated_chunks",
        "cache_entries",
        "dirty",
    ):
        print(f"{key:18} {st[key]}")
    print(
        f"{'fingerprint':18} {'current' if st['fingerprint_current'] else 'STALE (memlab index will rebuild)'}"
    )
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


def cmd_search(args: argparse.Namespace) -> int:
    from memlab.tools import memory_search

    cfg = _load_config(args)  # read once: the pipeline and the index both use it
    pipeline = _build_pipeline(args, cfg)
    wanted = getattr(pipeline, "fts_tokenizer", None)
    if wanted and args.fts_tokenizer is None:
        args.fts_tokenizer = wanted  # a preset tuned on its own tokenizer (memlab-best: porter)
    index = _open_index(args, cfg)
    with index:
        index.ensure_synced()
        if args.json and not args.explain:
            _print_json(
                memory_search(index, args.query, pipeline=pipeline, citations=args.citations)
            )
            return 0
        df = pipeline.search(index, args.query)
    if args.json:
        _print_json(df.drop(columns=["pos"]).to_dict(orient="records"))
        return 0
    from memlab.rerank import snippet

    if df.empty:
        hint = (
            f"minScore {pipeline.min_score:g}: try --min-score 0" if pipeline.min_score > 0 else ""
        )
        print(f"no results for {args.query!r} ({pipeline.name}{'; ' + hint if hint else ''})")
        return 0
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
    if args.explain:
        print(f"\nexplain ({pipeline.name}; mode {df.attrs.get('mode', '')}):")
        cols = [
            "vector_score",
            "vector_rank",
            "vector_norm",
            "text_raw",
            "text_score",
            "text_rank",
            "text_norm",
            "fused",
            "decay",
            "mmr_position",
            "score",
            "selected_by",
        ]
        erows = []
        for r in df.itertuples(index=False):
            d = {"#": r.rank + 1}
            for c in cols:
                v = getattr(r, c)
                d[c] = (
                    "-"
                    if (isinstance(v, float) and v != v)
                    or (c.endswith("rank") and v < 0)
                    or (c == "mmr_position" and v < 0)
                    else (f"{v:.4f}" if isinstance(v, float) else v)
                )
            erows.append(d)
        print(_table(erows, ["#", *cols]))
        diff = pipeline.diff()
        print(
            "settings: " + (", ".join(f"{k}={v}" for k, v in diff.items()) or "openclaw defaults")
        )
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    from memlab.tools import memory_get

    res = memory_get(args.workspace, args.path, args.from_, args.lines, extra_paths=args.extra)
    if args.json:
        _print_json(res)
        return 0 if "error" not in res else 1
    if "error" in res:
        print(f"memlab: error: {res['error']}", file=sys.stderr)
        return 1
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

    return run_demo(out=args.out, embedder=args.embedder, days=args.days, seed=args.seed)


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

    p = sub.add_parser("search", help="search a workspace (indexes first if needed)")
    p.add_argument("workspace")
    p.add_argument("query")
    p.add_argument(
        "--preset",
        default=None,
        help="openclaw (default; with --config: the config's own query settings),"
        " openclaw-latest, rrf, qmd-like, vector, bm25, memlab-best, memlab-best-chunk",
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
    p.add_argument("--explain", action="store_true", help="where every score came from")
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

    p = sub.add_parser(
        "demo", help="memlab's main job: synthetic corpus → index → presets → recall table"
    )
    p.add_argument(
        "--out", default="demo-output", help="folder for the corpus, index, tables and plot"
    )
    p.add_argument("--embedder", choices=("local", "hashing"), default="local")
    p.add_argument("--days", type=int, default=30)
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
            return int(args.func(args) or 0)
    except CliError as exc:
        print(f"memlab: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f"memlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        from memlab.embed import EmbeddingError
        from memlab.index import IndexLockedError, IndexUnusableError

        if isinstance(exc, EmbeddingError | IndexLockedError | IndexUnusableError):
            print(f"memlab: error: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
