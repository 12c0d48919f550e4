"""Refuse request bodies over the limit with our usual JSON error, before reading them."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


async def send_json(send: Send, status: int, body: bytes, *, close: bool = False) -> None:
    """A whole JSON response, sent from middleware that answers before the app does."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


def too_large(limit: int | None, path: str) -> str:
    """What to do about a body over the limit depends on what was sent."""
    if path.endswith(":batch") or path.endswith(":import"):
        fix = "send fewer memories per batch"
    elif "/steps" in path:
        fix = "send a shorter step (or put the bulk elsewhere and store a reference)"
    else:
        fix = "send a smaller body"
    most = f"at most {limit:,} bytes" if limit is not None else "see"
    return f"request body too large ({most} HINDSIGHT_MAX_BODY_BYTES); {fix}"


def _body(limit: int, path: str) -> bytes:
    return json.dumps(
        {
            "error": {
                "code": "payload_too_large",
                "message": too_large(limit, path),
                "details": {"max_bytes": limit},
            }
        }
    ).encode()


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _refuse(self, scope: Scope, send: Send) -> None:
        # the rest of the body is never read: close rather than leave it in the socket
        await send_json(send, 413, _body(self.max_bytes, scope.get("path", "")), close=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(scope, send)
                return
        seen = 0
        started = False
        exceeded = False

        async def counting_receive() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    exceeded = True
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            # Whatever the app makes of the aborted read (FastAPI answers 400), the client
            # gets the 413 that explains it.
            nonlocal started
            if exceeded:
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await self._refuse(scope, send)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                started = True
                await self._refuse(scope, send)
