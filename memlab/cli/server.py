"""``memlab mcp WORKSPACE``: the workspace's memory as a Model Context Protocol server
(:mod:`memlab.server`), over stdio (default) or Streamable HTTP (``--http``).

The pipeline and the index are built exactly as ``memlab search`` builds them
(``memlab.cli.search.build_pipeline``, ``memlab.cli.common.open_index``). Module-level
imports stay light: the engine, the SDK and the server are imported inside ``cmd_mcp``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from memlab.cli.common import (
    add_index_options,
    announce_rebuild,
    load_config,
    load_preset_file,
    open_index,
)
from memlab.cli.search import add_preset_file_argument, build_pipeline, fill_index_options
from memlab.config.vocab import CITATION_MODES
from memlab.errors import CliError

__all__ = ["add_parser", "cmd_mcp"]

TOKEN_ENV = "MEMLAB_MCP_TOKEN"


def add_parser(sub: Any) -> None:
    """Add the ``mcp`` subcommand to ``memlab``'s subparsers."""
    p = sub.add_parser(
        "mcp",
        help="serve the workspace's memory to MCP clients (memory_search, memory_get,"
        " memory_status; stdio, or --http)",
    )
    p.add_argument("workspace")
    p.add_argument(
        "--preset",
        default=None,
        help="the pipeline, as memlab search (default openclaw; with --config: its settings)",
    )
    add_preset_file_argument(p, "the system served (memory_status names it)")
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="any pipeline parameter"
    )
    p.add_argument("--citations", choices=CITATION_MODES, default="auto")
    p.add_argument("--http", action="store_true", help="serve Streamable HTTP at /mcp")
    p.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="with --http (0 = any free port)")
    p.add_argument(
        "--token",
        default=None,
        help=f"with --http: require 'Authorization: Bearer TOKEN' (or set ${TOKEN_ENV})",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --http: another accepted Origin (e.g. http://app.example:*)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="with --http: another accepted Host header (e.g. memory.lan:8765)",
    )
    p.add_argument("--debounce-ms", type=int, default=1500, help="watcher debounce (default 1500)")
    p.add_argument("--settle-ms", type=int, default=1500, help="watcher settle (default 1500)")
    add_index_options(p)
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Build the pipeline and two indexes (reader, watcher's writer) as ``memlab search``
    would, sync once, then serve until the client leaves (stdio) or Ctrl-C (HTTP)."""
    # The preset file first: a bad one is refused before the SDK loads or a server starts.
    pf = load_preset_file(args)
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if not args.http and (args.token or args.allow_origin or args.allow_host):
        raise CliError(
            "--token, --allow-origin and --allow-host need --http (stdio has no headers)"
        )
    if args.debounce_ms < 0 or args.settle_ms < 0:
        raise CliError("--debounce-ms and --settle-ms must be >= 0")
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be in [0, 65535], got {args.port}")
    try:
        import mcp.server  # noqa: F401
    except ImportError:
        raise CliError("memlab mcp needs the MCP SDK: pip install 'mcp>=2,<3'") from None
    from memlab.server import MemoryService, build_server, serve_http, serve_stdio

    cfg = load_config(args)
    pipeline = build_pipeline(args, cfg, pf)
    fill_index_options(args, pipeline)
    reader, writer = open_index(args, cfg), open_index(args, cfg)
    if not pipeline.keyword and not reader.has_vectors:
        raise CliError(
            f"{pipeline.name} reads only the vector leg, but this index has no embedder"
            " (--embedder none): choose an embedder, or a preset with a keyword leg"
        )
    announce_rebuild(writer)
    service = MemoryService(
        reader,
        writer,
        pipeline,
        citations=args.citations,
        debounce_ms=args.debounce_ms,
        settle_ms=args.settle_ms,
        preset_file=None if pf is None else pf.status(),
    )
    service.start()
    print(
        f"memlab mcp: {reader.workspace} ({pipeline.name}"
        + (f" from {pf.path}" if pf is not None else "")
        + f"; index {reader.db_path})",
        file=sys.stderr,
        flush=True,
    )
    try:
        if args.http:
            shown = f"[{args.host}]" if ":" in args.host else args.host
            server = build_server(service, token=token, issuer=f"http://{shown}")
            serve_http(
                server,
                host=args.host,
                port=args.port,
                allowed_origins=args.allow_origin,
                allowed_hosts=args.allow_host,
            )
        else:
            serve_stdio(build_server(service))
    finally:
        service.stop()
    return 0
