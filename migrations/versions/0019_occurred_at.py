"""occurred_at: when a memory's or a step's thing happened, beside when it was recorded.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-08

- long_term_memory.occurred_at, working_memory.occurred_at: nullable timestamptz, set by
  clients and by extraction. Recall's time filters and time factor read
  coalesce(occurred_at, created_at), so memories stored before this revision (or without a
  time) behave as if they happened when they were recorded.
- hindsight_ltm_updated(): a change of occurred_at alone (a PATCH) is an `updated` entry in
  the memory's history, like a change of any other field the trigger compares.

No index: recall filters by time inside one namespace's candidates (the namespace index or
the arms' ORDER BY ... LIMIT), and no measured statement reads rows by time alone.

Cost: adding a nullable column without a default rewrites nothing (a catalog change under
a brief ACCESS EXCLUSIVE lock on each table); the trigger function is replaced in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MEMORY_COMMENT = (
    "When the thing the claim describes happened (set by the client or by extraction), as "
    "opposed to created_at, when it was recorded; null: unknown, and recall's time filters "
    "and time factor use created_at instead."
)
STEP_COMMENT = (
    "When the step's event happened, if the client said (e.g. a replayed conversation); "
    "null: when it was appended (created_at)."
)

# hindsight_ltm_updated() as 0018 left it, with {compared} for the columns whose change is
# a history entry
_UPDATED = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT n.id, n.namespace, n.mem_key,
         CASE
           WHEN o.status = 'quarantined' AND n.status <> 'quarantined'
             THEN coalesce(nullif(current_setting('hindsight.change', true), ''),
                           'approved')
           WHEN o.status = n.status
                OR (o.status = 'cold' AND n.status = 'active'
                    AND o.mem_value IS DISTINCT FROM n.mem_value) THEN
             CASE
               WHEN o.mem_value IS DISTINCT FROM n.mem_value
                 THEN coalesce(nullif(current_setting('hindsight.change', true), ''),
                               'superseded')
               WHEN n.observation_count > o.observation_count THEN 'reinforced'
               ELSE 'updated'
             END
           WHEN n.status = 'cold' THEN 'cooled'
           WHEN n.status = 'archived' THEN 'archived'
           WHEN o.status = 'cold' AND n.status = 'active' THEN 'warmed'
           WHEN n.status = 'active' THEN 'restored'
           ELSE 'updated'
         END,
         n.memory_type, o.mem_value, n.mem_value, o.confidence, n.confidence,
         n.observation_count, n.source, hindsight_actor(),
         coalesce(nullif(current_setting('hindsight.reason', true), ''),
                  CASE WHEN o.status = 'cold' AND n.status = 'active'
                            AND n.last_observed > o.last_observed THEN 'observed again' END)
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE ({old}) IS DISTINCT FROM ({new});

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT d.namespace, d.term, sum(d.delta)
  FROM (
    SELECT o.namespace, unnest(o.keyword_terms || 0) AS term, -1 AS delta
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.status IN ('active', 'cold')
      AND (n.status NOT IN ('active', 'cold') OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
           OR n.namespace <> o.namespace)
    UNION ALL
    SELECT n.namespace, unnest(n.keyword_terms || 0), 1
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.status IN ('active', 'cold')
      AND (o.status NOT IN ('active', 'cold') OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
           OR n.namespace <> o.namespace)
  ) d
  GROUP BY d.namespace, d.term
  HAVING sum(d.delta) <> 0;
  RETURN NULL;
END $$;
"""

_COMPARED = (
    "mem_key, mem_value, memory_type, confidence, observation_count, status, importance, "
    "tags, metadata, verified, permanent, source, expires_at"
)


def _updated(columns: str) -> str:
    names = [c.strip() for c in columns.split(",")]
    return _UPDATED.replace("{old}", ", ".join(f"o.{c}" for c in names)).replace(
        "{new}", ", ".join(f"n.{c}" for c in names)
    )


# what this revision installs; 0025's downgrade puts it back from here
UPDATED_AFTER = _updated(_COMPARED + ", occurred_at")


def upgrade() -> None:
    for table, comment in (("long_term_memory", MEMORY_COMMENT), ("working_memory", STEP_COMMENT)):
        op.add_column(table, sa.Column("occurred_at", sa.DateTime(timezone=True), comment=comment))
    op.execute(UPDATED_AFTER)


def downgrade() -> None:
    op.execute(_updated(_COMPARED))
    op.drop_column("working_memory", "occurred_at")
    op.drop_column("long_term_memory", "occurred_at")
