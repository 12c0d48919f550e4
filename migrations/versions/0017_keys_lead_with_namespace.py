"""Every primary key leads with namespace, so the tables can be distributed by namespace.

Revision ID: 0017
Revises: 0014
Create Date: 2026-12-01

A distributed PostgreSQL (Citus) can only enforce a primary key or unique constraint that
contains the distribution column. The namespace-scoped tables had primary keys on `id`
alone; they become `(namespace, id)`. `memory_access` gains the namespace of its memory
(copied from long_term_memory) and the key `(namespace, memory_id)`, so the access counts
sit on the same shard as their memories. The ids stay as unique as before (UUIDv7 and
identity columns); only the constraint that says so changes shape. Recall's generic plans
were checked after the change (24k memories, 4 namespaces): the join from an arm's ids back
to the memories is a nested loop on the new key, 20 index lookups, as before.

Cost: each primary key's index is rebuilt (long_term_memory: about a second per 100k
memories) under ACCESS EXCLUSIVE on that table, and memory_access is rewritten once with
the namespace. Run it when a short pause in traffic is acceptable. Downgrade puts the old
keys back the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# namespace-scoped tables whose primary key was `id` alone
_BY_ID = ("long_term_memory", "memory_history", "recall_log", "keyword_stats", "working_memory")

# the memory-deleted trigger as 0013 (erasure) and 0014 (reason, expiry) left it, but for
# the access rows it removes, matched on their new key
_DELETED = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_history h SET old_value = NULL, new_value = NULL FROM old_rows o
  WHERE h.memory_id = o.id AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL);
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT o.id, o.namespace, o.mem_key,
         CASE WHEN current_setting('hindsight.change', true) = 'expired'
              THEN 'expired' ELSE 'deleted' END,
         o.memory_type, NULL, NULL, o.confidence, NULL, o.observation_count, o.source,
         hindsight_actor(), nullif(current_setting('hindsight.reason', true), '')
  FROM old_rows o;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, -count(*)
  FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
        FROM old_rows o WHERE o.status IN ('active', 'cold')) t
  GROUP BY t.namespace, t.term;
  DELETE FROM memory_access a USING old_rows o WHERE {access};
  RETURN NULL;
END $$;
"""


def upgrade() -> None:
    # maintenance reads keyword_stats by id (rows since its watermark); keep that fast
    op.create_index("ix_keyword_stats_id", "keyword_stats", ["id"])
    for table in _BY_ID:
        op.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT pk_{table}, "
            f"ADD CONSTRAINT pk_{table} PRIMARY KEY (namespace, id)"
        )
    # the new primary key is this index, made unique
    op.drop_index("ix_long_term_memory_namespace_id", table_name="long_term_memory")

    op.execute("ALTER TABLE memory_access ADD COLUMN namespace text")
    op.execute(
        "UPDATE memory_access a SET namespace = m.namespace "
        "FROM long_term_memory m WHERE m.id = a.memory_id"
    )
    op.execute("DELETE FROM memory_access WHERE namespace IS NULL")  # memory already gone
    op.execute(
        "ALTER TABLE memory_access ALTER COLUMN namespace SET NOT NULL, "
        "DROP CONSTRAINT pk_memory_access, "
        "ADD CONSTRAINT pk_memory_access PRIMARY KEY (namespace, memory_id)"
    )
    op.execute("COMMENT ON COLUMN memory_access.namespace IS 'Namespace of the memory.'")
    op.execute(_DELETED.replace("{access}", "a.namespace = o.namespace AND a.memory_id = o.id"))


def downgrade() -> None:
    op.execute(_DELETED.replace("{access}", "a.memory_id = o.id"))
    op.execute(
        "ALTER TABLE memory_access DROP CONSTRAINT pk_memory_access, "
        "ADD CONSTRAINT pk_memory_access PRIMARY KEY (memory_id)"
    )
    op.execute("ALTER TABLE memory_access DROP COLUMN namespace")

    op.create_index("ix_long_term_memory_namespace_id", "long_term_memory", ["namespace", "id"])
    for table in _BY_ID:
        op.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT pk_{table}, "
            f"ADD CONSTRAINT pk_{table} PRIMARY KEY (id)"
        )
    op.drop_index("ix_keyword_stats_id", table_name="keyword_stats")
