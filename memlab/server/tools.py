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

__all__ = ["StaticTokenVerifier", "build_server", "memory_server_class"]

KW = inspect.Parameter.KEYWORD_ONLY
# The tools' parameters as the SDK binds them. What a client reads (the schema) and how a
# value is read (types, ranges, messages) are memlab.tools.arguments': `MemoryServer`
# reads every call's arguments by that rule before the SDK sees them.
GET_FROM = Annotated[int | None, Field(alias="from")]
SEARCH_QUERY = str
SEARCH_MAX_RESULTS = int | None
SEARCH_MIN_SCORE = float | None
GET_CORPUS = str | None


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


def memory_server_class() -> type:
    """``MCPServer`` whose tools read their arguments by memlab's rule
    (``memlab.tools.arguments.read_tool_arguments``: OpenClaw 2026.9.6's coercion, memlab's
    message for every bad argument, never the validator's raw text) and publish that
    rule's schemas (``tool_schema``). The subclass is made on first use: the SDK is
    imported only when a server is built."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from memlab.tools import SearchArgumentError
    from memlab.tools.arguments import read_tool_arguments, tool_schema

    class ArgumentError(ToolError):
        """A bad argument a tool found itself (a range the engine checks, a corpus it does
        not take): answered with its message as it is."""

    class MemoryServer(MCPServer):
        """The MCP server of ``memlab mcp`` (``corpora``: each tool's corpus values, set by
        `build_server`; ``ArgumentError``: what a tool raises for a bad argument)."""

        corpora: dict[str, tuple[str, ...]]
        argument_error = ArgumentError

        async def list_tools(self) -> Any:
            """The SDK's tool list with each tool's arguments schema replaced by memlab's
            (``tool_schema``)."""
            tools = await super().list_tools()
            for t in tools:
                t.input_schema = tool_schema(t.name, self.corpora.get(t.name, ()))
            return tools

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """Read ``arguments`` by memlab's rule first; a bad one is the protocol's tool
            error with memlab's message (``isError``), not an outage."""
            try:
                arguments = read_tool_arguments(name, arguments, self.corpora.get(name, ()))
            except SearchArgumentError as exc:
                raise ToolError(str(exc)) from None
            except KeyError:  # not one of memlab's tools: the SDK says so
                pass
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                # A tool's own argument error (a range the engine checks, a corpus it does
                # not take) reads as memlab's message, without the SDK's prefix.
                if isinstance(exc.__cause__, ArgumentError):
                    raise ToolError(str(exc.__cause__)) from None
                raise

    return MemoryServer


def build_server(
    service: MemoryService, *, token: str | None = None, issuer: str = "http://127.0.0.1"
) -> MCPServer:
    """The MCP server (`memory_server_class`) with the three tools bound to ``service``;
    with ``token``, bearer authentication (HTTP only: stdio has no headers) whose
    ``issuer`` is this server."""

    from memlab import __version__
    from memlab.tools import SearchArgumentError
    from memlab.tools.variants import tool_variant

    variant = tool_variant(service.pipeline)
    get_corpora = variant.get_corpora
    auth: dict[str, Any] = {}
    if token:
        from mcp.server.auth.settings import AuthSettings

        auth = {
            "auth": AuthSettings(issuer_url=issuer, resource_server_url=None),
            "token_verifier": StaticTokenVerifier(token),
        }
    server = memory_server_class()(
        "memlab",
        version=__version__,  # the client's serverInfo.version
        instructions="Search and read the workspace's memory files (MEMORY.md, memory/*.md).",
        log_level="WARNING",
        **auth,
    )
    server.corpora = {"memory_search": variant.corpora, "memory_get": get_corpora}

    @server.tool(name="memory_search", structured_output=True)
    def memory_search(
        query: SEARCH_QUERY,
        maxResults: SEARCH_MAX_RESULTS = None,
        minScore: SEARCH_MIN_SCORE = None,
        corpus: str | None = None,
    ) -> dict[str, Any]:
        """Search the memory files; results carry path, line range, score and snippet."""
        try:
            return service.search(query, maxResults, minScore, corpus)
        except SearchArgumentError as exc:
            # The caller's mistake, named with its range: the protocol's tool error
            # (isError), never the "memory is unavailable" payload.
            raise server.argument_error(str(exc)) from None

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
