"""A GIN index on keyword_terms: recall's keyword arm reads posting lists.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29

In a large namespace the keyword arm scores the memories that hold the query's rarest
terms, found through this index, instead of walking the sparse HNSW graph, which found
about half of the true best keyword matches (benchmarks/README.md has the measurements).

Cost: one read of long_term_memory; about a second per 100k memories and 11 MB of index
per 100k. Takes a SHARE lock: writes wait while it builds, recalls do not.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_long_term_memory_keyword_terms",
        "long_term_memory",
        ["keyword_terms"],
        postgresql_using="gin",
    )


def downgrade() -> None:
    op.drop_index("ix_long_term_memory_keyword_terms", table_name="long_term_memory")
