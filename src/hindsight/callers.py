"""Who a request comes from, for the REST routes and the MCP endpoint alike."""

from __future__ import annotations

from starlette.types import Scope


def client_address(scope: Scope) -> str:
    """Whom a request's rate limit is counted against."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
