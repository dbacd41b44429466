"""Pieces every ``memlab`` command shares: argument helpers, ``--set`` parsing, the
table and JSON printers, the index options and opening an index from them.

Module-level imports are the standard library, :mod:`memlab.errors` and
:mod:`memlab.config.vocab` only, so ``memlab --help`` stays fast; the engine is imported
inside the functions that need it.

Size: the helpers of every command, in three parts that would split cleanly: arguments
(``DeferredParser``, ``parse_set``), printers, and the index a command opens
(``load_config``, ``load_preset_file``, ``open_index``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlab.config.vocab import (
    CHUNKERS,
    CLI_EMBEDDERS,
    DEFAULT_LOCAL_BACKEND,
    FTS_TOKENIZERS,
    LOCAL_BACKENDS,
    MEMORY_FILE_RULES,
    VECTOR_BACKENDS,
)
from memlab.errors import CliError

__all__ = [
    "DeferredParser",
    "add_index_options",
    "announce_rebuild",
    "chunk_row",
    "format_table",
    "json_default",
    "load_config",
    "load_preset_file",
    "open_index",
    "parse_set",
    "parse_value",
    "print_json",
    "quoted",
    "score_texts",
    "sync_for_search",
]


# ----------------------------------------------------------------- arguments
class DeferredParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose arguments are added on first use.

    ``populate`` (a keyword of ``add_parser``; None = an ordinary parser) is called once
    with the parser before it first parses or formats its help or usage, so building
    ``memlab``'s parser need not import the modules that hold a subcommand's defaults.
    """

    def __init__(self, *args: Any, populate: Any = None, **kwargs: Any) -> None:
        self._populate = populate
        super().__init__(*args, **kwargs)

    def _ensure_populated(self) -> None:
        if self._populate is not None:
            fill, self._populate = self._populate, None
            fill(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """``ArgumentParser.parse_known_args``, once the arguments are added."""
        self._ensure_populated()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        """``ArgumentParser.format_help``, once the arguments are added."""
        self._ensure_populated()
        return super().format_help()

    def format_usage(self) -> str:
        """``ArgumentParser.format_usage``, once the arguments are added."""
        self._ensure_populated()
        return super().format_usage()


def add_index_options(p: argparse.ArgumentParser, title: str = "index options") -> None:
    """Add the index options group (``--db``, ``--embedder``, ``--chunker``, ...,
    ``--config``, ``--agent``, ``--lock-timeout``) that :func:`open_index` reads, under
    ``title`` in the help.

    Flags left at None fall back to ``--config``'s settings, then to OpenClaw's defaults.
    """
    g = p.add_argument_group(title)
    g.add_argument(
        "--db",
        help="index file (default: one per tokenizer and embedder in the user cache,"
        " ~/.cache/memlab/indexes/WORKSPACE-HASH/IDENTITY.sqlite; memlab status prints it)",
    )
    g.add_argument(
        "--embedder",
        choices=CLI_EMBEDDERS,
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
    g.add_argument("--fts-tokenizer", choices=FTS_TOKENIZERS, default=None)
    g.add_argument(
        "--memory-files",
        choices=MEMORY_FILE_RULES,
        default=None,
        help="which files are memory and how they are chunked: OpenClaw 2026-04 or release"
        " 2026.9.6 (default: the preset's, else openclaw-2026.4); one index file per rule",
    )
    g.add_argument(
        "--local-backend",
        choices=LOCAL_BACKENDS,
        default=DEFAULT_LOCAL_BACKEND,
        help="how the packaged model runs: onnx (onnxruntime, default: no torch import on a"
        " query), torch (sentence-transformers; same vectors and index) or onnx-int8"
        " (int8-quantised: faster indexing, its own index)",
    )
    g.add_argument(
        "--vector-backend",
        choices=VECTOR_BACKENDS,
        default="numpy",
        help="vector-leg engine: numpy/faiss exact, fp16/sq8 quantised, ivf/hnsw approximate"
        " (default numpy; an approximate index is rebuilt per call, so exact is fastest here)",
    )
    g.add_argument("--config", help="OpenClaw config file (openclaw.json, JSON5)")
    g.add_argument(
        "--agent",
        help="agent id whose memorySearch override applies (with --config); its transcripts"
        " (the sessions source) are then OpenClaw's <state>/agents/ID/sessions",
    )
    g.add_argument(
        "--sessions",
        metavar="DIR",
        default=None,
        help="folder of the JSONL session transcripts of the sessions source (default:"
        " --agent's under OpenClaw's state folder, else WORKSPACE/sessions)",
    )
    g.add_argument(
        "--embed-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds one request to a remote embedding provider may take (default 30;"
        " 3 retries follow a failure)",
    )
    g.add_argument(
        "--lock-timeout",
        type=float,
        default=30.0,
        help="seconds to wait for another process writing the index (default 30)",
    )


def parse_set(items: Sequence[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` items → ``{key: value}``.

    Keys have ``-`` replaced by ``_`` (``--set vector-weight=0.5`` = ``vector_weight``);
    values go through :func:`parse_value`; a later item wins over an earlier one with
    the same key. An item without ``=`` is a ``CliError`` (exit 2).
    """
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise CliError(f"--set expects key=value, got {item!r}")
        key, raw = item.split("=", 1)
        out[key.strip().replace("-", "_")] = parse_value(raw.strip())
    return out


def parse_value(raw: str) -> Any:
    """A ``--set`` value: ``true``/``false`` → bool, ``none``/``null`` → None (both
    case-insensitive), else an int, else a float (``1e-3``, ``inf``), else the string."""
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


# ------------------------------------------------------------------- output
def print_json(obj: Any) -> None:
    """Print ``obj`` as indented UTF-8 JSON (numpy numbers and paths via :func:`json_default`)."""
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=json_default))


def json_default(o: Any) -> Any:
    """``json.dumps`` fallback: numpy integers → int, numpy floats → float, Path → str;
    anything else is a ``TypeError``."""
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


# How much of a user's text an echo shows (a 10,000-character query is not printed whole).
ECHO_CHARS = 80


def quoted(text: str, limit: int = ECHO_CHARS) -> str:
    """``repr(text)``, or, past ``limit`` characters, the repr of its first ``limit`` with
    ``… (N characters)`` after it: ``'what did Alice say about th…' (10000 characters)``."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def score_texts(scores: Sequence[float], decimals: int = 3, most: int = 6) -> list[str]:
    """Scores as a results table prints them: ``decimals`` places, more (up to ``most``)
    when fewer would hide something — a score that is not 0 printed as ``0.000``, or two
    different scores printed alike — and 3 significant digits (``1.2e-07``) when even
    ``most`` places would. Equal scores print alike (a real tie)."""
    vals = [float(v) for v in scores]
    distinct = sorted(set(vals))

    def shows(fmt: str) -> bool:
        cells = {v: format(v, fmt) for v in distinct}
        hidden = any(v != 0 and float(c) == 0 for v, c in cells.items())
        return not hidden and len(set(cells.values())) == len(distinct)

    for d in range(decimals, most + 1):
        if shows(f".{d}f"):
            return [format(v, f".{d}f") for v in vals]
    return [format(v, ".3g") for v in vals]


def format_table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain-text table: a header, a dashed rule, one line per row.

    Each column is left-justified to max(len(name), longest ``str(cell)``); a row
    without a column prints it empty; no rows prints the header and rule only.
    """
    widths = {
        c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) if rows else len(c) for c in columns
    }
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines.append("  ".join("-" * widths[c] for c in columns))
    for r in rows:
        lines.append("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns))
    return "\n".join(lines)


# -------------------------------------------------------------------- index
def load_config(args: argparse.Namespace) -> Any:
    """The OpenClaw settings of ``--config`` (with ``--agent``'s override), else the defaults.

    Either layout (``memlab.config.load.load_search_config``): a file with
    ``memory.search`` (OpenClaw 2026.9.6) gives its ``CurrentSearchConfig``, any other a
    ``MemorySearchConfig`` (2026-04), with a note on stderr of how the release's doctor
    migrates ``agents.defaults.memorySearch``.

    Usage errors (exit 2): ``--agent`` without ``--config``, an empty ``--config``
    or ``--agent``, and, when no ``--embedder`` overrides the config's provider,
    a provider memlab cannot build (``config.provider_problem``: e.g. ``openai``
    without ``memorySearch.remote.baseUrl``), each named with the file and key.
    """
    from memlab.config import MemorySearchConfig
    from memlab.config.load import load_search_config

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
    check = getattr(args, "embedder", None) is None  # --embedder replaces the provider
    cfg, note = load_search_config(config, agent, check_provider=check)
    if note:
        print(f"memlab: note: {note}", file=sys.stderr)
    return cfg


def load_preset_file(args: argparse.Namespace) -> Any:
    """The ``--preset-file`` of ``args`` read and checked (``memlab.config.preset_file``),
    or None without one; then the index options the file names fill the flags left unset
    (``--chunker``/``--tokens``/``--overlap``, ``--embedder``/``--model``), and a flag that
    names another embedder is warned about (weights tuned with one embedder do not carry
    over to another). Called before any index is opened: every problem of the file is a
    ``CliError`` (exit 2) naming the file and the key, with a "did you mean".
    ``--preset`` with it is an error (the file names its own base)."""
    path = getattr(args, "preset_file", None)
    if path is None:
        return None
    if getattr(args, "preset", None):
        raise CliError(
            f"--preset {args.preset} and --preset-file {path}: give one (the file names its"
            " own base preset; --set still applies over it)"
        )
    from memlab.config.preset_file import read_preset_file

    try:
        pf = read_preset_file(path)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    ch = pf.chunker or {}
    if ch and args.chunker is None and args.tokens is None and args.overlap is None:
        args.chunker = ch.get("kind")
        args.tokens, args.overlap = ch.get("tokens"), ch.get("overlap")
    emb = pf.embedder or {}
    tuned = emb.get("provider")
    if tuned and args.embedder is None and getattr(args, "config", None) is None:
        if tuned in CLI_EMBEDDERS:
            args.embedder = tuned
            if args.model is None and tuned == "hashing":
                args.model = emb.get("model")
        else:
            print(
                f"memlab: warning: {pf.path} was tuned with the {tuned} embedder, which"
                " only --config can name (its provider and remote); searching with the"
                " default embedder instead: the tuned weights may not carry over",
                file=sys.stderr,
            )
    elif tuned and args.embedder is not None and args.embedder not in (tuned, "auto"):
        print(
            f"memlab: warning: {pf.path} was tuned with the {tuned} embedder"
            f" ({emb.get('model')}); --embedder {args.embedder} gives other vectors, so the"
            " tuned weights may not carry over",
            file=sys.stderr,
        )
    return pf


def open_index(args: argparse.Namespace, cfg: Any = None) -> Any:
    """The ``MemoryIndex`` of a command's workspace and index options.

    ``cfg`` (default: :func:`load_config`) is translated by
    ``memlab.config.index_options``; each flag given on the command line wins
    over the config's value (``--extra`` paths are added after the config's
    ``extraPaths``). A 2026.9.6 config (``memory.search``) without ``--memory-files``
    indexes the release's files (``openclaw-2026.9``). The transcripts of the sessions
    source are where ``memlab.files.sessions.transcript_places`` says (``--sessions``, else
    ``--agent``'s, else ``WORKSPACE/sessions``). Nothing is read or written until
    the index is used.
    """
    from memlab.config import index_options
    from memlab.config.load import config_files_rule, index_extras, index_settings
    from memlab.files.sessions import transcript_places
    from memlab.store import MemoryIndex

    cfg = cfg if cfg is not None else load_config(args)
    extras = index_extras(cfg)  # a QMD config: its chunker, its default-memory choice
    embed_timeout = getattr(args, "embed_timeout", None)
    if embed_timeout is not None and not 0 < embed_timeout < float("inf"):
        raise CliError(f"--embed-timeout must be a number of seconds > 0, got {embed_timeout}")
    # the files rule a 2026.9.6 config implies (its files, as `memlab search` picks)
    mf = getattr(args, "memory_files", None) or config_files_rule(cfg)
    cfg = index_settings(cfg)
    options = index_options(
        cfg,
        provider=args.embedder,
        model=args.model,
        chunker_kind=args.chunker or extras.get("chunker_kind"),
        chunk_tokens=args.tokens,
        chunk_overlap=args.overlap,
        db_path=args.db,
        extra=args.extra,
        fts_tokenizer=args.fts_tokenizer,
        local_backend=getattr(args, "local_backend", DEFAULT_LOCAL_BACKEND),
        vector_backend=args.vector_backend,
        lock_timeout=args.lock_timeout,
        embed_timeout=embed_timeout,
        **({"memory_files": mf} if mf else {}),
        **({"default_memory": False} if extras.get("default_memory") is False else {}),
    )
    places = transcript_places(
        args.workspace, sessions=getattr(args, "sessions", None), agent=getattr(args, "agent", None)
    )
    return MemoryIndex(args.workspace, sessions_dir=places.jsonl_dir, **options)


def announce_rebuild(index: Any) -> None:
    """Say on stderr, before it happens, that an existing index file is about to be rebuilt
    and why (``MemoryIndex.rebuild_reason``: "embedder changed from X to Y"); a new index
    or one in step says nothing."""
    reason = index.rebuild_reason()
    if reason and reason != "new index":
        print(f"memlab: rebuilding {index.db_path}: {reason}", file=sys.stderr)


def sync_for_search(index: Any, no_sync: bool, pipeline: Any) -> tuple[Any, Any, str | None]:
    """Bring the index in step before a search, or say what is stale; returns the index
    and the system to search with, and why they are not ``index`` and ``pipeline`` (None
    when they are).

    A missing index, or one whose fingerprint no longer matches, is (re)built either way
    (announced on stderr: a first build, whose time grows with the workspace, or the
    reason of a rebuild; ``--no-sync`` skips syncing changed files, not building an index
    that does not exist). Then by default files changed
    since the last sync are synced (an unchanged workspace costs one stat per file);
    with ``--no-sync``, or when the sync cannot run (another writer holds the lock, the
    index folder is read-only, the embedding provider is down), the stale files are named
    on stderr instead. An index that cannot be built because the embedding provider fails
    is answered, for a system with a keyword leg, from a keyword-only index of the same files
    (``MemoryIndex.keyword_only``), as the MCP server does.
    """
    from memlab.embed import EmbeddingError
    from memlab.store import IndexLockedError
    from memlab.tools import keyword_index_note

    if not index.db_path.exists():
        print(
            f"memlab: note: no index of {index.workspace} yet: building {index.db_path}"
            + (" (--no-sync skips syncing changed files, not a first build)" if no_sync else ""),
            file=sys.stderr,
        )
    announce_rebuild(index)
    try:
        index.ensure_synced()
    except EmbeddingError as exc:
        if not pipeline.keyword:
            raise
        keyword = index.keyword_only()
        keyword.ensure_synced(files=True)
        return keyword, pipeline.replace(vector=False), keyword_index_note(str(exc))
    problem = "--no-sync"
    if not no_sync:
        try:
            index.ensure_synced(files=True)
            return index, pipeline, None
        except (IndexLockedError, OSError, EmbeddingError) as exc:
            # The index as last synced still answers (the embedder-down case falls back to
            # keyword search below); what it misses is named.
            problem = f"could not sync ({exc})"
    stale = index.stale_files()
    if stale:
        shown = ", ".join(stale[:10]) + (f" and {len(stale) - 10} more" if len(stale) > 10 else "")
        print(
            f"memlab: warning: {problem}: {len(stale)} file(s) changed since the last sync"
            f" are searched as last indexed: {shown}",
            file=sys.stderr,
        )
    return index, pipeline, None


def chunk_row(i: int, c: Any, weight: int, full: bool) -> dict[str, Any]:
    """One row of ``memlab chunk``'s table for chunk ``c`` (number ``i`` within its file):
    ``{chunk, lines: "start-end", start_line, end_line, chars: len(text), weight, hash}``;
    ``weight`` is the rule's ``estimate_chars`` of the text, ``hash`` is cut to 12 hex
    digits unless ``full`` (``--json``)."""
    return {
        "chunk": i,
        "lines": f"{c.start_line}-{c.end_line}",
        "start_line": c.start_line,
        "end_line": c.end_line,
        "chars": len(c.text),
        "weight": weight,
        "hash": c.hash if full else c.hash[:12],
    }
