"""`hindsight serve` (the REST API, MCP over HTTP, docs and panel) and `hindsight mcp` (MCP
over stdio), with the admin key a fresh install is given on its first `serve`."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import click

from hindsight import __version__, core
from hindsight.cli.common import configure_logging, friendly, load_settings, service
from hindsight.config import Settings
from hindsight.runtime.stores import serving_stores
from hindsight.services.roles import Role

log = logging.getLogger("hindsight")


@contextmanager
def _signals_end_serving() -> Iterator[None]:
    """uvicorn re-raises SIGINT/SIGTERM after its graceful shutdown, which would kill us
    before the embedded stores stop (Redis's AOF flushed, PostgreSQL shut down cleanly).
    With these no-op handlers underneath uvicorn's, that re-raised signal lands here and
    the shutdown finishes."""
    previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _bootstrap_key(settings: Settings, url: str) -> None:
    """A fresh install with no key configured gets one admin key, shown once and saved.
    When every key has been revoked, a new one is saved but not shown: by then this output
    may well be collected in logs."""
    if settings.api_key is not None:
        return
    async with service(settings, url) as hs:
        if await hs.keys.count_active() > 0:
            return
        all_revoked = bool(await hs.keys.list_keys())
        # a revoked key keeps its name, so the new one needs another
        name = f"admin-{datetime.now(UTC):%Y%m%d-%H%M%S}" if all_revoked else "admin"
        key, _ = await hs.keys.create(name, namespaces=None, role=Role.ADMIN)
    path = _save_key(settings.data_dir, key)
    if all_revoked:
        click.echo(
            f"Every API key was revoked: created a new admin API key and saved it to {path} "
            "(readable by this user only; not shown here).",
            err=True,
        )
        return
    click.echo(
        f"Created an admin API key (also saved to {path}):\n\n    {key}\n\n"
        "Clients send it as `Authorization: Bearer <key>`. Create scoped keys with "
        "`hindsight keys create`.",
        err=True,
    )


def _save_key(directory: Path, key: str) -> Path:
    """Write the key to `directory/admin-api-key` (mode 0600) through a new file of its own
    (O_EXCL | O_NOFOLLOW) renamed into place: a symlink or file planted at that path is
    replaced, never written through."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / "admin-api-key"
    fresh = directory / f".admin-api-key.{secrets.token_hex(8)}"
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(key + "\n")
        os.replace(fresh, path)
    except BaseException:
        fresh.unlink(missing_ok=True)
        raise
    return path


def _check_port_free(host: str, port: int) -> None:
    """Before anything is started or created (stores, an admin key): a port in use would
    otherwise end the start-up with uvicorn's bare `[Errno 98]`. Bound as uvicorn binds it
    (SO_REUSEADDR), so a port only in TIME_WAIT is not taken for busy."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            other = 8081 if port == 8080 else port + 1
            raise click.ClickException(
                f"cannot listen on {host}:{port}: {exc.strerror or exc} (is another "
                f"`hindsight serve` or another program using it?). Choose another port with "
                f"`hindsight serve --port {other}` or HINDSIGHT_PORT={other}."
            ) from None


@click.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default 8080).")
@click.option("--workers", type=int, default=None, help="Worker processes (default 1).")
@friendly
def serve(host: str | None, port: int | None, workers: int | None) -> None:
    """Serve the REST API, MCP and docs, starting embedded stores when none is configured."""
    import uvicorn

    from hindsight.observability import metrics
    from hindsight.server import create_app

    settings = load_settings(host=host, port=port, workers=workers)
    configure_logging(settings)
    _check_port_free(settings.host, settings.port)
    with serving_stores(settings) as urls, _signals_end_serving():
        if settings.auto_migrate:
            asyncio.run(core.migrate_for(settings, urls.database_url))
        asyncio.run(_bootstrap_key(settings, urls.database_url))
        log.info(
            "Hindsight %s on http://%s:%d (docs at /docs, panel at /ui)",
            __version__,
            settings.host,
            settings.port,
        )
        if settings.workers == 1:
            app = create_app(settings, database_url=urls.database_url, redis_url=urls.redis_url)
            config = uvicorn.Config(
                app,
                host=settings.host,
                port=settings.port,
                log_level=settings.log_level,
                log_config=None,  # our handlers (observability.logs) format its lines too
                access_log=False,
                timeout_graceful_shutdown=10,
            )
            uvicorn.Server(config).run()
        else:
            os.environ["HINDSIGHT_DATABASE_URL"] = urls.database_url
            if urls.redis_url:
                os.environ["HINDSIGHT_REDIS_URL"] = urls.redis_url
            # each worker counts in files here; a scrape of any worker sums them all
            with tempfile.TemporaryDirectory(prefix="hindsight-metrics-") as scratch:
                metrics.prepare_multiprocess_dir(Path(metrics.multiprocess_dir() or scratch))
                uvicorn.run(
                    "hindsight.server:app_from_env",
                    factory=True,
                    host=settings.host,
                    port=settings.port,
                    workers=settings.workers,
                    log_level=settings.log_level,
                    log_config=None,  # each worker sets up our logging (server.app_from_env)
                    access_log=False,
                    timeout_graceful_shutdown=10,
                    # a worker must answer uvicorn's ping within this from its start; its
                    # imports alone took 15 s on a busy 2-core machine, and 5 s (the default)
                    # had it killed and restarted forever
                    timeout_worker_healthcheck=60,
                )


@click.command()
@click.option(
    "--url",
    default=None,
    envvar="HINDSIGHT_URL",
    help="Hindsight service to bridge to (default: the local one, started here if "
    "it is not running).",
)
@click.option("--api-key", default=None, help="Key to act with (default HINDSIGHT_API_KEY).")
@click.option("--namespace", default=None, help="Namespace for tool calls that name none.")
@friendly
def mcp(url: str | None, api_key: str | None, namespace: str | None) -> None:
    """Serve MCP over stdio (for Claude Desktop, Cursor and other desktop clients).

    It bridges to the service at --url / HINDSIGHT_URL, or the one already answering on
    this machine's configured port. When none runs, it serves from its own process
    instead: the same stores (embedded ones in HINDSIGHT_DATA_DIR unless configured), the
    same services, called in-process, so a desktop client needs nothing else started."""
    from hindsight.client import AsyncHindsight
    from hindsight.mcp import stdio
    from hindsight.server import in_process

    settings = load_settings()
    # stdout carries the protocol: every log line goes to stderr
    logging.basicConfig(
        level="WARNING", stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    key = api_key or (settings.api_key.get_secret_value() if settings.api_key else None)
    local = f"http://{settings.host}:{settings.port}"
    if url or stdio.reachable(local):

        async def bridge() -> None:
            async with AsyncHindsight(url or local, key) as client:
                await stdio.serve(client, namespace)

        asyncio.run(bridge())
        return
    with serving_stores(settings) as stores:
        if settings.auto_migrate:
            asyncio.run(core.migrate_for(settings, stores.database_url))

        async def go() -> None:
            async with in_process(
                settings, stores.database_url, stores.redis_url, api_key
            ) as client:
                await stdio.serve(client, namespace)

        asyncio.run(go())
