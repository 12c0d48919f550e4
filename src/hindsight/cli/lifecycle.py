"""`hindsight maintenance lifecycle`: one lifecycle pass, printing every move and why.

stdout: one line per move. stderr: on a namespace larger than one batch, the progress after
each batch against the namespace's memory count (a pass moves a memory once at most, so the
count is the most it can reach), rewritten in place on a terminal, a line per batch
otherwise; then the report."""

from __future__ import annotations

import sys
from datetime import datetime

import click

from hindsight.core import Hindsight
from hindsight.services.lifecycle import LifecycleReport
from hindsight.services.moves import Move
from hindsight.stores import lifecycle as store

VERBS = {
    "cold": "cool",
    "archived": "archive",
    "delete": "delete",
    "expire": "expire",
    "demote": "demote",
    "merged": "merge",
    "superseded": "supersede",
    "review": "send to review",
    "distilled": "distil",
}


class Progress:
    """Moves so far per namespace, out of its memories; `on_progress` reports a rule's
    running count, so earlier rules' counts are carried."""

    def __init__(self, totals: dict[str, int], batch: int, *, dry_run: bool) -> None:
        self._totals = totals
        self._batch = batch
        self._verb = "would move" if dry_run else "moved"
        self._rule: dict[str, str] = {}
        self._carried: dict[str, int] = {}
        self._last: dict[str, int] = {}
        self._tty = sys.stderr.isatty()
        self._open = False  # a terminal line not yet ended

    def __call__(self, ns: str, rule: str, done: int) -> None:
        total = self._totals.get(ns, 0)
        if total <= self._batch:  # one batch: nothing to follow
            return
        if self._rule.get(ns) != rule:
            self._carried[ns] = self._carried.get(ns, 0) + self._last.get(ns, 0)
            self._rule[ns] = rule
        self._last[ns] = done
        moved = min(self._carried[ns] + done, total)
        line = f"{ns}: {moved:,}/{total:,} memories {self._verb} ({moved / total:.0%}), {rule}"
        if self._tty:
            click.echo(f"\r{line}\x1b[K", err=True, nl=False)
            self._open = True
        else:
            click.echo(line, err=True)

    def close(self) -> None:
        if self._open:
            click.echo("", err=True)
            self._open = False


async def run_pass(
    hs: Hindsight, *, namespace: str | None, dry_run: bool, as_of: datetime | None
) -> LifecycleReport:
    async with hs.pool.connection() as conn:
        totals = await store.memory_counts(conn, namespace)
    progress = Progress(totals, hs.settings.lifecycle_batch_size, dry_run=dry_run)

    def on_move(move: Move) -> None:
        verb = VERBS.get(move.action, move.action)
        if dry_run:
            verb = f"would {verb}"
        if sys.stdout.isatty():  # the same terminal: the move starts a line of its own
            progress.close()
        click.echo(f"{verb}\t{move.namespace}\t{move.key}\t{move.id}\t{move.reason}")

    try:
        report = await hs.lifecycle.run(
            now=as_of,
            namespace=namespace,
            dry_run=dry_run,
            on_move=on_move,
            on_progress=progress,
        )
    finally:
        progress.close()
    if not report.ran:
        raise click.ClickException(
            "another lifecycle pass is running (a replica's maintenance loop); try again later"
        )
    return report
