"""MCP over HTTP inside the app, behind the same API keys as REST.

- `/mcp`: streamable HTTP, stateless. Every request stands alone (no session lives in a
  worker's memory), so any worker of any replica can answer it.
- `/mcp/{namespace}`: the same, with every tool working in that namespace only.
- `/sse` (+ `/messages/`): the legacy SSE transport, for clients configured with an SSE URL.
  Its session lives in the worker that holds the event stream.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight.callers import INTERNAL, client_address
from hindsight.client import AsyncHindsight
from hindsight.errors import HindsightError, RateLimited, Unauthorized
from hindsight.mcp.tools import build_server
from hindsight.services.auth import Principal, bearer_token, hash_key
from hindsight.services.names import check_namespace

PATH = "/mcp"
SSE_PATH = "/sse"
SSE_MESSAGES_PATH = "/messages/"
# Where a request's pinned namespace travels from the gate to the tools.
NAMESPACE_STATE = "hindsight_namespace"
# In-process clients kept, one per key; the least recently used go first.
CLIENTS_MAX = 1000

Authenticate = Callable[[str | None, str | None], Awaitable[Principal]]


class _Internal:
    """Marks the requests tools make to the app, so they are not rate limited twice."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[INTERNAL] = True
        await self.app(scope, receive, send)


def _request_scope(ctx: Context) -> Scope:
    request = ctx.request_context.request
    scope: Scope = getattr(request, "scope", None) or {}
    return scope


class InProcessBackend:
    """Tool calls become REST calls to this very app, in-process, with the caller's key."""

    def __init__(self, app: ASGIApp) -> None:
        self._transport = httpx.ASGITransport(app=_Internal(app))
        # By the key's digest: variants of one header share a client, and the raw key is
        # never a dictionary key that outlives the request.
        self._clients: OrderedDict[bytes, AsyncHindsight] = OrderedDict()

    def _key(self, ctx: Context) -> str:
        headers = ctx.headers or {}
        try:
            return bearer_token(headers.get("authorization"))
        except Unauthorized as exc:  # the gate let it through, so this is not expected
            raise RuntimeError("an MCP request reached a tool without a key") from exc

    def identity(self, ctx: Context) -> bytes:
        return hash_key(self._key(ctx))

    async def client(self, ctx: Context) -> AsyncHindsight:
        key = self._key(ctx)
        digest = hash_key(key)
        client = self._clients.get(digest)
        if client is None:
            client = AsyncHindsight(
                "http://hindsight.internal", key, transport=self._transport, max_retries=0
            )
            self._clients[digest] = client
            # In-process clients hold no sockets: one dropped while a call is in flight
            # finishes that call and is then collected.
            while len(self._clients) > CLIENTS_MAX:
                self._clients.popitem(last=False)
        self._clients.move_to_end(digest)
        return client

    def default_namespace(self, ctx: Context) -> str | None:
        return self.pinned_namespace(ctx)

    def pinned_namespace(self, ctx: Context) -> str | None:
        state = _request_scope(ctx).get("state") or {}
        pinned = state.get(NAMESPACE_STATE)
        return str(pinned) if pinned else None

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


async def _refuse(send: Send, exc: HindsightError) -> None:
    body = json.dumps(
        {"error": {"code": exc.code, "message": exc.message, "details": None}}
    ).encode()
    headers = [(b"content-type", b"application/json")]
    if exc.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if isinstance(exc, RateLimited):
        headers.append((b"retry-after", str(exc.retry_after).encode()))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpGate:
    """Refuses a request without a valid key before MCP sees it, in the same error shape as
    REST. What it lets through carries the key's digest as the MCP SDK's user, which binds
    an MCP session to the key that opened it: another key naming that session is refused."""

    def __init__(self, inner: ASGIApp, authenticate: Authenticate) -> None:
        self.inner = inner
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # latin-1, as Starlette reads headers: any bytes decode, and a key that is not
            # ASCII is refused as malformed (401) rather than failing to decode (500).
            authorization = next(
                (v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"),
                None,
            )
            try:
                principal = await self.authenticate(authorization, client_address(scope))
                namespace = (scope.get("path_params") or {}).get("namespace")
                if namespace is not None:
                    principal.require(check_namespace(namespace))
                    scope.setdefault("state", {})[NAMESPACE_STATE] = namespace
            except HindsightError as exc:
                await _refuse(send, exc)
                return
            digest = hash_key(bearer_token(authorization)).hex()
            scope["user"] = AuthenticatedUser(
                AccessToken(token=digest, client_id=digest, scopes=[])
            )
        await self.inner(scope, receive, send)


class McpEndpoint:
    """The MCP routes: build once with the app, run the session manager in the lifespan."""

    def __init__(self, app: ASGIApp, authenticate: Authenticate) -> None:
        self.backend = InProcessBackend(app)
        self.server = build_server(self.backend)
        # The app is reached through whatever host and port it is served on; the API key
        # is what guards it, not the Host header.
        self.server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True, host="0.0.0.0"
        )
        streamable = McpGate(self.server.session_manager.handle_request, authenticate)
        sse = McpGate(
            self.server.sse_app(sse_path=SSE_PATH, message_path=SSE_MESSAGES_PATH, host="0.0.0.0"),
            authenticate,
        )
        self.routes: list[tuple[str, ASGIApp]] = [
            (PATH, streamable),
            (PATH + "/{namespace}", streamable),
            (SSE_PATH, sse),
            (SSE_MESSAGES_PATH, sse),
        ]

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            try:
                yield
            finally:
                await self.backend.aclose()
