"""`hindsight maintenance lifecycle`: one lifecycle pass, printing every move and why."""

from __future__ import annotations

from datetime import datetime

import click

from hindsight.core import Hindsight
from hindsight.services.lifecycle import LifecycleReport
from hindsight.services.moves import Move

VERBS = {
    "cold": "cool",
    "archived": "archive",
    "delete": "delete",
    "expire": "expire",
    "demote": "demote",
    "merged": "merge",
}


async def run_pass(
    hs: Hindsight, *, namespace: str | None, dry_run: bool, as_of: datetime | None
) -> LifecycleReport:
    def on_move(move: Move) -> None:
        verb = VERBS.get(move.action, move.action)
        if dry_run:
            verb = f"would {verb}"
        click.echo(f"{verb}\t{move.namespace}\t{move.key}\t{move.id}\t{move.reason}")

    def on_progress(ns: str, rule: str, done: int) -> None:
        # one line per batch: only large namespaces take more than one
        if done >= hs.settings.lifecycle_batch_size:
            click.echo(f"{ns}: {rule}: {done} memories so far", err=True)

    report = await hs.lifecycle.run(
        now=as_of,
        namespace=namespace,
        dry_run=dry_run,
        on_move=on_move,
        on_progress=on_progress,
    )
    if not report.ran:
        raise click.ClickException(
            "another lifecycle pass is running (a replica's maintenance loop); try again later"
        )
    return report
