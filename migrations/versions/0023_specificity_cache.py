"""Each memory's specificity, kept beside its access counts once recall has computed it.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-04

Recall scores every candidate's specificity (the mean IDF of its terms, issue 12): one
probe of the document frequencies per term, ~200 per statement at k=10. Measured at 100k
English sentences in one namespace, 200 queries, the statements alone and interleaved:
that was 0.8 ms of the vector arm's 4.9 and 0.8 of the keyword arm's 6.1, 1.2 of the
two together (7.1 ms). Recall now stores what it computed in memory_access and reads it
back while it still holds: the memory unchanged since (updated_at), computed within the
hour, and its namespace within a quarter of the size it was computed at (at 100k a
quarter more memories moves the IDF of a term as common as before by ln 1.25, about 2%
of the scale; the hour bounds how long a word that suddenly became common is missed).

Cost: four nullable columns, no rewrite; rows for candidates that were never returned.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


COLUMNS = (
    ("specificity", sa.Float(), "The memory's specificity as recall last computed it (0..1)."),
    (
        "specificity_n",
        sa.BigInteger(),
        "How many memories its namespace held when the specificity was computed.",
    ),
    (
        "specificity_of",
        sa.DateTime(timezone=True),
        "The memory's updated_at when the specificity was computed.",
    ),
    ("specificity_at", sa.DateTime(timezone=True), "When the specificity was computed."),
)


def upgrade() -> None:
    for name, type_, comment in COLUMNS:
        op.add_column("memory_access", sa.Column(name, type_, nullable=True, comment=comment))


def downgrade() -> None:
    for name, _, _ in reversed(COLUMNS):
        op.drop_column("memory_access", name)
