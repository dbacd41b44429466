"""How ``memlab mcp`` is reached: stdio (`serve_stdio`) or Streamable HTTP (`serve_http`)
on ``127.0.0.1`` unless told otherwise, with the SDK's DNS-rebinding protection (``Host``
and ``Origin`` checked against the listening host and loopback names: 421 / 403
otherwise); the bound address announced on stderr as one line (`announce_serving`) and
read back by clients and tests (`serving_url`).
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer

__all__ = [
    "LOOPBACK",
    "MCP_PATH",
    "SERVING_RE",
    "announce_serving",
    "serve_http",
    "serve_stdio",
    "serving_url",
]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MCP_PATH = "/mcp"
# The announced address: a host (a bracketed IPv6 literal or a name without ``/`` or ``:``),
# a port, then MCP_PATH. Anchored on the path, so text another thread wrote right after
# the line (a merged line, see announce_serving) is not read as part of the URL.
SERVING_RE = re.compile(
    r"serving (http://(?:\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+):\d+" + re.escape(MCP_PATH) + ")"
)


def serve_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout until the client closes them."""
    server.run("stdio")


def serve_http(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    allowed_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve Streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted.

    ``port`` 0 picks a free port; the bound address is printed on stderr
    (``memlab mcp: serving http://HOST:PORT/mcp``, one whole line: ``announce_serving``;
    ``serving_url`` reads it back) once the socket listens. A client may connect at once:
    uvicorn starts the app (its lifespan: the SDK's session manager) before it accepts,
    so an early connection waits in the listen backlog rather than meeting a half-started
    app. ``Host``
    must be ``HOST:port`` (or a loopback name when ``HOST`` is one) or one of
    ``allowed_hosts``; an ``Origin``, when sent, must be ``http://`` one of those or
    one of ``allowed_origins`` (exact, or ``scheme://name:*`` for any port).
    """
    import anyio
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    names = [host, *(LOOPBACK if host in LOOPBACK else ())]
    bracket = [f"[{n}]" if ":" in n else n for n in names]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in bracket] + list(allowed_hosts),
        allowed_origins=[f"http://{n}:*" for n in bracket] + list(allowed_origins),
    )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=security, host=host
    )
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    announce_serving(f"http://{shown}:{bound}{MCP_PATH}")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


def announce_serving(url: str) -> None:
    """Print ``memlab mcp: serving URL`` on stderr as one write, newline included.

    ``print()`` writes the text and its newline in two calls; the watcher thread logs on
    stderr at the same moment (its first sync), and its text could land between them:
    ``…/mcpmemlab watch: synced …`` on one line, which a client reading the URL up to the
    next space took for the path (404 on every request). One ``write`` keeps the line
    whole: another thread's text can only come before it or after its newline.
    """
    sys.stderr.write(f"memlab mcp: serving {url}\n")
    sys.stderr.flush()


def serving_url(text: str) -> str | None:
    """The URL of the first ``memlab mcp: serving http://HOST:PORT/mcp`` in ``text``, or
    None when there is none.

    The match ends at the MCP path, so text glued right after it (another process's or
    an older server's output in the same stream) is not taken into the URL; a bracketed
    IPv6 host (``http://[::1]:PORT/mcp``) is kept as printed.
    """
    m = SERVING_RE.search(text)
    return m.group(1) if m else None
