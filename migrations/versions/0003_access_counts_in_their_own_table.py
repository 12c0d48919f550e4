"""Access counts move to a table of their own.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

Every recall raised the access count in the memory's own row, so each recall rewrote a
~2 kB row with its vectors — and, whenever the page had no room for the new version, added
entries to both HNSW indexes, besides running the history trigger. A narrow table takes
those writes instead.

Cost: one pass over long_term_memory to copy the counts (about a second per 100k memories);
dropping the two columns only changes the catalog. Takes ACCESS EXCLUSIVE on
long_term_memory for the duration: run it when a short pause in writes is acceptable.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_DELETED = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor)
  SELECT o.id, o.namespace, o.mem_key, 'deleted', o.memory_type, o.mem_value, NULL,
         o.confidence, NULL, o.observation_count, o.source, hindsight_actor()
  FROM old_rows o;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, -count(*)
  FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
        FROM old_rows o WHERE o.status = 'active') t
  GROUP BY t.namespace, t.term;
  {access}
  RETURN NULL;
END $$;
"""
# the memory's access counts go with it
DELETED_WITH_ACCESS = _DELETED.replace(
    "{access}", "DELETE FROM memory_access a USING old_rows o WHERE a.memory_id = o.id;"
)
DELETED_BEFORE = _DELETED.replace("{access}", "")


def upgrade() -> None:
    op.create_table(
        "memory_access",
        sa.Column(
            "memory_id",
            sa.UUID(),
            nullable=False,
            comment="long_term_memory.id; the row goes when the memory does.",
        ),
        sa.Column(
            "access_count",
            sa.BigInteger(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Times recall returned the memory.",
        ),
        sa.Column(
            "last_accessed",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="Last time recall returned it.",
        ),
        sa.PrimaryKeyConstraint("memory_id", name=op.f("pk_memory_access")),
        comment="Recall counts, apart from the memories: a recall then rewrites a narrow row here instead of a memory row with its vectors.",
    )
    op.execute(
        "INSERT INTO memory_access (memory_id, access_count, last_accessed) "
        "SELECT id, access_count, last_accessed FROM long_term_memory "
        "WHERE access_count > 0 OR last_accessed IS NOT NULL"
    )
    op.drop_column("long_term_memory", "access_count")
    op.drop_column("long_term_memory", "last_accessed")
    op.execute(DELETED_WITH_ACCESS)


def downgrade() -> None:
    op.add_column(
        "long_term_memory",
        sa.Column(
            "last_accessed",
            postgresql.TIMESTAMP(timezone=True),
            autoincrement=False,
            nullable=True,
            comment="Last time recall returned it.",
        ),
    )
    op.add_column(
        "long_term_memory",
        sa.Column(
            "access_count",
            sa.BIGINT(),
            server_default=sa.text("0"),
            autoincrement=False,
            nullable=False,
            comment="Times recall returned this memory.",
        ),
    )
    op.execute(
        "UPDATE long_term_memory m SET access_count = a.access_count, "
        "last_accessed = a.last_accessed FROM memory_access a WHERE a.memory_id = m.id"
    )
    op.drop_table("memory_access")
    op.execute(DELETED_BEFORE)
