"""Lifecycle: cold tier, hard expiry, namespace policies, feedback, session demotion.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01

- long_term_memory: status `cold` (still recalled, ranked lower), types `event` and
  `summary`, `expires_at` (hard expiry); the one-memory-per-key index covers active and cold.
- memory_history: `reason` for every change the lifecycle makes, changes `cooled`, `warmed`
  and `expired`; the triggers read `hindsight.reason` as they read `hindsight.actor`.
- namespace_policy (the policy document), namespace_lifecycle (the scheduler's state),
  session_demotions (ended sessions whose event memories await demotion; filled by a
  trigger on working_sessions), recall_feedback and memory_access.used_count.

Cost: the column additions only change the catalog; the unique index is rebuilt (one read
of long_term_memory, about a second per 100k memories) and the CHECK constraints are
re-validated (one more read). Takes ACCESS EXCLUSIVE on long_term_memory meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from hindsight.db import functions

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TYPES_BEFORE = "('fact', 'preference', 'experience', 'reflection', 'relation')"
TYPES_AFTER = "('fact', 'preference', 'experience', 'reflection', 'relation', 'event', 'summary')"
CHANGES_BEFORE = (
    "('created', 'reinforced', 'superseded', 'updated', 'archived', 'restored', 'deleted')"
)
CHANGES_AFTER = (
    "('created', 'reinforced', 'superseded', 'updated', 'archived', 'restored', 'deleted', "
    "'cooled', 'warmed', 'expired')"
)

# Active and cold memories are "live": both are recalled and both count in the keyword
# statistics, so cooling a memory changes no IDF. The reason of a change comes from the
# transaction-local `hindsight.reason` the service sets, else a default the trigger infers.
TRIGGERS = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT n.id, n.namespace, n.mem_key, 'created', n.memory_type, NULL, n.mem_value, NULL,
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
         CASE
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
  -- a deletion is an erasure (0013): earlier entries lose their values, the tombstone has none
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
  DELETE FROM memory_access a USING old_rows o WHERE a.memory_id = o.id;
  RETURN NULL;
END $$;
"""

# The functions as 0001 and 0003 left them (frozen here for the downgrade).
TRIGGERS_BEFORE = r"""
DROP TRIGGER IF EXISTS working_sessions_ended ON working_sessions;
DROP FUNCTION IF EXISTS hindsight_session_ended();

CREATE OR REPLACE FUNCTION hindsight_ltm_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor)
  SELECT n.id, n.namespace, n.mem_key, 'created', n.memory_type, NULL, n.mem_value, NULL,
         n.confidence, n.observation_count, n.source, hindsight_actor()
  FROM new_rows n;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, count(*)
  FROM (SELECT n.namespace, unnest(n.keyword_terms || 0) AS term
        FROM new_rows n WHERE n.status = 'active') t
  GROUP BY t.namespace, t.term;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION hindsight_ltm_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor)
  SELECT n.id, n.namespace, n.mem_key,
         CASE
           WHEN o.status = 'active' AND n.status <> 'active' THEN 'archived'
           WHEN o.status <> 'active' AND n.status = 'active' THEN 'restored'
           WHEN o.mem_value IS DISTINCT FROM n.mem_value
             THEN coalesce(nullif(current_setting('hindsight.change', true), ''), 'superseded')
           WHEN n.observation_count > o.observation_count THEN 'reinforced'
           ELSE 'updated'
         END,
         n.memory_type, o.mem_value, n.mem_value, o.confidence, n.confidence,
         n.observation_count, n.source, hindsight_actor()
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE (o.mem_key, o.mem_value, o.memory_type, o.confidence, o.observation_count, o.status,
         o.importance, o.tags, o.metadata, o.verified, o.permanent, o.source)
        IS DISTINCT FROM
        (n.mem_key, n.mem_value, n.memory_type, n.confidence, n.observation_count, n.status,
         n.importance, n.tags, n.metadata, n.verified, n.permanent, n.source);

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT d.namespace, d.term, sum(d.delta)
  FROM (
    SELECT o.namespace, unnest(o.keyword_terms || 0) AS term, -1 AS delta
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.status = 'active'
      AND (n.status <> 'active' OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
           OR n.namespace <> o.namespace)
    UNION ALL
    SELECT n.namespace, unnest(n.keyword_terms || 0), 1
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.status = 'active'
      AND (o.status <> 'active' OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
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
                              source, actor)
  SELECT o.id, o.namespace, o.mem_key, 'deleted', o.memory_type, NULL, NULL,
         o.confidence, NULL, o.observation_count, o.source, hindsight_actor()
  FROM old_rows o;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, -count(*)
  FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
        FROM old_rows o WHERE o.status = 'active') t
  GROUP BY t.namespace, t.term;
  DELETE FROM memory_access a USING old_rows o WHERE a.memory_id = o.id;
  RETURN NULL;
END $$;
"""


def _ts(name: str, comment: str, *, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        name,
        sa.DateTime(timezone=True),
        nullable=nullable,
        server_default=None if nullable else sa.text("now()"),
        comment=comment,
    )


# hindsight_session_ended() as this revision wrote it (0028 reads the transition tables first)
SESSION_ENDED = """
CREATE OR REPLACE FUNCTION hindsight_session_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO session_demotions (namespace, session_id, ended_at)
  SELECT n.namespace, n.session_id, coalesce(n.ended_at, now())
  FROM new_rows n JOIN old_rows o ON o.namespace = n.namespace AND o.session_id = n.session_id
  WHERE o.status <> 'ended' AND n.status = 'ended'
  ON CONFLICT (namespace, session_id) DO NOTHING;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_session_ended() IS
  'Queues an ended session for the demotion of the event memories it produced.';
"""


def upgrade() -> None:
    ltm = "long_term_memory"
    op.add_column(
        ltm,
        _ts("expires_at", "Hard expiry: never returned after it, and the purge deletes it."),
    )
    op.create_index(
        "ix_long_term_memory_expires_at",
        ltm,
        ["expires_at"],
        postgresql_where=sa.text("expires_at IS NOT NULL"),
    )
    op.drop_constraint(op.f("ck_long_term_memory_status"), ltm, type_="check")
    op.create_check_constraint(
        op.f("ck_long_term_memory_status"), ltm, "status IN ('active', 'cold', 'archived')"
    )
    op.drop_constraint(op.f("ck_long_term_memory_memory_type"), ltm, type_="check")
    op.create_check_constraint(
        op.f("ck_long_term_memory_memory_type"), ltm, f"memory_type IN {TYPES_AFTER}"
    )
    op.alter_column(
        ltm,
        "status",
        existing_type=sa.Text(),
        existing_nullable=False,
        existing_server_default=sa.text("'active'"),
        comment="active, cold (recalled, ranked lower) or archived (kept, never recalled).",
    )
    op.alter_column(
        ltm,
        "memory_type",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment="fact, preference, experience, reflection, relation, event or summary.",
    )
    op.drop_index("uq_long_term_memory_active_key", table_name=ltm)
    op.create_index(
        "uq_long_term_memory_active_key",
        ltm,
        ["namespace", "mem_key"],
        unique=True,
        postgresql_where=sa.text("status IN ('active', 'cold')"),
    )

    op.add_column(
        "memory_history",
        sa.Column("reason", sa.Text(), comment="Why the change was made (lifecycle rules)."),
    )
    op.drop_constraint(op.f("ck_memory_history_change"), "memory_history", type_="check")
    op.create_check_constraint(
        op.f("ck_memory_history_change"), "memory_history", f"change IN {CHANGES_AFTER}"
    )
    op.alter_column(
        "memory_history",
        "change",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment="created, reinforced, superseded, updated, archived, restored, deleted, "
        "cooled, warmed or expired.",
    )

    op.add_column(
        "memory_access",
        sa.Column(
            "used_count",
            sa.BigInteger(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Times feedback said the agent used the memory a recall returned.",
        ),
    )
    op.add_column(
        "memory_access",
        sa.Column(
            "unused_count",
            sa.BigInteger(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Times feedback said a returned memory went unused.",
        ),
    )
    op.add_column("memory_access", _ts("last_used", "Last time feedback said it was used."))

    op.create_table(
        "namespace_policy",
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace the policy governs."),
        sa.Column(
            "policy",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
            comment="The fields set by the last PUT, by section (lifecycle, ranking, "
            "capacity); unset fields take the server's defaults.",
        ),
        sa.Column("updated_by", sa.Text(), nullable=True, comment="API key name of the last PUT."),
        _ts("updated_at", "When it was last replaced.", nullable=False),
        sa.PrimaryKeyConstraint("namespace", name=op.f("pk_namespace_policy")),
        comment="Per-namespace policy document: lifecycle thresholds, ranking factor weights, "
        "capacity.",
    )
    op.create_table(
        "namespace_lifecycle",
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace."),
        _ts("last_pass_at", "Clock of the last lifecycle pass over the namespace."),
        _ts("low_confidence_pass_at", "Clock of the last low-confidence archiving pass."),
        sa.Column(
            "merge_cursor",
            sa.UUID(),
            nullable=True,
            comment="Retroactive merge resumes after this memory id (null: from the start).",
        ),
        sa.Column(
            "active_count",
            sa.BigInteger(),
            nullable=True,
            comment="Active memories the last pass found, before capacity archiving.",
        ),
        sa.Column("capacity", sa.BigInteger(), nullable=True, comment="Capacity then in force."),
        sa.Column(
            "capacity_archived",
            sa.BigInteger(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Memories the last pass archived to get down to the capacity.",
        ),
        sa.PrimaryKeyConstraint("namespace", name=op.f("pk_namespace_lifecycle")),
        comment="The lifecycle scheduler's state per namespace (what it last did).",
    )
    op.create_table(
        "session_demotions",
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace of the session."),
        sa.Column("session_id", sa.Text(), nullable=False, comment="The ended session."),
        _ts("ended_at", "When it ended; demotion is due a policy delay after.", nullable=False),
        sa.PrimaryKeyConstraint("namespace", "session_id", name=op.f("pk_session_demotions")),
        comment="Ended sessions whose event and experience memories are still to be demoted; "
        "a row goes once done.",
    )
    op.create_table(
        "recall_feedback",
        sa.Column("recall_id", sa.UUID(), nullable=False, comment="recall_log.id."),
        sa.Column("memory_id", sa.UUID(), nullable=False, comment="A memory that recall returned."),
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace of the recall."),
        sa.Column("used", sa.Boolean(), nullable=False, comment="The agent used it (or not)."),
        sa.Column("actor", sa.Text(), nullable=True, comment="API key name that reported it."),
        _ts("created_at", "When the feedback arrived.", nullable=False),
        sa.PrimaryKeyConstraint(
            "namespace", "recall_id", "memory_id", name=op.f("pk_recall_feedback")
        ),
        comment="Which recalled memories the agent used; the first report per pair counts.",
    )
    op.create_index(
        "ix_recall_feedback_namespace_memory_id",
        "recall_feedback",
        ["namespace", "memory_id"],
    )
    op.execute(TRIGGERS)
    # the demotion queue's trigger on working_sessions
    op.execute(SESSION_ENDED)
    op.execute(functions.load(working_sessions_ended="a03e2d27b33a"))


def downgrade() -> None:
    # cold memories were live: they are active again (while this revision's triggers still
    # count cold as live, so the keyword statistics stay exact); the new types map to their
    # nearest old ones
    op.execute(
        "UPDATE long_term_memory SET status = 'active' WHERE status = 'cold'; "
        "UPDATE long_term_memory SET memory_type = CASE memory_type WHEN 'event' "
        "THEN 'experience' ELSE 'reflection' END WHERE memory_type IN ('event', 'summary')"
    )
    op.execute(TRIGGERS_BEFORE)
    op.drop_index("ix_recall_feedback_namespace_memory_id", table_name="recall_feedback")
    op.drop_table("recall_feedback")
    op.drop_table("session_demotions")
    op.drop_table("namespace_lifecycle")
    op.drop_table("namespace_policy")
    op.drop_column("memory_access", "last_used")
    op.drop_column("memory_access", "unused_count")
    op.drop_column("memory_access", "used_count")

    op.execute(
        "UPDATE memory_history SET change = CASE change WHEN 'cooled' THEN 'updated' "
        "WHEN 'warmed' THEN 'restored' WHEN 'expired' THEN 'deleted' ELSE change END "
        "WHERE change IN ('cooled', 'warmed', 'expired')"
    )
    op.drop_constraint(op.f("ck_memory_history_change"), "memory_history", type_="check")
    op.create_check_constraint(
        op.f("ck_memory_history_change"), "memory_history", f"change IN {CHANGES_BEFORE}"
    )
    op.alter_column(
        "memory_history",
        "change",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment="created, reinforced, superseded, updated, archived, restored or deleted.",
    )
    op.drop_column("memory_history", "reason")

    ltm = "long_term_memory"
    op.drop_index("uq_long_term_memory_active_key", table_name=ltm)
    op.create_index(
        "uq_long_term_memory_active_key",
        ltm,
        ["namespace", "mem_key"],
        unique=True,
        postgresql_where=sa.text("status = 'active'"),
    )
    op.drop_constraint(op.f("ck_long_term_memory_memory_type"), ltm, type_="check")
    op.create_check_constraint(
        op.f("ck_long_term_memory_memory_type"), ltm, f"memory_type IN {TYPES_BEFORE}"
    )
    op.drop_constraint(op.f("ck_long_term_memory_status"), ltm, type_="check")
    op.create_check_constraint(
        op.f("ck_long_term_memory_status"), ltm, "status IN ('active', 'archived')"
    )
    op.alter_column(
        ltm,
        "status",
        existing_type=sa.Text(),
        existing_nullable=False,
        existing_server_default=sa.text("'active'"),
        comment="active (recalled) or archived (kept, never recalled).",
    )
    op.alter_column(
        ltm,
        "memory_type",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment="fact, preference, experience, reflection or relation.",
    )
    op.drop_index("ix_long_term_memory_expires_at", table_name=ltm)
    op.drop_column(ltm, "expires_at")
