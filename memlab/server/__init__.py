"""``memlab mcp``: a workspace's memory served over the Model Context Protocol.

Three tools, built on the official Python SDK (``mcp`` >= 2, ``MCPServer``):

- ``memory_search`` — ``memlab.tools.memory_search`` (OpenClaw's arguments ``query``,
  ``maxResults``, ``minScore``, plus ``corpus``: ``memory``, ``sessions`` or ``all``) with
  the pipeline the command line would run;
- ``memory_get`` — ``memlab.tools.memory_get`` (``path``, ``from``, ``lines``), with the
  path rules of ``memlab get``: a refused path answers ``{error: "path required", path}``;
- ``memory_status`` — index path, identity, file and chunk counts, stale and skipped files,
  the watcher's last sync, and what is degraded and why (``degraded``).

Modules:

- ``service``: `MemoryService`, the state behind the tools — freshness and concurrency (a
  reader index under a lock, a watcher thread with its own writer index: a search never
  waits for a sync) and failures (a provider that fails or hangs, syncs that fail:
  keyword-only answers, ``memory_status``'s ``degraded``); `single_query_threads`.
- ``tools``: `build_server`, the ``MCPServer`` with the three tools and their schemas;
  with a token, bearer authentication through the SDK's ``TokenVerifier`` (401 without
  the token).
- ``transport``: `serve_stdio`; `serve_http`, Streamable HTTP on ``127.0.0.1`` unless told
  otherwise, with the SDK's DNS-rebinding protection (``Host`` and ``Origin`` checked
  against the listening host and loopback names: 421 / 403 otherwise); `announce_serving`
  and `serving_url`, the announced address.
"""

from __future__ import annotations

from memlab.server.service import (
    QUERY_THREADS,
    STARTUP_WAIT_S,
    SYNC_WAIT_S,
    MemoryService,
    single_query_threads,
)
from memlab.server.tools import build_server
from memlab.server.transport import announce_serving, serve_http, serve_stdio, serving_url

__all__ = [
    "QUERY_THREADS",
    "STARTUP_WAIT_S",
    "SYNC_WAIT_S",
    "MemoryService",
    "announce_serving",
    "build_server",
    "serve_http",
    "serve_stdio",
    "serving_url",
    "single_query_threads",
]
