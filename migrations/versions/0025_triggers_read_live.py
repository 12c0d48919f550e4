"""The trigger functions read the generated column `live` instead of spelling out its rule.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-04

Which statuses are live (recalled, holding their key, counted in the keyword and label
statistics) was written out as `status IN ('active', 'cold')` fifteen times in the history
and label-count trigger functions, beside the stored generated column `live` (0020) that
says it once. The transition tables carry `live` like any other column, so the functions
read it now; what they write is unchanged. They are loaded from hindsight/db/functions.sql,
which holds every function and trigger as it is at head.

Cost: the four functions are replaced in place, a catalog change (no table lock, no
rewrite). The downgrade puts back the text that 0018, 0019 and 0024 wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# where each function's previous text is: 0018 wrote the three history functions (its
# hindsight_ltm_updated() then replaced by 0019's), 0024 the label counts'
BEFORE = (("0018", "FUNCTIONS_AFTER"), ("0019", "UPDATED_AFTER"), ("0024", "LABEL_STATS"))


# hindsight_ltm_deleted() as this revision wrote it (0026 clears a deleted memory's source)
DELETED = """
CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_history h SET old_value = NULL, new_value = NULL FROM old_rows o
  WHERE h.memory_id = o.id AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL);
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT o.id, o.namespace, o.mem_key,
         CASE WHEN current_setting('hindsight.change', true) IN ('expired', 'rejected')
              THEN current_setting('hindsight.change', true) ELSE 'deleted' END,
         o.memory_type, NULL, NULL, o.confidence, NULL, o.observation_count, o.source,
         hindsight_actor(), nullif(current_setting('hindsight.reason', true), '')
  FROM old_rows o;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, -count(*)
  FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
        FROM old_rows o WHERE o.live) t
  GROUP BY t.namespace, t.term;
  DELETE FROM memory_access a USING old_rows o
  WHERE a.namespace = o.namespace AND a.memory_id = o.id;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_deleted() IS
  'Writes deleted history entries and keyword deltas.';
"""


def upgrade() -> None:
    op.execute(
        functions.load(
            hindsight_ltm_inserted="d3b5932f96d1",
            hindsight_ltm_updated="e2e1cb0c8dfe",
        )
    )
    op.execute(DELETED)
    op.execute(functions.load(hindsight_ltm_label_stats="fcf5ba6a3ad3"))


def downgrade() -> None:
    for earlier, constant in BEFORE:
        op.execute(functions.written_by(earlier, constant))
