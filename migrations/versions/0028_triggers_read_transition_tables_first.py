"""The history, keyword and session-end triggers read their transition tables first, then
write from what they read: the form that runs on a Citus cluster's shards.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-04

On a Citus cluster (`hindsight db distribute`) each trigger fires on the shard a statement
changed, and a statement there that writes a distributed table is planned by Citus, which
cannot see the trigger's transition tables ("executor could not find named tuplestore").
Each trigger now aggregates what it will write into a JSON value with a query on the
transition tables alone, and writes it with `hindsight_history_write(jsonb)` and
`hindsight_keyword_deltas(jsonb)` (new) or an INSERT from it. The deleted-memory trigger
matches history and access rows by `namespace = ANY(...) AND memory_id = ANY(...)` instead
of joining the transition table, which Citus routes to the co-located shard. What each
trigger writes is unchanged, on plain PostgreSQL and on Citus alike.

Cost: functions replaced in place and two created, a catalog change (no table lock, no
rewrite). The downgrade puts back the text that 0014, 0025 and 0026 wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# hindsight_ltm_updated as this migration loaded it (0034 changed it since)
UPDATED = """CREATE OR REPLACE FUNCTION hindsight_ltm_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entries jsonb;
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(e) INTO entries FROM (
    SELECT n.id AS memory_id, n.namespace, n.mem_key,
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
           END AS change,
           n.memory_type, o.mem_value AS old_value, n.mem_value AS new_value,
           o.confidence AS old_confidence, n.confidence AS new_confidence,
           n.observation_count, n.source, hindsight_actor() AS actor,
           coalesce(nullif(current_setting('hindsight.reason', true), ''),
                    CASE WHEN o.status = 'cold' AND n.status = 'active'
                              AND n.last_observed > o.last_observed THEN 'observed again'
                    END) AS reason
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.mem_key, o.mem_value, o.memory_type, o.confidence, o.observation_count, o.status,
           o.importance, o.tags, o.metadata, o.verified, o.permanent, o.source, o.expires_at,
           o.occurred_at)
          IS DISTINCT FROM
          (n.mem_key, n.mem_value, n.memory_type, n.confidence, n.observation_count, n.status,
           n.importance, n.tags, n.metadata, n.verified, n.permanent, n.source, n.expires_at,
           n.occurred_at)) e;

  SELECT jsonb_agg(x) INTO deltas FROM (
    SELECT d.namespace, d.term, sum(d.delta) AS df
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
    HAVING sum(d.delta) <> 0) x;
  PERFORM hindsight_history_write(entries), hindsight_keyword_deltas(deltas);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_updated() IS
  'Writes history entries for real changes (not access counts) and keyword deltas.';
"""

BEFORE = (
    ("0025", "INSERTED"),
    ("0025", "UPDATED"),
    ("0026", "DELETED"),
    ("0025", "LABEL_STATS"),
    ("0014", "SESSION_ENDED"),
)


def upgrade() -> None:
    op.execute(
        functions.load(
            hindsight_history_write="4cff03bc0ec6",
            hindsight_keyword_deltas="b29bf348e9e1",
            hindsight_ltm_inserted="9e5060bc9c26",
        )
    )
    op.execute(UPDATED)
    op.execute(
        functions.load(
            hindsight_ltm_deleted="be42021d17b5",
            hindsight_ltm_label_stats="e7c4e1e93e6d",
            hindsight_session_ended="fd7c83ce84d2",
        )
    )


def downgrade() -> None:
    for earlier, constant in BEFORE:
        op.execute(functions.written_by(earlier, constant))
    op.execute("DROP FUNCTION hindsight_keyword_deltas(jsonb)")
    op.execute("DROP FUNCTION hindsight_history_write(jsonb)")
