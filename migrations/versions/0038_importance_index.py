"""An index on each live memory's importance, so that a min_importance filter that admits few
memories of a large namespace is searched exactly among them.

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-07

Recall narrows a filter that admits few memories by counting them through an index and
scoring those exactly (stores/narrowing.py). min_importance had no index: alone, the vector
arm walked the HNSW graph until it met k memories the filter admits (up to
hnsw.max_scan_tuples rows, missing those it never met) and the keyword arm probed every
budgeted posting's memory, as min_confidence did before 0036.

Importance can live on the memory's own row, unlike confidence: a reinforcement keeps the
greater of the two ratings, so it changes importance only when the new one is higher, and
the update stays HOT otherwise (an indexed column's change would enter the row into both
HNSW graphs again).

Cost: one b-tree build over the live memories, with writes to long_term_memory locked out
while it builds; then one more b-tree entry per written memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0038"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_long_term_memory_importance ON long_term_memory "
        "(namespace, importance) WHERE live"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_long_term_memory_importance")
