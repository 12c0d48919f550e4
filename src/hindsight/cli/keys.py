"""`hindsight keys`: create, list and revoke API keys, straight in the database."""

from __future__ import annotations

import asyncio
from typing import Any

import click

from hindsight.cli.common import friendly, load_settings, service
from hindsight.runtime.stores import database_url
from hindsight.services.roles import ROLES, Role


@click.group()
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
    from hindsight.services.names import check_namespace

    if bool(namespaces) == all_namespaces:
        raise click.UsageError(
            "give the key's namespaces: --namespace NS (repeat for several) or --all-namespaces"
        )
    for ns in namespaces:
        check_namespace(ns)
    settings = load_settings()

    async def go(url: str) -> str:
        async with service(settings, url) as hs:
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
        async with service(settings, url) as hs:
            return await hs.keys.list_keys()

    with database_url(settings) as url:
        rows = asyncio.run(go(url))
    if not rows:
        click.echo(
            "no API keys yet: `hindsight serve` creates an admin key on its first start", err=True
        )
        return
    click.echo("name\tprefix\trole\tnamespaces\tstate\tid")
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
        async with service(settings, url) as hs:
            return await hs.keys.revoke(name_or_id)

    with database_url(settings) as url:
        row = asyncio.run(go(url))
    if row is None:
        raise click.ClickException(f"no API key named {name_or_id!r}")
    click.echo(f"revoked {row['name']}")
