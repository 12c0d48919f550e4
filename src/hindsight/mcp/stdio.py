"""`hindsight mcp`: MCP over stdio, for desktop clients (Claude Desktop, Cursor ...).

It bridges to a Hindsight service: the one at --url / HINDSIGHT_URL, or the one already
answering on this machine's configured port. When none runs, it serves from its own
process instead: the same stores (embedded ones in HINDSIGHT_DATA_DIR unless configured),
the same app, reached in-process, so a desktop client needs nothing else started.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from mcp.server.mcpserver import Context
from pydantic import SecretStr

from hindsight import core
from hindsight.client import AsyncHindsight
from hindsight.config import Settings
from hindsight.mcp.tools import build_server
from hindsight.runtime.stores import serving_stores


class ClientBackend:
    """Every tool call goes through one client, with the key the bridge was given."""

    def __init__(self, client: AsyncHindsight, namespace: str | None) -> None:
        self._client = client
        self._namespace = namespace

    async def client(self, ctx: Context) -> AsyncHindsight:
        return self._client

    def identity(self, ctx: Context) -> bytes:
        return b"stdio"  # one bridge, one key

    def default_namespace(self, ctx: Context) -> str | None:
        return self._namespace

    def pinned_namespace(self, ctx: Context) -> str | None:
        return None


def reachable(url: str) -> bool:
    try:
        return httpx.get(url.rstrip("/") + "/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


async def serve(client: AsyncHindsight, namespace: str | None) -> None:
    async with client:
        await build_server(ClientBackend(client, namespace)).run_stdio_async()


@asynccontextmanager
async def in_process(
    settings: Settings, url: str, redis_url: str | None, api_key: str | None
) -> AsyncIterator[AsyncHindsight]:
    """The whole service inside this process, reached without a socket."""
    from hindsight.api.app import create_app

    # Without a key of its own, the bridge gets a one-off admin key nobody else knows.
    bootstrap = settings.api_key.get_secret_value() if settings.api_key else None
    key = api_key or bootstrap or "hs_local_" + secrets.token_urlsafe(24)
    if not settings.api_key and not api_key:
        settings = settings.model_copy(update={"api_key": SecretStr(key)})
    app = create_app(settings, database_url=url, redis_url=redis_url)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        yield AsyncHindsight("http://hindsight.local", key, transport=transport, max_retries=0)


def run(settings: Settings, *, url: str | None, api_key: str | None, namespace: str | None) -> None:
    import asyncio

    key = api_key or (settings.api_key.get_secret_value() if settings.api_key else None)
    local = f"http://{settings.host}:{settings.port}"
    if url or reachable(local):
        asyncio.run(serve(AsyncHindsight(url or local, key), namespace))
        return
    with serving_stores(settings) as stores:
        if settings.auto_migrate:
            asyncio.run(core.migrate_for(settings, stores.database_url))

        async def go() -> None:
            async with in_process(
                settings, stores.database_url, stores.redis_url, api_key
            ) as client:
                await build_server(ClientBackend(client, namespace)).run_stdio_async()

        asyncio.run(go())
