"""`hindsight doctor`: one line per check, a fix under each problem, exit status 1 when
something is wrong (so scripts and deploy hooks can stop on it)."""

from __future__ import annotations

import asyncio

import click
from pydantic import ValidationError

from hindsight.config import Settings
from hindsight.errors import HindsightError
from hindsight.runtime.stores import database_url
from hindsight.services import doctor as checks
from hindsight.services.doctor import Check


def _print(check: Check) -> None:
    mark = "ok  " if check.ok and not check.warning else ("warn" if check.ok else "FAIL")
    colour = {"ok  ": "green", "warn": "yellow", "FAIL": "red"}[mark]
    click.echo(f"{click.style(mark, fg=colour)}  {check.name:<14} {check.detail}")
    if check.fix:
        click.echo(f"      {'':<14} fix: {check.fix}")


async def _run(settings: Settings) -> list[Check]:
    found = [checks.configuration(settings), checks.disk(settings)]
    try:
        with database_url(settings) as url:
            found += await checks.database(settings, url)
    except HindsightError as exc:  # the embedded server would not start
        found.append(Check("postgres", False, exc.message, "see the message above"))
    found.append(await checks.redis(settings))
    return found


@click.command()
def doctor() -> None:
    """Check configuration, both stores, schema, pgvector, embeddings, indexes, Redis
    persistence and disk space; print what is wrong and how to fix it."""
    try:
        settings = Settings()
    except ValidationError as exc:
        _print(
            Check(
                "configuration",
                False,
                "; ".join(
                    f"HINDSIGHT_{'_'.join(str(p) for p in e['loc']).upper()}: {e['msg']}"
                    for e in exc.errors()
                ),
                "correct those environment variables (see the README's Configuration)",
            )
        )
        raise SystemExit(1) from None
    found = asyncio.run(_run(settings))
    for check in found:
        _print(check)
    failed = [c for c in found if not c.ok]
    click.echo(f"\n{len(failed)} problem(s) found" if failed else "\nall checks passed")
    if failed:
        raise SystemExit(1)
