"""MCP over HTTP inside the app, behind the same API keys as REST.

- `/mcp`: streamable HTTP, stateless. Every request stands alone (no session lives in a
  worker's memory), so any worker of any replica can answer it.
- `/mcp/{namespace}`: the same, with every tool working in that namespace only.
- `/sse` (+ `/messages/`): the legacy SSE transport, for clients configured with an SSE URL.
  Its session lives in the worker that holds the event stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight.callers import client_address
from hindsight.core import Hindsight
from hindsight.errors import HindsightError, RateLimited
from hindsight.mcp.service_client import ServiceClient
from hindsight.mcp.tools import build_server
from hindsight.services.auth import Principal, bearer_token, hash_key
from hindsight.services.names import check_namespace

PATH = "/mcp"
SSE_PATH = "/sse"
SSE_MESSAGES_PATH = "/messages/"
# What travels from the gate to the tools in the request's state: who the caller is (the
# principal, and its key's digest), and the namespace the endpoint pins, if any. The
# principal sits where REST's routes put theirs, so the access log names MCP's callers too.
PRINCIPAL_STATE = "principal"
DIGEST_STATE = "hindsight_key_digest"
NAMESPACE_STATE = "hindsight_namespace"

Authenticate = Callable[[str | None, str | None], Awaitable[Principal]]


def _request_scope(ctx: Context) -> Scope:
    request = ctx.request_context.request
    scope: Scope = getattr(request, "scope", None) or {}
    return scope


def _state(ctx: Context) -> dict[str, Any]:
    state: dict[str, Any] = _request_scope(ctx).get("state") or {}
    return state


class ServiceBackend:
    """Tool calls go to the services in this process, as the principal the gate let in."""

    def __init__(self, core: Callable[[], Hindsight]) -> None:
        self._core = core

    async def client(self, ctx: Context) -> ServiceClient:
        principal = _state(ctx).get(PRINCIPAL_STATE)
        if not isinstance(principal, Principal):  # the gate lets nothing through without one
            raise RuntimeError("an MCP request reached a tool without a principal")
        return ServiceClient(self._core(), principal)

    def identity(self, ctx: Context) -> bytes:
        digest: bytes = _state(ctx)[DIGEST_STATE]
        return digest

    def default_namespace(self, ctx: Context) -> str | None:
        return self.pinned_namespace(ctx)

    def pinned_namespace(self, ctx: Context) -> str | None:
        pinned = _state(ctx).get(NAMESPACE_STATE)
        return str(pinned) if pinned else None


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
            except HindsightError as exc:
                await _refuse(send, exc)
                return
            digest = hash_key(bearer_token(authorization))
            state = scope.setdefault("state", {})
            state[PRINCIPAL_STATE] = principal
            state[DIGEST_STATE] = digest
            if namespace is not None:
                state[NAMESPACE_STATE] = namespace
            scope["user"] = AuthenticatedUser(
                AccessToken(token=digest.hex(), client_id=digest.hex(), scopes=[])
            )
        await self.inner(scope, receive, send)


class McpEndpoint:
    """The MCP routes: build once with the app, run the session manager in the lifespan."""

    def __init__(self, core: Callable[[], Hindsight], authenticate: Authenticate) -> None:
        self.server = build_server(ServiceBackend(core))
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
            yield
