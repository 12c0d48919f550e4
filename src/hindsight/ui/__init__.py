"""The debug panel at /ui: static HTML, CSS and ES modules shipped in the package (no
build step, nothing at run time but this service). The page holds the API key in the
tab's sessionStorage and sends it as a Bearer header, so there are no cookies and no
CSRF surface, and every action is a REST call with that key's scopes."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PATH = "/ui"

# The panel loads its own files only and is never framed: a memory value that slipped
# past the DOM helpers (text only, never HTML) still could not load or send anything, and
# no other site can overlay the panel to steal a click.
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


class _Secured:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def static_dir() -> Path:
    return Path(str(files("hindsight.ui") / "static"))


def install(app: FastAPI) -> None:
    @app.get(PATH, include_in_schema=False)
    async def panel() -> RedirectResponse:
        return RedirectResponse(f"{PATH}/")

    app.mount(PATH, _Secured(StaticFiles(directory=static_dir(), html=True)), name="ui")
