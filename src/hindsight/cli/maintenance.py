"""`hindsight maintenance`: the upkeep the service also runs by itself, on demand."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import click

from hindsight.cli.common import friendly, load_settings, service
from hindsight.runtime.stores import database_url


@click.group()
def maintenance() -> None:
    """Upkeep the service also runs by itself every few seconds."""


@maintenance.command()
@friendly
def purge() -> None:
    """Delete expired working memory and old recall-log rows; merge keyword statistics."""
    from hindsight.maintenance.purge import run_once

    settings = load_settings()

    async def go(url: str) -> dict[str, Any]:
        async with service(settings, url) as hs:
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
        async with service(settings, url) as hs:
            report = await run_pass(hs, namespace=namespace, dry_run=dry_run, as_of=as_of)
        return report.as_dict()

    with database_url(settings) as url:
        click.echo(json.dumps(asyncio.run(go(url))), err=True)
