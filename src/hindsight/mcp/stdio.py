"""`hindsight mcp`: MCP over stdio, for desktop clients (Claude Desktop, Cursor ...).

Every tool call goes through one client: the SDK's, to a running Hindsight service, or the
services started inside this process (`hindsight.server.in_process`); `hindsight mcp`
chooses which.
"""

from __future__ import annotations

import httpx
from mcp.server.mcpserver import Context

from hindsight.mcp.registration import Client
from hindsight.mcp.tools import build_server


class ClientBackend:
    """Every tool call goes through one client, with the key the bridge was given."""

    def __init__(self, client: Client, namespace: str | None) -> None:
        self._client = client
        self._namespace = namespace

    async def client(self, ctx: Context) -> Client:
        return self._client

    def identity(self, ctx: Context) -> bytes:
        return b"stdio"  # one bridge, one key

    def default_namespace(self, ctx: Context) -> str | None:
        return self._namespace

    def pinned_namespace(self, ctx: Context) -> str | None:
        return None


def reachable(url: str) -> bool:
    try:
        return httpx.get(url.rstrip("/") + "/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


async def serve(client: Client, namespace: str | None) -> None:
    await build_server(ClientBackend(client, namespace)).run_stdio_async()
