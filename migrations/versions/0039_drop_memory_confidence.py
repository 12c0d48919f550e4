"""Drop memory_confidence, its triggers (disabled by 0038) and their function.

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-07

0038 replaced memory_confidence with memory_facets but only disabled the old triggers:
dropping a trigger takes an ACCESS EXCLUSIVE lock on long_term_memory, and 0038 already held
a weaker one, which a reader that then writes would have deadlocked with. Here, in a
transaction of its own, that lock is the first asked for. It waits for the transactions
under way on the memories, and every new read and write waits behind it meanwhile: a long
transaction holds them all up until it ends.

memory_confidence is locked first: a service of the code before 0038 (a replica not yet
restarted) reads it before the memories, and nothing writes it since 0038.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import citus, functions

revision: str = "0039"
down_revision: str | None = "0038"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_EVENTS = ("inserted", "updated", "deleted")


def upgrade() -> None:
    if citus.distributed_table(op.get_bind()):
        # the function is dropped after DDL on distributed tables (as in 0036's downgrade)
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute("LOCK TABLE memory_confidence, long_term_memory IN ACCESS EXCLUSIVE MODE")
    for event in _EVENTS:
        op.execute(f"DROP TRIGGER long_term_memory_confidence_{event} ON long_term_memory")
    op.execute("DROP TABLE memory_confidence")
    op.execute("DROP FUNCTION hindsight_ltm_confidence_rows()")


def downgrade() -> None:
    # as 0038 left them: the table, its index and the triggers, disabled; the copy itself
    # is made anew by 0038's downgrade
    distributed = citus.distributed_table(op.get_bind())
    op.execute(functions.written_by("0037", "CONFIDENCE_ROWS"))
    op.execute(functions.written_by("0036", "TABLE"))
    if distributed:
        op.execute(
            "SELECT create_distributed_table('memory_confidence', 'namespace', "
            "colocate_with => 'long_term_memory')"
        )
    op.execute(functions.written_by("0036", "INDEX"))
    for event in _EVENTS:
        op.execute(functions.written_by("0036", event.upper()))
        op.execute(
            f"ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_confidence_{event}"
        )
