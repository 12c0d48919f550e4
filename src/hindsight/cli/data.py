"""`hindsight erase` and `hindsight export`, and restoring an export (`hindsight import`).

They talk to the stores directly, like `hindsight import`: run them where the service's
HINDSIGHT_DATABASE_URL and HINDSIGHT_REDIS_URL point (with embedded stores, while
`hindsight serve` is stopped, or use the REST calls instead).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import click

from hindsight.cli.common import friendly, load_settings
from hindsight.config import Settings


def _checked(namespace: str) -> str:
    from hindsight.services.names import check_namespace

    return check_namespace(namespace)


async def _refuse_if_erased_since(pool: Any, namespace: str, header: str) -> None:
    from datetime import datetime

    from hindsight.stores import erasure

    async with pool.connection() as conn:
        erased_at = await erasure.last_erased_at(conn, namespace)
    if erased_at is None:
        return
    exported = json.loads(header).get("exported_at")
    exported_at = datetime.fromisoformat(exported) if isinstance(exported, str) else None
    if exported_at is None or exported_at < erased_at:
        raise click.ClickException(
            f"namespace {namespace!r} was erased at {erased_at.isoformat()}, after this "
            f"export was made ({exported or 'at an unknown time'}); importing it would bring "
            "the erased data back. Pass --into-erased if that is what you mean."
        )


def _refuse_while_serving(settings: Settings, namespace: str | None) -> None:
    """The embedded stores belong to the `hindsight serve` running on them: say so before
    asking anything, and name the call that erases through it."""
    from hindsight.runtime.stores import serving_pid

    if settings.database_url and settings.redis_url:
        return  # stores of their own: erase works beside a running service
    pid = serving_pid(settings.data_dir)
    if pid is None:
        return
    if namespace is None:
        how = "stop it, then compact"
    else:
        how = (
            "erase through it instead: curl -X DELETE "
            f"http://{settings.host}:{settings.port}/v1/namespaces/{namespace} "
            f'-H "Authorization: Bearer $(cat {settings.data_dir / "admin-api-key"})" '
            "(an admin key); to take erased data off the disk too, stop it and run "
            "`hindsight erase --compact`"
        )
    raise click.ClickException(
        f"`hindsight serve` (pid {pid}) is running on {settings.data_dir} and owns its "
        f"embedded PostgreSQL and Redis; {how}"
    )


@click.command()
@click.option("--namespace", default=None, help="The namespace to erase.")
@click.option(
    "--compact",
    is_flag=True,
    help="Then take erased data off the disk: VACUUM FULL of the tables an erasure "
    "touches (each locked while rewritten), old WAL segments dropped, Redis's AOF "
    "rewritten. Alone, compacts after earlier erasures.",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@friendly
def erase(namespace: str | None, compact: bool, yes: bool) -> None:
    """Erase a namespace: every row of it in every table and every Redis key. Prints the
    receipt (counts per store) as JSON."""
    from hindsight import core
    from hindsight.runtime.stores import serving_stores

    if namespace is None and not compact:
        raise click.UsageError("give --namespace, --compact or both")
    if namespace is not None:
        _checked(namespace)
    settings = load_settings()
    _refuse_while_serving(settings, namespace)
    if namespace is not None and not yes:
        click.confirm(
            f"Erase everything of namespace {namespace!r}? This cannot be undone", abort=True
        )

    async def go(database_url: str, redis_url: str | None) -> dict[str, Any]:
        hs = await core.start(
            settings, database_url=database_url, redis_url=redis_url, background=False
        )
        try:
            receipt: dict[str, Any] = {}
            if namespace is not None:
                receipt = await hs.erasure.erase_namespace(namespace, actor="cli")
            if compact:
                receipt["compacted"] = await hs.erasure.compact()
            return receipt
        finally:
            await hs.aclose()

    with serving_stores(settings) as urls:
        receipt = asyncio.run(go(urls.database_url, urls.redis_url))
    click.echo(json.dumps(receipt))


@click.command()
@click.option("--namespace", required=True, help="The namespace to export.")
@click.option("--sessions/--no-sessions", default=False, help="Also export working memory.")
@click.argument("path", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@friendly
def export(namespace: str, sessions: bool, path: str | None) -> None:
    """Export a namespace as JSON lines (format hindsight-export v2) to PATH or stdout."""
    from hindsight.cli.common import load_settings, service
    from hindsight.runtime.stores import database_url

    _checked(namespace)
    settings = load_settings()

    async def go(url: str) -> None:
        async with service(settings, url) as hs:
            with click.open_file(path or "-", "w", encoding="utf-8") as out:
                async for line in hs.exports.lines(namespace, sessions=sessions):
                    out.write(line)

    with database_url(settings) as url:
        asyncio.run(go(url))


def restore(lines: list[str], namespace: str | None, *, into_erased: bool = False) -> None:
    """`hindsight import` of an export: into --namespace, else the exported one. An export
    made before the namespace was erased is refused unless `into_erased`: restoring it
    would bring back, unnoticed, what the erasure removed."""
    from hindsight.cli.common import load_settings, service
    from hindsight.runtime.stores import database_url

    target = namespace or json.loads(lines[0]).get("namespace")
    if not isinstance(target, str):
        raise click.UsageError("the export names no namespace; give --namespace")
    _checked(target)
    settings = load_settings()

    async def go(url: str) -> dict[str, Any]:
        async with service(settings, url) as hs:
            if not into_erased:
                await _refuse_if_erased_since(hs.pool, target, lines[0])
            return await hs.exports.restore(target, lines, actor="import")

    with database_url(settings) as url:
        counts = asyncio.run(go(url))
    click.echo(json.dumps({"restored": target, **counts}))
    print(f"restored {counts['memories']} memories into {target!r}", file=sys.stderr)
