"""The MCP server object: ``memory_search``, ``memory_get`` and ``memory_status`` bound to
a `memlab.server.service.MemoryService` (`build_server`), with the arguments' schemas a
client reads and, with a token, bearer authentication (`StaticTokenVerifier`).

Built on the official Python SDK (``mcp`` >= 2, ``MCPServer``). The SDK evaluates the
tools' annotations in this module's namespace, so the schema types below live here, at
module level.
"""

from __future__ import annotations

import hmac
import inspect
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field  # module level: the SDK evaluates the tools' annotations here

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from memlab.server.service import MemoryService

__all__ = ["StaticTokenVerifier", "build_server"]

KW = inspect.Parameter.KEYWORD_ONLY
GET_FROM = Annotated[int | None, Field(alias="from", description="first line, 1-based")]
# The search arguments' ranges, in the schema a client reads (not enforced by the SDK: the
# one rule is memlab.tools.check_search_arguments, whose message names the argument).
SEARCH_QUERY = Annotated[str, Field(description="what to search for: a non-empty text")]
SEARCH_MAX_RESULTS = Annotated[
    int | None,
    Field(
        description="how many results at most: an integer >= 1", json_schema_extra={"minimum": 1}
    ),
]
SEARCH_MIN_SCORE = Annotated[
    float | None, Field(description="the lowest score returned: a finite number")
]
GET_CORPUS = Annotated[str | None, Field(description="memory, wiki or all (release 2026.9.6)")]


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> Any:
        """An ``AccessToken`` when ``token`` equals the secret, else None (→ 401)."""
        from mcp.server.auth.provider import AccessToken

        if hmac.compare_digest(token.encode(), self.token.encode()):
            return AccessToken(token=token, client_id="memlab", scopes=[])
        return None


def build_server(
    service: MemoryService, *, token: str | None = None, issuer: str = "http://127.0.0.1"
) -> MCPServer:
    """The ``MCPServer`` with the three tools bound to ``service``; with ``token``, bearer
    authentication (HTTP only: stdio has no headers) whose ``issuer`` is this server."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from memlab import __version__
    from memlab.tools import SearchArgumentError
    from memlab.tools.variants import tool_variant

    get_corpora = tool_variant(service.pipeline).get_corpora
    auth: dict[str, Any] = {}
    if token:
        from mcp.server.auth.settings import AuthSettings

        auth = {
            "auth": AuthSettings(issuer_url=issuer, resource_server_url=None),
            "token_verifier": StaticTokenVerifier(token),
        }
    server = MCPServer(
        "memlab",
        version=__version__,  # the client's serverInfo.version
        instructions="Search and read the workspace's memory files (MEMORY.md, memory/*.md).",
        log_level="WARNING",
        **auth,
    )

    @server.tool(name="memory_search", structured_output=True)
    def memory_search(
        query: SEARCH_QUERY,
        maxResults: SEARCH_MAX_RESULTS = None,
        minScore: SEARCH_MIN_SCORE = None,
        corpus: Annotated[
            str | None, Field(description="memory, sessions or all (2026.9.6: also wiki)")
        ] = None,
    ) -> dict[str, Any]:
        """Search the memory files; results carry path, line range, score and snippet."""
        try:
            return service.search(query, maxResults, minScore, corpus)
        except SearchArgumentError as exc:
            # The caller's mistake, named with its range: the protocol's tool error
            # (isError), never the "memory is unavailable" payload.
            raise ToolError(str(exc)) from None

    def memory_get(**arguments: Any) -> dict[str, Any]:
        """Read a memory file (MEMORY.md or memory/*.md), optionally a line range."""
        return service.get(
            arguments["path"],
            arguments.get("from"),
            arguments.get("lines"),
            arguments.get("corpus"),
        )

    # OpenClaw's argument is `from`, a Python keyword: the SDK builds the schema from this
    # signature (`from_`, aliased "from") and calls the tool with the alias as the key.
    memory_get.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("path", KW, annotation=str),
            inspect.Parameter("from_", KW, default=None, annotation=GET_FROM),
            inspect.Parameter("lines", KW, default=None, annotation=int | None),
            # OpenClaw 2026.9.6's memory_get also takes a corpus (the 2026-04 tool does not).
            *(
                [inspect.Parameter("corpus", KW, default=None, annotation=GET_CORPUS)]
                if get_corpora
                else []
            ),
        ],
        return_annotation=dict[str, Any],
    )
    server.tool(name="memory_get", structured_output=True)(memory_get)

    @server.tool(name="memory_status", structured_output=True)
    def memory_status() -> dict[str, Any]:
        """The index behind memory_search: path, identity, counts and stale files."""
        return service.status()

    return server
