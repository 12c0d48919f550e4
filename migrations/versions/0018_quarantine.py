"""Quarantine: claims that wait for a curator's review.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-01

- long_term_memory: status `quarantined` (stored, never recalled nor listed by default, not
  holding its key: the one-live-row-per-key index covers active and cold only, so a
  contender of a verified memory waits beside it as a row of its own).
- memory_history: changes `quarantined` (stored for review), `approved` and `released`
  (made active by a curator, or by an independent trusted re-observation) and `rejected`
  (a curator's refusal: the claim is erased, its tombstone says so). The triggers take the
  reason from `hindsight.reason`, as for the lifecycle's changes.

- a partial index on (namespace, mem_key) of the quarantined rows: the review queue, and
  the claims waiting on a key that an observation may release.

Cost: the CHECK constraints are re-validated (one read of long_term_memory and one of
memory_history) under ACCESS EXCLUSIVE; the new index holds no rows yet (built in one read);
the trigger functions are replaced in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATUSES_BEFORE = "('active', 'cold', 'archived')"
STATUSES_AFTER = "('active', 'cold', 'archived', 'quarantined')"
CHANGES_BEFORE = (
    "('created', 'reinforced', 'superseded', 'updated', 'archived', 'restored', 'deleted', "
    "'cooled', 'warmed', 'expired')"
)
CHANGES_AFTER = (
    "('created', 'reinforced', 'superseded', 'updated', 'archived', 'restored', 'deleted', "
    "'cooled', 'warmed', 'expired', 'quarantined', 'approved', 'released', 'rejected')"
)
STATUS_BEFORE = "active, cold (recalled, ranked lower) or archived (kept, never recalled)."
STATUS_AFTER = (
    "active, cold (recalled, ranked lower), archived (kept, never recalled) or quarantined "
    "(waiting for a curator's review; never recalled)."
)
CHANGE_BEFORE = (
    "created, reinforced, superseded, updated, archived, restored, deleted, cooled, warmed "
    "or expired."
)
CHANGE_AFTER = (
    "created, reinforced, superseded, updated, archived, restored, deleted, cooled, warmed, "
    "expired, quarantined, approved, released or rejected."
)

# The three functions as 0014 and 0017 left them, with {placeholders} for what changes.
_FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT n.id, n.namespace, n.mem_key, {created}, n.memory_type, NULL, n.mem_value, NULL,
         n.confidence, n.observation_count, n.source, hindsight_actor(),
         nullif(current_setting('hindsight.reason', true), '')
  FROM new_rows n;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, count(*)
  FROM (SELECT n.namespace, unnest(n.keyword_terms || 0) AS term
        FROM new_rows n WHERE n.status IN ('active', 'cold')) t
  GROUP BY t.namespace, t.term;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION hindsight_ltm_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT n.id, n.namespace, n.mem_key,
         CASE{reviewed}
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
         o.importance, o.tags, o.metadata, o.verified, o.permanent, o.source, o.expires_at)
        IS DISTINCT FROM
        (n.mem_key, n.mem_value, n.memory_type, n.confidence, n.observation_count, n.status,
         n.importance, n.tags, n.metadata, n.verified, n.permanent, n.source, n.expires_at);

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

CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_history h SET old_value = NULL, new_value = NULL FROM old_rows o
  WHERE h.memory_id = o.id AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL);
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT o.id, o.namespace, o.mem_key,
         CASE WHEN current_setting('hindsight.change', true) IN {deleted_changes}
              THEN current_setting('hindsight.change', true) ELSE 'deleted' END,
         o.memory_type, NULL, NULL, o.confidence, NULL, o.observation_count, o.source,
         hindsight_actor(), nullif(current_setting('hindsight.reason', true), '')
  FROM old_rows o;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, -count(*)
  FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
        FROM old_rows o WHERE o.status IN ('active', 'cold')) t
  GROUP BY t.namespace, t.term;
  DELETE FROM memory_access a USING old_rows o
  WHERE a.namespace = o.namespace AND a.memory_id = o.id;
  RETURN NULL;
END $$;
"""

# a quarantined row is stored as `quarantined`; leaving quarantine is `approved` unless the
# service names the change (`released`). 0025's downgrade puts these back from here.
FUNCTIONS_AFTER = (
    _FUNCTIONS.replace(
        "{created}", "CASE WHEN n.status = 'quarantined' THEN 'quarantined' ELSE 'created' END"
    )
    .replace(
        "{reviewed}",
        "\n           WHEN o.status = 'quarantined' AND n.status <> 'quarantined'"
        "\n             THEN coalesce(nullif(current_setting('hindsight.change', true), ''),"
        "\n                           'approved')",
    )
    .replace("{deleted_changes}", "('expired', 'rejected')")
)
FUNCTIONS_BEFORE = (
    _FUNCTIONS.replace("{created}", "'created'")
    .replace("{reviewed}", "")
    .replace("{deleted_changes}", "('expired')")
)


def _constraints(statuses: str, changes: str, status: str, change: str) -> None:
    ltm = "long_term_memory"
    op.drop_constraint(op.f("ck_long_term_memory_status"), ltm, type_="check")
    op.create_check_constraint(op.f("ck_long_term_memory_status"), ltm, f"status IN {statuses}")
    op.alter_column(
        ltm,
        "status",
        existing_type=sa.Text(),
        existing_nullable=False,
        existing_server_default=sa.text("'active'"),
        comment=status,
    )
    op.drop_constraint(op.f("ck_memory_history_change"), "memory_history", type_="check")
    op.create_check_constraint(
        op.f("ck_memory_history_change"), "memory_history", f"change IN {changes}"
    )
    op.alter_column(
        "memory_history",
        "change",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment=change,
    )


def upgrade() -> None:
    _constraints(STATUSES_AFTER, CHANGES_AFTER, STATUS_AFTER, CHANGE_AFTER)
    op.create_index(
        "ix_long_term_memory_quarantined_key",
        "long_term_memory",
        ["namespace", "mem_key"],
        postgresql_where=sa.text("status = 'quarantined'"),
    )
    op.execute(FUNCTIONS_AFTER)


def downgrade() -> None:
    # claims still waiting for review are kept, archived (never recalled, as before)
    op.execute(FUNCTIONS_BEFORE)
    op.execute(
        "UPDATE long_term_memory SET status = 'archived' WHERE status = 'quarantined' "
        "AND set_config('hindsight.reason', 'downgrade: quarantine removed', true) IS NOT NULL"
    )
    op.execute(
        "UPDATE memory_history SET change = CASE change WHEN 'quarantined' THEN 'created' "
        "WHEN 'rejected' THEN 'deleted' ELSE 'restored' END "
        "WHERE change IN ('quarantined', 'approved', 'released', 'rejected')"
    )
    op.drop_index("ix_long_term_memory_quarantined_key", table_name="long_term_memory")
    _constraints(STATUSES_BEFORE, CHANGES_BEFORE, STATUS_BEFORE, CHANGE_BEFORE)
