"""`hindsight`: serve, migrate, manage keys, run maintenance.

The group only: each command lives in the sibling module for its responsibility."""

from __future__ import annotations

import sys

import click

from hindsight import __version__
from hindsight.cli import data
from hindsight.cli.doctor import doctor
from hindsight.cli.importing import import_
from hindsight.cli.keys import keys
from hindsight.cli.maintenance import maintenance
from hindsight.cli.migrations import db, reembed
from hindsight.cli.serve import mcp, serve


@click.group()
@click.version_option(__version__, prog_name="hindsight")
def main() -> None:
    """Hindsight: memory for LLM agents.

    Configuration comes from HINDSIGHT_* environment variables (see the README). With no
    HINDSIGHT_DATABASE_URL / HINDSIGHT_REDIS_URL, embedded servers keep their data in
    HINDSIGHT_DATA_DIR.
    """


main.add_command(serve)
main.add_command(mcp)
main.add_command(db)
main.add_command(maintenance)
main.add_command(import_)
main.add_command(reembed)
main.add_command(keys)
main.add_command(doctor)
main.add_command(data.erase)
main.add_command(data.export)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
