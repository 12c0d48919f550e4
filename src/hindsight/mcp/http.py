"""MCP over streamable HTTP at /mcp, inside the app, behind the same API keys as REST."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp.server.mcpserver import Context
from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight.client import AsyncHindsight
from hindsight.errors import HindsightError
from hindsight.mcp.tools import build_server

PATH = "/mcp"
# An idle MCP session (older clients keep one per connection) survives this long.
SESSION_IDLE_SECONDS = 12 * 3600


class InProcessBackend:
    """Tool calls become REST calls to this very app, in-process, with the caller's key."""

    def __init__(self, app: ASGIApp) -> None:
        self._transport = httpx.ASGITransport(app=app)
        self._clients: dict[str, AsyncHindsight] = {}

    async def client(self, ctx: Context) -> AsyncHindsight:
        headers = ctx.headers or {}
        authorization = headers.get("authorization", "")
        client = self._clients.get(authorization)
        if client is None:
            if len(self._clients) > 1000:
                for old in self._clients.values():
                    await old.aclose()
                self._clients.clear()
            key = authorization.partition(" ")[2]
            client = AsyncHindsight(
                "http://hindsight.internal", key, transport=self._transport, max_retries=0
            )
            self._clients[authorization] = client
        return client

    def default_namespace(self) -> str | None:
        return None

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


class McpGate:
    """Refuses a request without a valid key before the MCP session sees it (401), in the
    same error shape as REST."""

    def __init__(self, inner: ASGIApp, authenticate: Any) -> None:
        self.inner = inner
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            try:
                await self.authenticate(headers.get("authorization"))
            except HindsightError as exc:
                body = json.dumps(
                    {"error": {"code": exc.code, "message": exc.message, "details": None}}
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": exc.status,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.inner(scope, receive, send)


class McpEndpoint:
    """The /mcp mount: build once with the app, run its session manager in the lifespan."""

    def __init__(self, app: ASGIApp, authenticate: Any) -> None:
        self.backend = InProcessBackend(app)
        self.server = build_server(self.backend)
        inner = self.server.streamable_http_app(
            streamable_http_path=PATH,
            session_idle_timeout=SESSION_IDLE_SECONDS,
            # The app is reached through whatever host and port it is served on; the
            # API key is what guards it, not the Host header.
            host="0.0.0.0",
        )
        self.asgi = McpGate(inner, authenticate)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            try:
                yield
            finally:
                await self.backend.aclose()
