"""What a group of MCP tools is registered with: `Tool` declares one on the server (its
name, description and hints), `Target` resolves a call's client and namespace."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp.server.mcpserver import Context

from hindsight.client import AsyncHindsight

Target = Callable[[Context, str | None], Awaitable[tuple[AsyncHindsight, str]]]


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
