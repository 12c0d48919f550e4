"""A deleted memory's source leaves its history, as its values already did.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-04

A source label may name a person or a conversation ("mail from Ann", "session:…"), yet a
deletion kept it on the tombstone and on every earlier history entry, while the README
promised id, key, time and actor only. hindsight_ltm_deleted() now clears it with the
values. Rows deleted before this revision keep their source; `UPDATE memory_history SET
source = NULL WHERE change IN ('deleted', 'expired', 'rejected')` (and on the entries of
those memories) clears them by hand.

Cost: the function is replaced in place, a catalog change (no table lock, no rewrite).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# hindsight_ltm_deleted() as this revision wrote it (0028 reads the transition tables first)
DELETED = """
CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_history h SET old_value = NULL, new_value = NULL, source = NULL FROM old_rows o
  WHERE h.memory_id = o.id
    AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL OR h.source IS NOT NULL);
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT o.id, o.namespace, o.mem_key,
         CASE WHEN current_setting('hindsight.change', true) IN ('expired', 'rejected')
              THEN current_setting('hindsight.change', true) ELSE 'deleted' END,
         o.memory_type, NULL, NULL, o.confidence, NULL, o.observation_count, NULL,
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
    op.execute(DELETED)


def downgrade() -> None:
    op.execute(functions.written_by("0025", "DELETED"))
