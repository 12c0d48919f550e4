"""hindsight_tag_union(a, b): the tags a re-observation leaves on a memory.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-04

Observe's upsert merged the stored and the observed tags with a subquery in DO UPDATE SET
(`ARRAY(SELECT DISTINCT unnest(...) ORDER BY 1)`). On a Citus cluster the upsert is now an
INSERT ... VALUES routed to the namespace's shard, and Citus refuses a subquery in such a
statement; this IMMUTABLE function computes the same list (each tag once, sorted) and is
what the upsert calls, on plain PostgreSQL as on Citus. On a distributed database Citus
creates it on every node.

Cost: one function created, a catalog change (no lock on any table).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(functions.load(hindsight_tag_union="1f0eb3f11436"))


def downgrade() -> None:
    op.execute("DROP FUNCTION hindsight_tag_union(text[], text[])")
