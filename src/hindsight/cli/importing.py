"""`hindsight import`: memories from JSON lines at COPY speed, or an export restored."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator

import click

from hindsight.cli.common import friendly, load_settings, service
from hindsight.runtime.stores import database_url


@click.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--namespace", default=None, help="For lines that name no namespace.")
@click.option(
    "--rebuild-indexes/--keep-indexes",
    default=None,
    help="Drop the search indexes and build them once at the end (default: when the "
    "import at least doubles the table).",
)
@click.option(
    "--into-erased",
    is_flag=True,
    help="Restore an export into a namespace erased after the export was made (refused "
    "otherwise: it would bring the erased data back).",
)
@friendly
def import_(
    path: str, namespace: str | None, rebuild_indexes: bool | None, into_erased: bool
) -> None:
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

        restore([line for _, line in lines()], namespace, into_erased=into_erased)
        return

    total = 0
    import_id = ImportId(namespace)
    for number, line in lines():  # check everything before writing anything
        parse_line(line, namespace, number)
        import_id.add(number, line)
        total += 1

    async def go(url: str) -> None:
        async with service(settings, url) as hs:
            importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
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
