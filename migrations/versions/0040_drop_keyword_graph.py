"""Drop the sparse HNSW graph over keyword vectors: the keyword arm no longer reads it.

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-07

The graph answered only the queries whose every term is too common for the postings
budget. The keyword arm now reads, for those, the memories that hold all of the query's
rarest terms together, through the posting lists it already reads (stores/search.py),
which found more of the exact fused top 10 than the graph did (benchmarks/README item
41). Keeping the graph up to date was a quarter of what a written memory cost the
database (item 41 has the breakdown before and after).

Dropping an index takes an ACCESS EXCLUSIVE lock on long_term_memory for a moment: it
waits for the transactions under way on the memories. The downgrade builds the graph again
as 0033 left it (parallel, about a minute at 1M memories on two cores) under the
migration's lock; recall answers common-word queries the new way meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db.schema import KEYWORDS_INDEX, keywords_index_sql

revision: str = "0040"
down_revision: str | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(f"DROP INDEX IF EXISTS {KEYWORDS_INDEX}")


def downgrade() -> None:
    op.execute("SET LOCAL maintenance_work_mem = '1GB'")
    op.execute("SET LOCAL max_parallel_maintenance_workers = 2")
    op.execute(keywords_index_sql(m=8, ef_construction=16))
