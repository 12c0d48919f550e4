"""The MCP server and its tools, registered by group: long-term memory (`long_term`),
review and namespaces (`governance`), working memory (`working_memory`). Each tool is a thin
adapter over one call with the caller's own identity, so MCP has the same auth, namespace
scoping, limits and error messages as REST.

Over HTTP (`/mcp` in the app) the call goes to the services in this process
(`service_client`); over stdio (`hindsight mcp`) it goes to a Hindsight service by URL,
through the SDK.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from hindsight import __version__
from hindsight.mcp import governance, long_term, working_memory
from hindsight.mcp.registration import Client
from hindsight.mcp.results import answered

INSTRUCTIONS = """Hindsight is your memory.
- Long-term memory holds claims as key/value pairs (user.favorite_color = blue) with a
  confidence that grows each time the same claim is observed again. Before acting, call
  recall; when you learn something worth keeping, call observe.
- Working memory holds the steps of your current task: call append_step as you
  work, working_memory_context to see what you did, and session_end when the task is done,
  which distils the task's steps into long-term memory.
Scores come with their reasons (similarity, keyword match, confidence, how often recalled)."""


class Backend(Protocol):
    """Where a tool's call goes, on whose behalf."""

    async def client(self, ctx: Context) -> Client: ...

    def identity(self, ctx: Context) -> bytes:
        """Who is calling (a digest of their key), for what is remembered per caller."""
        ...

    def default_namespace(self, ctx: Context) -> str | None: ...

    def pinned_namespace(self, ctx: Context) -> str | None:
        """The only namespace this call may use (the endpoint names it), if any."""
        ...


# Callers whose namespaces are remembered; the least recently seen go first.
NAMESPACE_CACHE_ENTRIES = 1000


class Namespaces:
    """Which namespace a call means when it names none: the only one the key may use."""

    def __init__(self) -> None:
        self._cache: OrderedDict[bytes, tuple[float, list[str] | None]] = OrderedDict()

    async def resolve(
        self, client: Client, who: bytes, given: str | None, backend: Backend, ctx: Context
    ) -> str:
        pinned = backend.pinned_namespace(ctx)
        if pinned and given and given != pinned:
            raise ToolError(
                f"namespace: this endpoint serves namespace {pinned!r} only; leave namespace "
                f"out, or connect to /mcp/{given} for {given!r}"
            )
        if given:
            return given
        default = backend.default_namespace(ctx)
        if default:
            return default
        now = time.monotonic()
        cached = self._cache.get(who)
        if cached is None or cached[0] < now:
            me = await answered(client.whoami())
            scope = None if me.is_admin else me.namespaces
            cached = (now + 30, scope)
            self._cache[who] = cached
            while len(self._cache) > NAMESPACE_CACHE_ENTRIES:
                self._cache.popitem(last=False)
        self._cache.move_to_end(who)
        scope = cached[1]
        if scope is not None and len(scope) == 1:
            return scope[0]
        raise ToolError(
            "namespace is required: this API key may use "
            + ("every namespace" if scope is None else f"several namespaces ({', '.join(scope)})")
            + "; pass namespace=..."
        )


def build_server(backend: Backend) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("hindsight", instructions=INSTRUCTIONS, version=__version__)
    namespaces = Namespaces()

    async def target(ctx: Context, namespace: str | None) -> tuple[Client, str]:
        client = await backend.client(ctx)
        who = backend.identity(ctx)
        return client, await namespaces.resolve(client, who, namespace, backend, ctx)

    def tool(
        name: str,
        description: str,
        *,
        read_only: bool = False,
        destructive: bool = False,
        former: str | None = None,
    ) -> Callable[[Callable[..., Any]], Any]:
        # MCP's default for a tool that writes is "destructive": say which ones are not
        hints = ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=None if read_only else destructive,
            open_world_hint=False,
        )

        def register(fn: Callable[..., Any]) -> Any:
            registered = server.tool(name=name, description=description, annotations=hints)(fn)
            if former:  # clients configured with the old name keep working
                server.tool(
                    name=former,
                    description=f"The former name of {name}, which it calls. {description}",
                    annotations=hints,
                )(fn)
            return registered

        return register

    # tools/list answers in the order registered: long-term memory first, as always
    long_term.register(tool, target)
    governance.register(tool, target)
    working_memory.register(tool, target)
    return server
