"""Refuse a NUL character in a request's path or query string with our usual 422.

PostgreSQL cannot store or compare a NUL in text, and psycopg raises on one before the
statement is sent: a NUL in any query parameter or path segment used to be a 500. Bodies
are checked field by field by the wire models (`hindsight.wire.fields`).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight.api.body_limit import send_json

_BODY = json.dumps(
    {
        "error": {
            "code": "invalid_input",
            "message": "the path or query string holds a NUL (%00) character; remove it",
            "details": None,
        }
    }
).encode()


def _has_nul(scope: Scope) -> bool:
    # HTTP refuses a raw NUL in the request line, so one only ever arrives percent-encoded:
    # a byte search of the raw path and query, with nothing decoded on every request
    raw_path: bytes = scope.get("raw_path") or scope.get("path", "").encode()
    return b"%00" in raw_path or b"%00" in scope.get("query_string", b"")


class NulGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_nul(scope):
            await self.app(scope, receive, send)
            return
        await send_json(send, 422, _BODY)
