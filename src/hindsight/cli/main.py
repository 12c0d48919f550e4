"""`hindsight`: serve, migrate, manage keys, run maintenance."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from hindsight import __version__, core
from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.errors import HindsightError
from hindsight.runtime.stores import database_url, serving_stores
from hindsight.services.roles import ROLES, Role

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger("hindsight")


def load_settings(**overrides: Any) -> Settings:
    try:
        settings = Settings()
    except ValidationError as exc:
        lines = [
            f"  HINDSIGHT_{'_'.join(str(p) for p in e['loc']).upper() or '?'}: {e['msg']}"
            for e in exc.errors()
        ]
        raise click.ClickException("invalid configuration:\n" + "\n".join(lines)) from None
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return settings.model_copy(update=overrides) if overrides else settings


def friendly(func: F) -> F:
    """Turn our errors into one clear line and exit status 1, not a traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except HindsightError as exc:
            raise click.ClickException(exc.message) from None

    return wrapper  # type: ignore[return-value]


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


def _logging(settings: Settings) -> None:
    from hindsight.observability import logs

    logs.configure(settings)


@asynccontextmanager
async def _service(settings: Settings, url: str) -> AsyncIterator[core.Hindsight]:
    hindsight = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        yield hindsight
    finally:
        await hindsight.aclose()


@click.group()
@click.version_option(__version__, prog_name="hindsight")
def main() -> None:
    """Hindsight: memory for LLM agents.

    Configuration comes from HINDSIGHT_* environment variables (see the README). With no
    HINDSIGHT_DATABASE_URL / HINDSIGHT_REDIS_URL, embedded servers keep their data in
    HINDSIGHT_DATA_DIR.
    """


# --- serve ------------------------------------------------------------------------------


async def _bootstrap_key(settings: Settings, url: str) -> None:
    """A fresh install with no key configured gets one admin key, shown once and saved.
    When every key has been revoked, a new one is saved but not shown: by then this output
    may well be collected in logs."""
    if settings.api_key is not None:
        return
    async with _service(settings, url) as hs:
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


@main.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default 8080).")
@click.option("--workers", type=int, default=None, help="Worker processes (default 1).")
@friendly
def serve(host: str | None, port: int | None, workers: int | None) -> None:
    """Serve the REST API, MCP and docs, starting embedded stores when none is configured."""
    import uvicorn

    from hindsight.api.app import create_app
    from hindsight.observability import metrics

    settings = load_settings(host=host, port=port, workers=workers)
    _logging(settings)
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
                    "hindsight.api.asgi:app_from_env",
                    factory=True,
                    host=settings.host,
                    port=settings.port,
                    workers=settings.workers,
                    log_level=settings.log_level,
                    log_config=None,  # each worker sets up our logging (api.asgi)
                    access_log=False,
                    timeout_graceful_shutdown=10,
                    # a worker must answer uvicorn's ping within this from its start; its
                    # imports alone took 15 s on a busy 2-core machine, and 5 s (the default)
                    # had it killed and restarted forever
                    timeout_worker_healthcheck=60,
                )


# --- mcp --------------------------------------------------------------------------------


@main.command()
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
    """Serve MCP over stdio (for Claude Desktop, Cursor and other desktop clients)."""
    from hindsight.mcp import stdio

    settings = load_settings()
    # stdout carries the protocol: every log line goes to stderr
    logging.basicConfig(
        level="WARNING", stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    stdio.run(settings, url=url, api_key=api_key, namespace=namespace)


# --- db ---------------------------------------------------------------------------------


@main.group()
def db() -> None:
    """Schema migrations (Alembic)."""


@db.command()
@click.argument("revision", default="head")
@friendly
def upgrade(revision: str) -> None:
    """Upgrade the schema (default: to the newest revision)."""
    settings = load_settings()
    _logging(settings)
    with database_url(settings) as url:
        if revision == "head":
            asyncio.run(core.migrate_for(settings, url))
        else:
            migrate.upgrade(migrate.alembic_config(url), revision)
        click.echo(f"schema at {migrate.current_revision(url)}")


@db.command()
@click.argument("revision")
@friendly
def downgrade(revision: str) -> None:
    """Downgrade the schema to REVISION (`base` removes every Hindsight table)."""
    settings = load_settings()
    _logging(settings)
    with database_url(settings) as url:
        migrate.downgrade(migrate.alembic_config(url), revision)
        click.echo(f"schema at {migrate.current_revision(url) or 'base'}")


@db.command()
@friendly
def current() -> None:
    """Show the schema revision and the newest one this version knows."""
    settings = load_settings()
    with database_url(settings) as url:
        now = migrate.current_revision(url)
    head = migrate.head_revision()
    state = "up to date" if now == head else "behind: run `hindsight db upgrade`"
    click.echo(f"current: {now or 'none'}\nhead:    {head}\n{state}")


@db.command()
@friendly
def check() -> None:
    """Fail if the migrated schema and the code's models disagree (`alembic check`)."""
    settings = load_settings()
    with database_url(settings) as url:
        migrate.check(migrate.alembic_config(url))
    click.echo("models and schema agree")


# --- maintenance ------------------------------------------------------------------------


@main.group()
def maintenance() -> None:
    """Upkeep the service also runs by itself every few seconds."""


@maintenance.command()
@friendly
def purge() -> None:
    """Delete expired working memory and old recall-log rows; merge keyword statistics."""
    from hindsight.maintenance.jobs import run_once

    settings = load_settings()

    async def go(url: str) -> dict[str, Any]:
        async with _service(settings, url) as hs:
            report = await run_once(hs.pool, settings)
        return report.as_dict()

    with database_url(settings) as url:
        click.echo(json.dumps(asyncio.run(go(url))))


@maintenance.command()
@click.option("--namespace", default=None, help="Only this namespace (default: all).")
@click.option("--dry-run", is_flag=True, help="Print what would move, change nothing.")
@click.option(
    "--as-of",
    type=click.DateTime(formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d"]),
    default=None,
    help="Apply the rules as of this time (with --dry-run: what will have moved by then).",
)
@friendly
def lifecycle(namespace: str | None, dry_run: bool, as_of: datetime | None) -> None:
    """Apply each namespace's lifecycle policy now: expire, delete, archive, cool, demote,
    merge near-duplicates and enforce capacity. One line per memory moved, with the rule."""
    from hindsight.cli.lifecycle import run_pass

    settings = load_settings()
    if as_of is not None and as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=UTC)

    async def go(url: str) -> dict[str, Any]:
        async with _service(settings, url) as hs:
            report = await run_pass(hs, namespace=namespace, dry_run=dry_run, as_of=as_of)
        return report.as_dict()

    with database_url(settings) as url:
        click.echo(json.dumps(asyncio.run(go(url))), err=True)


# --- import -----------------------------------------------------------------------------


@main.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--namespace", default=None, help="For lines that name no namespace.")
@click.option(
    "--rebuild-indexes/--keep-indexes",
    default=None,
    help="Drop the search indexes and build them once at the end (default: when the "
    "import at least doubles the table).",
)
@friendly
def import_(path: str, namespace: str | None, rebuild_indexes: bool | None) -> None:
    """Import memories from a JSON-lines file (`-`: standard input; one memory per line,
    as in the batch call, with an optional "namespace"). New keys load at COPY speed;
    known keys are observed as usual (reinforced or superseded). A file made by
    `hindsight export` is restored as it was instead, into an empty namespace."""
    from hindsight.services.bulk_import import BulkImporter, ImportId, parse_line
    from hindsight.services.export import is_export

    settings = load_settings()

    # the file is read twice (checked whole first); standard input only once, so keep it
    piped = sys.stdin.readlines() if path == "-" else None

    def lines() -> Iterator[tuple[int, str]]:
        with contextlib.ExitStack() as stack:
            source = (
                piped
                if piped is not None
                else stack.enter_context(click.open_file(path, encoding="utf-8"))
            )
            for number, line in enumerate(source, start=1):
                if line.strip():
                    yield number, line

    first = next(lines(), (0, ""))[1]
    if is_export(first):  # an export of a namespace: restore it as it was
        from hindsight.cli.data import restore

        restore([line for _, line in lines()], namespace)
        return

    total = 0
    import_id = ImportId(namespace)
    for number, line in lines():  # check everything before writing anything
        parse_line(line, namespace, number)
        import_id.add(number, line)
        total += 1

    async def go(url: str) -> None:
        async with _service(settings, url) as hs:
            importer = BulkImporter(settings, hs.pool, hs.embedder, hs.memories)
            with click.progressbar(length=total, label="importing", file=sys.stderr) as bar:
                report = await importer.run(
                    (parse_line(line, namespace, n) for n, line in lines()),
                    total=total,
                    import_id=import_id.hexdigest(),
                    rebuild_indexes=rebuild_indexes,
                    progress=bar.update,
                )
        click.echo(
            json.dumps(
                {
                    "memories": total,
                    "copied": report.copied,
                    "observed": report.observed,
                    "outcomes": report.outcomes,
                    "indexes_rebuilt": report.indexes_rebuilt,
                    "already_written": report.already_written,
                    "finished_before": report.finished_before,
                }
            )
        )

    with database_url(settings) as url:
        asyncio.run(go(url))


# --- reembed ----------------------------------------------------------------------------


@main.command()
@click.option("--batch-size", type=int, default=256, show_default=True)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@friendly
def reembed(batch_size: int, yes: bool) -> None:
    """Re-embed every memory with the configured HINDSIGHT_EMBEDDING_* model.

    Works for a change of model and of vector width. The service may keep running on the
    old vectors meanwhile; restart it with the new settings when this finishes.
    """
    from hindsight.db.pool import open_pool
    from hindsight.embeddings import create_embedder
    from hindsight.services import reembed as job

    settings = load_settings()

    async def go(url: str) -> None:
        head, now = migrate.head_revision(), migrate.current_revision(url)
        if now != head:
            raise click.ClickException("the schema is behind: run `hindsight db upgrade` first")
        embedder = await create_embedder(settings)
        pool = await open_pool(settings, url)
        try:
            p = await job.plan(pool, embedder)
            click.echo(
                f"{p.memories} memories: {p.old_model} ({p.old_dimensions} dimensions) -> "
                f"{p.new_model} ({p.new_dimensions} dimensions)"
            )
            if not yes and not click.confirm("Re-embed them all?", default=True):
                raise click.Abort()
            with click.progressbar(length=p.memories, label="re-embedding", file=sys.stderr) as bar:
                total = await job.run(
                    pool,
                    embedder,
                    batch_size=batch_size,
                    index_memory_mb=settings.index_build_memory_mb,
                    progress=bar.update,
                )
            click.echo(f"re-embedded {total} memories with {p.new_model}")
        finally:
            await pool.close()
            await embedder.aclose()

    with database_url(settings) as url:
        asyncio.run(go(url))


# --- keys -------------------------------------------------------------------------------


@main.group()
def keys() -> None:
    """API keys: create, list, revoke."""


@keys.command("create")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(ROLES),
    default=Role.WRITER.value,
    show_default=True,
    help="reader: read and recall; writer: also write; curator: also set verified, "
    "permanent or a high confidence; admin: everything, every namespace.",
)
@click.option(
    "--namespace",
    "namespaces",
    multiple=True,
    help="Namespace the key may use (repeat for several).",
)
@click.option("--all-namespaces", is_flag=True, help="The key may use every namespace.")
@friendly
def keys_create(name: str, role: str, namespaces: tuple[str, ...], all_namespaces: bool) -> None:
    """Create a key; it is shown once and only its hash is stored."""
    from hindsight.api.deps import check_namespace

    if bool(namespaces) == all_namespaces:
        raise click.UsageError(
            "give the key's namespaces: --namespace NS (repeat for several) or --all-namespaces"
        )
    for ns in namespaces:
        check_namespace(ns)
    settings = load_settings()

    async def go(url: str) -> str:
        async with _service(settings, url) as hs:
            key, _ = await hs.keys.create(
                name, namespaces=None if all_namespaces else list(namespaces), role=Role(role)
            )
        return key

    with database_url(settings) as url:
        key = asyncio.run(go(url))
    scope = "every namespace" if all_namespaces else ", ".join(namespaces)
    click.echo(key)
    click.echo(f"{role} key {name!r} for {scope}; store it now, it cannot be shown again", err=True)


@keys.command("list")
@friendly
def keys_list() -> None:
    """List keys (never the keys themselves)."""
    settings = load_settings()

    async def go(url: str) -> list[dict[str, Any]]:
        async with _service(settings, url) as hs:
            return await hs.keys.list_keys()

    with database_url(settings) as url:
        rows = asyncio.run(go(url))
    for r in rows:
        scope = ",".join(r["namespaces"] or ["*"])
        state = "revoked" if r["revoked_at"] else "active"
        click.echo(f"{r['name']}\t{r['key_prefix']}…\t{r['role']}\t{scope}\t{state}\t{r['id']}")


@keys.command("revoke")
@click.argument("name_or_id")
@friendly
def keys_revoke(name_or_id: str) -> None:
    """Revoke a key by name or id (refused everywhere within a few seconds)."""
    settings = load_settings()

    async def go(url: str) -> dict[str, Any] | None:
        async with _service(settings, url) as hs:
            return await hs.keys.revoke(name_or_id)

    with database_url(settings) as url:
        row = asyncio.run(go(url))
    if row is None:
        raise click.ClickException(f"no API key named {name_or_id!r}")
    click.echo(f"revoked {row['name']}")


def _register() -> None:
    from hindsight.cli.doctor import doctor

    main.add_command(doctor)

    from hindsight.cli import data

    main.add_command(data.erase)
    main.add_command(data.export)


_register()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
