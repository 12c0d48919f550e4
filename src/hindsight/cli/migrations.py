"""`hindsight db` (Alembic schema migrations) and `hindsight reembed`: bringing what is
stored up to what this version's schema and the configured embedding model expect."""

from __future__ import annotations

import asyncio
import sys

import click

from hindsight import core
from hindsight.cli.common import configure_logging, friendly, load_settings
from hindsight.db import citus, migrate
from hindsight.runtime.stores import database_url


@click.group()
def db() -> None:
    """Schema migrations (Alembic)."""


@db.command()
@click.argument("revision", default="head")
@friendly
def upgrade(revision: str) -> None:
    """Upgrade the schema (default: to the newest revision)."""
    settings = load_settings()
    configure_logging(settings)
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
    configure_logging(settings)
    with database_url(settings) as url:
        migrate.downgrade(migrate.alembic_config(url), revision)
        click.echo(f"schema at {migrate.current_revision(url) or 'base'}")


@db.command()
@click.option(
    "--shard-count",
    type=click.IntRange(1, 10_000),
    default=citus.SHARD_COUNT,
    show_default=True,
    help="Shards per distributed table (the most workers the cluster can grow to).",
)
@friendly
def distribute(shard_count: int) -> None:
    """Distribute the tables over a Citus cluster, by namespace (run on the coordinator).

    Run `hindsight db upgrade` first; stop the API meanwhile (each table is locked against
    writes while its rows are copied into shards). Idempotent: it places only what is not
    placed yet, so run it again after an upgrade that adds a table.
    """
    settings = load_settings()
    configure_logging(settings)
    with database_url(settings) as url:
        done = citus.distribute(url, shard_count=shard_count)
        _, left = citus.status(url)
    for line in done:
        click.echo(f"placed {line}")
    click.echo(f"{len(done)} tables placed" if done else "every table was placed already")
    if left:
        raise click.ClickException(
            "the cluster still needs:\n  " + "\n  ".join(str(p) for p in left)
        )


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


@click.command()
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
