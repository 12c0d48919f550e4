"""Who a request comes from, for the REST routes and the MCP endpoint alike."""

from __future__ import annotations

from starlette.types import Scope

# Set in the scope of the requests MCP tools make to the app in-process (hindsight.mcp.http).
INTERNAL = "hindsight.internal"


def client_address(scope: Scope) -> str | None:
    """Whom a request's rate limit is counted against; None for the calls MCP tools make to
    the app in-process (the MCP request that caused them was counted already)."""
    if scope.get(INTERNAL):
        return None
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
