"""The history, keyword and session-end triggers read their transition tables first, then
write from what they read: the form that runs on a Citus cluster's shards.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-04

On a Citus cluster (`hindsight db distribute`) each trigger fires on the shard a statement
changed, and a statement there that writes a distributed table is planned by Citus, which
cannot see the trigger's transition tables ("executor could not find named tuplestore").
Each trigger now aggregates what it will write into a JSON value with a query on the
transition tables alone, and writes it with `hindsight_history_write(jsonb)` and
`hindsight_keyword_deltas(jsonb)` (new) or an INSERT from it. The deleted-memory trigger
matches history and access rows by `namespace = ANY(...) AND memory_id = ANY(...)` instead
of joining the transition table, which Citus routes to the co-located shard. What each
trigger writes is unchanged, on plain PostgreSQL and on Citus alike.

Cost: functions replaced in place and two created, a catalog change (no table lock, no
rewrite). The downgrade puts back the text that 0014, 0025 and 0026 wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = (
    ("0025", "INSERTED"),
    ("0025", "UPDATED"),
    ("0026", "DELETED"),
    ("0025", "LABEL_STATS"),
    ("0014", "SESSION_ENDED"),
)


def upgrade() -> None:
    op.execute(
        functions.load(
            hindsight_history_write="4cff03bc0ec6",
            hindsight_keyword_deltas="b29bf348e9e1",
            hindsight_ltm_inserted="9e5060bc9c26",
            hindsight_ltm_updated="bbe4933ec63e",
            hindsight_ltm_deleted="be42021d17b5",
            hindsight_ltm_label_stats="e7c4e1e93e6d",
            hindsight_session_ended="fd7c83ce84d2",
        )
    )


def downgrade() -> None:
    for earlier, constant in BEFORE:
        op.execute(functions.written_by(earlier, constant))
    op.execute("DROP FUNCTION hindsight_keyword_deltas(jsonb)")
    op.execute("DROP FUNCTION hindsight_history_write(jsonb)")
