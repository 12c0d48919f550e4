"""The FastAPI application: REST under /v1, probes, docs."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from hindsight import __version__, core, ui
from hindsight.api import docs, errors
from hindsight.api.body_limit import BodyLimit
from hindsight.api.routes import (
    extraction,
    health,
    jobs,
    lifecycle,
    memories,
    metrics as metrics_route,
    namespaces,
    overview,
    recall,
    sessions,
)
from hindsight.config import Settings
from hindsight.mcp.http import McpEndpoint
from hindsight.observability import metrics
from hindsight.observability.http import RequestObserver
from hindsight.services.auth import Principal

log = logging.getLogger(__name__)

DESCRIPTION = """
Memory for LLM agents. **Working memory** holds the steps of a running session;
**long-term memory** holds key/value claims whose confidence grows each time they are
observed again, recalled by relevance × confidence × log(access), with every score explained.

Every `/v1` call needs `Authorization: Bearer <api key>`. Errors always look like
`{"error": {"code": ..., "message": ..., "details": ...}}`, and the message says what to fix.
"""


def create_app(settings: Settings, *, database_url: str, redis_url: str | None) -> FastAPI:
    """An app that connects to the given stores when it starts (the schema must exist)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hindsight = await core.start(settings, database_url=database_url, redis_url=redis_url)
        app.state.hindsight = hindsight
        try:
            async with mcp.running():
                yield
        finally:
            await hindsight.aclose()
            metrics.worker_stopped()

    app = FastAPI(
        title="Hindsight",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served offline by docs.install
        redoc_url=None,
        # FastAPI's own OpenTelemetry asked, on every request, whether a provider had been
        # set up (about 0.1 ms of a 5 ms recall); our metrics and logs are observability's
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestObserver)  # outermost: times and logs every request
    errors.install(app)
    docs.install(app)
    ui.install(app)
    app.include_router(health.router)
    app.include_router(memories.router)
    app.include_router(recall.router)
    app.include_router(sessions.router)
    app.include_router(extraction.router)
    app.include_router(jobs.router)
    app.include_router(lifecycle.router)
    app.include_router(overview.router)
    app.include_router(metrics_route.router)
    app.include_router(namespaces.router)

    async def authenticate(authorization: str | None, client: str | None) -> Principal:
        principal: Principal = await app.state.hindsight.auth.authenticate(authorization, client)
        return principal

    mcp = McpEndpoint(app, authenticate)
    # routes, not mounts: /mcp itself answers, without a redirect to /mcp/
    for path, endpoint in mcp.routes:
        app.router.add_route(path, endpoint, include_in_schema=False)  # type: ignore[arg-type]
    return app
