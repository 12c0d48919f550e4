"""What a group of MCP tools is registered with: `Tool` declares one on the server (its
name, description and hints), `Target` resolves a call's client and namespace.

A tool's client is the services in this process (MCP over HTTP, `ServiceClient`) or a
Hindsight service reached through the SDK (the stdio bridge); both answer the same calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp.server.mcpserver import Context

from hindsight.client import AsyncHindsight
from hindsight.mcp.service_client import ServiceClient

Client = AsyncHindsight | ServiceClient
Target = Callable[[Context, str | None], Awaitable[tuple[Client, str]]]


class Tool(Protocol):
    def __call__(
        self,
        name: str,
        description: str,
        *,
        read_only: bool = False,
        destructive: bool = False,
        former: str | None = None,  # an older name the tool also answers to
    ) -> Callable[[Callable[..., Any]], Any]: ...
