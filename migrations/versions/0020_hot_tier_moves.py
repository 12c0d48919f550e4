r"""Tier moves as HOT updates: partial indexes over computed columns, room on every page.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-08

A change of a column that any index names (in its key or its predicate) is never a HOT
update: the new row version gets an entry in every index, both HNSW indexes included, and
that re-insert was 95% of a tier move's cost (issue 14: ~41 moves/s at 100k memories). The
two partial indexes named `status`, so every cooling and warming paid it.

- long_term_memory.live (status IN ('active', 'cold')) and .quarantined (status =
  'quarantined'): stored generated columns, so they cannot drift from `status`; the
  one-live-row-per-key index and the quarantine index are rebuilt over them. Cooling and
  warming change `status` but neither column, so no index sees them. Archiving still
  changes `live` (the row leaves the unique index) and stays a full update.
- fillfactor 80: a row is ~1.3 kB inline (1.5 kB at most, most of it the half-precision
  embedding), 5 to a page; 80 leaves room on every page for one new version of one of
  them. The scheduler cools a batch in rounds that take at most one row of a page each
  (services/lifecycle.py), so each round finds that room again once the previous round's
  old versions are pruned.

Measured at 100k memories (benchmarks/results/lifecycle_cost.md, on copies of one load):
a real pass cooling 50,000 took 598 s before (84 moves/s, no update HOT) and 12 s after
(4,229 moves/s, every update HOT); 1,000 memories spread over the table (as a recall warms
them) cool 96% HOT in one statement, the newest 1,000 (whole pages) 23%, one per page,
which is why the scheduler goes by rounds. The heap grows by a quarter (130 → 161 MB),
the table with its indexes by 10% (301 → 331 MB); recall reads no more buffers. A trigger
keeping a plain column instead would need no rewrite, but then existing pages stay full
(no HOT update until rows move) and the column can drift from `status`.

Cost: adding a stored generated column rewrites the table, and with it every index:
131 s at 100k memories on 2 busy cores under ACCESS EXCLUSIVE on long_term_memory, all but
2.4 s of it building both HNSW indexes again (expect 30-60 min at 1M). An operator who
would rather keep the table open can drop the three search indexes first (`\d
long_term_memory`: ix_long_term_memory_embedding, _keywords, _keyword_terms): the rewrite
is then seconds, and the service builds them again concurrently at start-up while recall
answers by exact search (/readyz says so). The downgrade drops the columns and rebuilds the
two small partial indexes only (0.9 s at 100k; no rewrite, pages keep their room).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LTM = "long_term_memory"
LIVE_COMMENT = "status is active or cold (computed): the row holds its key and is recalled."
QUARANTINED_COMMENT = "status is quarantined (computed): the row waits for a curator's review."


def _partial_indexes(live: str, quarantined: str) -> None:
    op.create_index(
        "uq_long_term_memory_active_key",
        LTM,
        ["namespace", "mem_key"],
        unique=True,
        postgresql_where=sa.text(live),
    )
    op.create_index(
        "ix_long_term_memory_quarantined_key",
        LTM,
        ["namespace", "mem_key"],
        postgresql_where=sa.text(quarantined),
    )


def _drop_partial_indexes() -> None:
    # before the rewrite, so that it does not build them twice
    op.drop_index("ix_long_term_memory_quarantined_key", table_name=LTM)
    op.drop_index("uq_long_term_memory_active_key", table_name=LTM)


def upgrade() -> None:
    _drop_partial_indexes()
    # a catalog change; the rewrite below is the one that lays the pages out with it
    op.execute(f"ALTER TABLE {LTM} SET (fillfactor = 80)")
    # both columns in one statement: one rewrite
    op.execute(
        f"ALTER TABLE {LTM} "
        "ADD COLUMN live boolean NOT NULL "
        "GENERATED ALWAYS AS (status IN ('active', 'cold')) STORED, "
        "ADD COLUMN quarantined boolean NOT NULL "
        "GENERATED ALWAYS AS (status = 'quarantined') STORED"
    )
    for column, comment in (("live", LIVE_COMMENT), ("quarantined", QUARANTINED_COMMENT)):
        quoted = comment.replace("'", "''")
        op.execute(f"COMMENT ON COLUMN {LTM}.{column} IS '{quoted}'")
    _partial_indexes("live", "quarantined")


def downgrade() -> None:
    _drop_partial_indexes()
    op.drop_column(LTM, "quarantined")
    op.drop_column(LTM, "live")
    op.execute(f"ALTER TABLE {LTM} RESET (fillfactor)")
    _partial_indexes("status IN ('active', 'cold')", "status = 'quarantined'")
