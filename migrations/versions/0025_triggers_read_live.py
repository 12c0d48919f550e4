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

# the functions as this revision wrote them (0028 reads the transition tables first)
INSERTED = """
CREATE OR REPLACE FUNCTION hindsight_ltm_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT n.id, n.namespace, n.mem_key,
         CASE WHEN n.status = 'quarantined' THEN 'quarantined' ELSE 'created' END,
         n.memory_type, NULL, n.mem_value, NULL, n.confidence, n.observation_count, n.source,
         hindsight_actor(),
         nullif(current_setting('hindsight.reason', true), '')
  FROM new_rows n;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, count(*)
  FROM (SELECT n.namespace, unnest(n.keyword_terms || 0) AS term
        FROM new_rows n WHERE n.live) t
  GROUP BY t.namespace, t.term;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_inserted() IS
  'Writes created history entries and keyword document-frequency deltas.';
"""
UPDATED = """
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
  WHERE (o.mem_key, o.mem_value, o.memory_type, o.confidence, o.observation_count, o.status,
         o.importance, o.tags, o.metadata, o.verified, o.permanent, o.source, o.expires_at,
         o.occurred_at)
        IS DISTINCT FROM
        (n.mem_key, n.mem_value, n.memory_type, n.confidence, n.observation_count, n.status,
         n.importance, n.tags, n.metadata, n.verified, n.permanent, n.source, n.expires_at,
         n.occurred_at);

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT d.namespace, d.term, sum(d.delta)
  FROM (
    SELECT o.namespace, unnest(o.keyword_terms || 0) AS term, -1 AS delta
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.live
      AND (NOT n.live OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
           OR n.namespace <> o.namespace)
    UNION ALL
    SELECT n.namespace, unnest(n.keyword_terms || 0), 1
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.live
      AND (NOT o.live OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
           OR n.namespace <> o.namespace)
  ) d
  GROUP BY d.namespace, d.term
  HAVING sum(d.delta) <> 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_updated() IS
  'Writes history entries for real changes (not access counts) and keyword deltas.';
"""
LABEL_STATS = """
CREATE OR REPLACE FUNCTION hindsight_ltm_label_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO keyword_stats (namespace, term, df)
    SELECT n.namespace, t.term, count(*)
    FROM new_rows n, unnest(hindsight_label_terms(n.memory_type, n.tags)) t(term)
    WHERE n.live
    GROUP BY n.namespace, t.term;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO keyword_stats (namespace, term, df)
    SELECT o.namespace, t.term, -count(*)
    FROM old_rows o, unnest(hindsight_label_terms(o.memory_type, o.tags)) t(term)
    WHERE o.live
    GROUP BY o.namespace, t.term;
  ELSE
    INSERT INTO keyword_stats (namespace, term, df)
    SELECT d.namespace, d.term, sum(d.delta)
    FROM (
      SELECT o.namespace, unnest(hindsight_label_terms(o.memory_type, o.tags)) AS term,
             -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE o.live
        AND (NOT n.live OR n.memory_type <> o.memory_type
             OR n.tags IS DISTINCT FROM o.tags OR n.namespace <> o.namespace)
      UNION ALL
      SELECT n.namespace, unnest(hindsight_label_terms(n.memory_type, n.tags)), 1
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE n.live
        AND (NOT o.live OR n.memory_type <> o.memory_type
             OR n.tags IS DISTINCT FROM o.tags OR n.namespace <> o.namespace)
    ) d
    GROUP BY d.namespace, d.term
    HAVING sum(d.delta) <> 0;
  END IF;
  RETURN NULL;
END $$;
"""


def upgrade() -> None:
    op.execute(INSERTED + UPDATED)
    op.execute(DELETED)
    op.execute(LABEL_STATS)


def downgrade() -> None:
    for earlier, constant in BEFORE:
        op.execute(functions.written_by(earlier, constant))
