"""One ASGI middleware for every HTTP request: a request id (the client's `X-Request-ID`
when it is a sane token, else a new one; returned in the response), a `Server-Timing`
header (`timing`), the latency histogram per route template and status, and one log line
per request.

The route is the template (`/v1/namespaces/{namespace}/recall`), never the path, so the
metric's series stay few and ids or namespaces never become label values.
"""

from __future__ import annotations

import logging
import os
import re
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hindsight.observability import metrics, timing
from hindsight.observability.logs import request_id

HEADER = b"x-request-id"
_VALID = re.compile(rb"^[A-Za-z0-9._:@/+=-]{1,128}$")
# probes and scrapes come every few seconds: logged at debug level only
_QUIET = frozenset({"/healthz", "/readyz", "/metrics"})

access = logging.getLogger("hindsight.access")


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    if scope.get("endpoint") is not None or scope.get("root_path", "") != "":
        return "other"  # a mount or a plain route (static files, MCP)
    return "unmatched"


def _given_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == HEADER:
            return value.decode("ascii") if _VALID.fullmatch(value) else None
    return None


class RequestObserver:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _given_id(scope) or os.urandom(16).hex()  # as random as uuid4, cheaper
        token = request_id.set(rid)
        timings = timing.start()
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                headers.append((HEADER, rid.encode("ascii")))
                headers.append((timing.HEADER, timing.header(time.perf_counter() - started)))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            route = _route(scope)
            metrics.HTTP_SECONDS.labels(scope["method"], route, str(status)).observe(seconds)
            self._log(scope, route, status, seconds, rid)
            timing.reset(timings)
            request_id.reset(token)

    @staticmethod
    def _log(scope: Scope, route: str, status: int, seconds: float, rid: str) -> None:
        level = logging.DEBUG if scope["path"] in _QUIET and status < 400 else logging.INFO
        if not access.isEnabledFor(level):
            return
        state: dict[str, Any] = scope.get("state") or {}
        principal = state.get("principal")
        params: dict[str, Any] = scope.get("path_params") or {}
        access.log(
            level,
            "%s %s %d %.1fms",
            scope["method"],
            route,
            status,
            seconds * 1000,
            extra={
                "request_id": rid,
                "method": scope["method"],
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
                "key_name": getattr(principal, "name", None),
                "namespace": params.get("namespace"),
            },
        )
