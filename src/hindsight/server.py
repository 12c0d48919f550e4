"""The one place the service is put together: REST under /v1 with its probes and docs, MCP
over HTTP, and the debug panel, in one FastAPI app over the running services.

`create_app` is what `hindsight serve` runs; `app_from_env` is the factory its worker
processes start (`uvicorn --factory hindsight.server:app_from_env`): `serve --workers N`
starts any embedded servers once, then hands their URLs to the workers through
HINDSIGHT_DATABASE_URL and HINDSIGHT_REDIS_URL. `in_process` is the whole service inside
the caller's process, its services called directly (`hindsight mcp` with no service
running).
"""

from __future__ import annotations

import gc
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from pydantic import SecretStr

from hindsight import __version__, core, ui
from hindsight.api import rest
from hindsight.api.body_limit import BodyLimit
from hindsight.api.nul_guard import NulGuard
from hindsight.api.shedding import LoadShedder
from hindsight.config import Settings
from hindsight.errors import ConfigurationError
from hindsight.mcp.http import McpEndpoint
from hindsight.mcp.service_client import ServiceClient
from hindsight.observability import logs, metrics
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
        # What start-up made (modules, routes, models) lives as long as the worker: out of
        # the collector's generations, a full collection does not walk it again each time.
        gc.freeze()
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
    app.add_middleware(NulGuard)
    app.add_middleware(
        LoadShedder,
        max_in_flight=settings.max_in_flight,
        queue_wait_ms=settings.queue_wait_ms,
        queue_congested_wait_ms=settings.queue_congested_wait_ms,
    )
    app.add_middleware(RequestObserver)  # outermost: times and logs every request
    rest.install(app)
    ui.install(app)

    async def authenticate(authorization: str | None, client: str | None) -> Principal:
        principal: Principal = await app.state.hindsight.auth.authenticate(authorization, client)
        return principal

    mcp = McpEndpoint(lambda: app.state.hindsight, authenticate)
    # routes, not mounts: /mcp itself answers, without a redirect to /mcp/
    for path, endpoint in mcp.routes:
        app.router.add_route(path, endpoint, include_in_schema=False)  # type: ignore[arg-type]
    return app


def app_from_env() -> FastAPI:
    settings = Settings()
    logs.configure(settings)
    if not settings.database_url:
        raise ConfigurationError("worker started without HINDSIGHT_DATABASE_URL")
    return create_app(settings, database_url=settings.database_url, redis_url=settings.redis_url)


@asynccontextmanager
async def in_process(
    settings: Settings, url: str, redis_url: str | None, api_key: str | None
) -> AsyncIterator[ServiceClient]:
    """The whole service inside this process, its services called directly as the key's
    principal: no app, no socket, no serialization."""
    # Without a key of its own, the caller gets a one-off admin key nobody else knows.
    bootstrap = settings.api_key.get_secret_value() if settings.api_key else None
    key = api_key or bootstrap or "hs_local_" + secrets.token_urlsafe(24)
    if not settings.api_key and not api_key:
        settings = settings.model_copy(update={"api_key": SecretStr(key)})
    hindsight = await core.start(settings, database_url=url, redis_url=redis_url)
    try:
        # None: a call this process makes to itself is not rate limited
        principal = await hindsight.auth.authenticate(f"Bearer {key}", None)
        yield ServiceClient(hindsight, principal)
    finally:
        await hindsight.aclose()
