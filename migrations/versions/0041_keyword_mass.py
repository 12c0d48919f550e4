"""Each memory's keyword mass, kept with its specificity: what a conversation's keyword
score is a share of.

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-07

A conversation is searched as weighted turns, and its keyword score is the share of the
memory's own BM25 mass (its keyword weights by the IDF of each term) that the conversation
holds (stores/search.py). Recall computed that mass for every candidate of both arms, one
probe of the document frequencies per term of the memory: at 100k memories, conversations
of 8 turns, 1.6-1.8 ms of each arm's execution (302 probes for 20 candidates), where the
same probes already give the memory's specificity, which 0023 keeps. The two are now
computed from one set of probes and kept together, under the specificity's rules (the
memory unchanged since, computed within the hour, its namespace within a quarter of that
size), by recall and by the maintenance pass that computes specificities ahead of it.

Cost: one nullable column, no rewrite. A question reads the specificities kept before the
upgrade as it did; for a conversation a kept value without a mass counts as missing, and
its recall, or the maintenance pass walking the memories, computes both again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0041"
down_revision: str | None = "0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COMMENT = (
    "The memory's BM25 mass (its keyword weights by each term's IDF) as recall last computed "
    "it, with the specificity and under the same specificity_* columns."
)


def upgrade() -> None:
    op.add_column(
        "memory_access", sa.Column("keyword_mass", sa.Float(), nullable=True, comment=COMMENT)
    )


def downgrade() -> None:
    op.drop_column("memory_access", "keyword_mass")
