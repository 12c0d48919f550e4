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

PATH = "/ui"


def static_dir() -> Path:
    return Path(str(files("hindsight.ui") / "static"))


def install(app: FastAPI) -> None:
    @app.get(PATH, include_in_schema=False)
    async def panel() -> RedirectResponse:
        return RedirectResponse(f"{PATH}/")

    app.mount(PATH, StaticFiles(directory=static_dir(), html=True), name="ui")
