"""Initial schema: long-term memory, history, recall log, working memory, API keys.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Cost: creates empty tables; instant. Needs the `vector` extension (pgvector >= 0.7 for
halfvec and sparsevec); creating it needs a role allowed to create extensions.

The embedding width is taken from the embedding model the service is configured with
(`hindsight db upgrade` asks the model; plain `alembic upgrade` uses
HINDSIGHT_EMBEDDING_DIMENSIONS, else the built-in embedder's 384).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import HALFVEC, SPARSEVEC
from sqlalchemy.dialects import postgresql

from hindsight.db import functions
from hindsight.db.schema import migration_embedding

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here: later changes to the tokenizer's constant must not alter this migration.
KEYWORD_DIMENSIONS = 268435456

# History and keyword statistics are written by statement-level triggers with transition
# tables: set-based (one INSERT per statement, not per row), exact under any concurrency,
# and they also record changes an operator makes by hand in psql.
#
# The actor is taken from the transaction-local setting `hindsight.actor` that the service
# sets in each writing statement, else the database user (hindsight_actor(), loaded from
# hindsight/db/functions.sql with the triggers). `hindsight.change` lets the service call a
# value change an explicit 'updated' instead of the default 'superseded'.
#
# The trigger functions as this revision wrote them; later revisions replaced them.
TRIGGER_FUNCTIONS = r"""
CREATE FUNCTION hindsight_ltm_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor)
  SELECT n.id, n.namespace, n.mem_key, 'created', n.memory_type, NULL, n.mem_value, NULL,
         n.confidence, n.observation_count, n.source, hindsight_actor()
  FROM new_rows n;

  -- term 0 counts the namespace's active memories (BM25's N)
  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, count(*)
  FROM (SELECT n.namespace, unnest(n.keyword_terms || 0) AS term
        FROM new_rows n WHERE n.status = 'active') t
  GROUP BY t.namespace, t.term;
  RETURN NULL;
END $$;

CREATE FUNCTION hindsight_ltm_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
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
  RETURN NULL;
END $$;

COMMENT ON FUNCTION hindsight_ltm_inserted() IS
  'Writes created history entries and keyword document-frequency deltas.';
COMMENT ON FUNCTION hindsight_ltm_updated() IS
  'Writes history entries for real changes (not access counts) and keyword deltas.';
COMMENT ON FUNCTION hindsight_ltm_deleted() IS
  'Writes deleted history entries and keyword deltas.';
"""

DROP_TRIGGERS = """
DROP TRIGGER IF EXISTS long_term_memory_deleted ON long_term_memory;
DROP TRIGGER IF EXISTS long_term_memory_updated ON long_term_memory;
DROP TRIGGER IF EXISTS long_term_memory_inserted ON long_term_memory;
DROP FUNCTION IF EXISTS hindsight_ltm_deleted();
DROP FUNCTION IF EXISTS hindsight_ltm_updated();
DROP FUNCTION IF EXISTS hindsight_ltm_inserted();
DROP FUNCTION IF EXISTS hindsight_actor();
"""


def upgrade() -> None:
    embedding_name, dimensions = migration_embedding(op.get_context().config)
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "api_keys",
        sa.Column("id", sa.UUID(), nullable=False, comment="Key id."),
        sa.Column("name", sa.Text(), nullable=False, comment="Human name; recorded as actor."),
        sa.Column(
            "key_hash",
            sa.LargeBinary(),
            nullable=False,
            comment="SHA-256 of the key; the key itself is never stored.",
        ),
        sa.Column(
            "key_prefix",
            sa.Text(),
            nullable=False,
            comment="First characters of the key, to recognise it.",
        ),
        sa.Column(
            "namespaces",
            postgresql.ARRAY(sa.Text()),
            nullable=True,
            comment="Namespaces the key may use; null: all.",
        ),
        sa.Column(
            "is_admin",
            sa.Boolean(),
            server_default=sa.text("false"),
            nullable=False,
            comment="May manage keys and use every namespace.",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the key was created.",
        ),
        sa.Column(
            "revoked_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="When the key was revoked; revoked keys are refused.",
        ),
        sa.Column(
            "last_used_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="Roughly when the key was last used.",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
        sa.UniqueConstraint("name", name=op.f("uq_api_keys_name")),
        comment="API keys, stored hashed, optionally scoped to namespaces.",
    )
    op.create_table(
        "hindsight_meta",
        sa.Column("name", sa.Text(), nullable=False, comment="Setting name."),
        sa.Column("value", sa.Text(), nullable=False, comment="Setting value."),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_hindsight_meta")),
        comment="Facts about the schema itself, e.g. which embedding model made the vectors.",
    )
    op.create_table(
        "keyword_stats",
        sa.Column(
            "id",
            sa.BigInteger(),
            sa.Identity(always=True),
            nullable=False,
            comment="Row id; rows are deltas, merged by maintenance.",
        ),
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace counted."),
        sa.Column(
            "term", sa.Integer(), nullable=False, comment="Term hash; 0 counts active memories."
        ),
        sa.Column(
            "df",
            sa.BigInteger(),
            nullable=False,
            comment="Change in the number of active memories holding the term; sum per (namespace, term) for the total.",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_keyword_stats")),
        comment="Document frequencies for BM25 IDF, kept as append-only deltas so concurrent writers never wait on one another.",
    )
    op.create_index(
        "ix_keyword_stats_namespace_term", "keyword_stats", ["namespace", "term"], unique=False
    )
    op.create_table(
        "long_term_memory",
        sa.Column("id", sa.UUID(), nullable=False, comment="Stable id of this key's memory."),
        sa.Column(
            "namespace",
            sa.Text(),
            nullable=False,
            comment="Agent, user or tenant; nothing crosses it.",
        ),
        sa.Column(
            "memory_type",
            sa.Text(),
            nullable=False,
            comment="fact, preference, experience, reflection or relation.",
        ),
        sa.Column(
            "mem_key",
            sa.Text(),
            nullable=False,
            comment="What the claim is about; one active memory per (namespace, key).",
        ),
        sa.Column("mem_value", sa.Text(), nullable=False, comment="The claim itself."),
        sa.Column(
            "embedding",
            HALFVEC(dimensions),
            nullable=False,
            comment="Unit vector of key and value from the embedding model recorded in hindsight_meta (half precision).",
        ),
        sa.Column(
            "keywords",
            SPARSEVEC(KEYWORD_DIMENSIONS),
            nullable=False,
            comment="BM25 saturated term frequencies of key and value, indexed by term hash.",
        ),
        sa.Column(
            "keyword_terms",
            postgresql.ARRAY(sa.Integer()),
            nullable=False,
            comment="Sorted term hashes of keywords; feeds the document frequencies in keyword_stats.",
        ),
        sa.Column(
            "confidence",
            sa.Numeric(precision=5, scale=4),
            nullable=False,
            comment="Belief in the claim, 0..1; each re-observation of the same value adds the reinforcement step.",
        ),
        sa.Column(
            "importance",
            sa.Float(),
            server_default=sa.text("0.5"),
            nullable=False,
            comment="How much the claim matters to the agent, 0..1.",
        ),
        sa.Column(
            "access_count",
            sa.BigInteger(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Times recall returned this memory.",
        ),
        sa.Column(
            "observation_count",
            sa.Integer(),
            server_default=sa.text("1"),
            nullable=False,
            comment="Times the current value was observed.",
        ),
        sa.Column(
            "source", sa.Text(), nullable=True, comment="Who or what reported the claim last."
        ),
        sa.Column(
            "verified",
            sa.Boolean(),
            server_default=sa.text("false"),
            nullable=False,
            comment="A human or trusted process confirmed the claim.",
        ),
        sa.Column(
            "permanent",
            sa.Boolean(),
            server_default=sa.text("false"),
            nullable=False,
            comment="Exempt from forgetting policies.",
        ),
        sa.Column(
            "status",
            sa.Text(),
            server_default=sa.text("'active'"),
            nullable=False,
            comment="active (recalled) or archived (kept, never recalled).",
        ),
        sa.Column(
            "tags",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
            comment="Free labels for filtering.",
        ),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
            comment="Client-defined JSON object.",
        ),
        sa.Column(
            "changed_by",
            sa.Text(),
            nullable=True,
            comment="API key name (or psql user) behind the last change.",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the key was first stored.",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="Last change of value, confidence, type, tags or status.",
        ),
        sa.Column(
            "last_observed",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="Last time the claim was observed (created or reinforced).",
        ),
        sa.Column(
            "last_accessed",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="Last time recall returned it.",
        ),
        sa.CheckConstraint(
            "memory_type IN ('fact', 'preference', 'experience', 'reflection', 'relation')",
            name=op.f("ck_long_term_memory_memory_type"),
        ),
        sa.CheckConstraint(
            "status IN ('active', 'archived')", name=op.f("ck_long_term_memory_status")
        ),
        sa.CheckConstraint(
            "confidence >= 0 AND confidence <= 1", name=op.f("ck_long_term_memory_confidence_range")
        ),
        sa.CheckConstraint(
            "importance >= 0 AND importance <= 1", name=op.f("ck_long_term_memory_importance_range")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_long_term_memory")),
        comment="Long-term memory: one row per key/value claim with confidence and access counts.",
    )
    op.create_index(
        "ix_long_term_memory_embedding",
        "long_term_memory",
        ["embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "halfvec_cosine_ops"},
    )
    op.create_index(
        "ix_long_term_memory_keywords",
        "long_term_memory",
        ["keywords"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"keywords": "sparsevec_ip_ops"},
    )
    op.create_index(
        "ix_long_term_memory_namespace_id", "long_term_memory", ["namespace", "id"], unique=False
    )
    op.create_index(
        "uq_long_term_memory_active_key",
        "long_term_memory",
        ["namespace", "mem_key"],
        unique=True,
        postgresql_where=sa.text("status = 'active'"),
    )
    op.create_table(
        "memory_history",
        sa.Column(
            "id",
            sa.BigInteger(),
            sa.Identity(always=True),
            nullable=False,
            comment="Order of changes.",
        ),
        sa.Column(
            "memory_id",
            sa.UUID(),
            nullable=False,
            comment="long_term_memory.id (kept after the memory is deleted).",
        ),
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace of the memory."),
        sa.Column("mem_key", sa.Text(), nullable=False, comment="Key of the memory."),
        sa.Column(
            "change",
            sa.Text(),
            nullable=False,
            comment="created, reinforced, superseded, updated, archived, restored or deleted.",
        ),
        sa.Column("memory_type", sa.Text(), nullable=False, comment="Type after the change."),
        sa.Column(
            "old_value",
            sa.Text(),
            nullable=True,
            comment="Value before the change (null when created).",
        ),
        sa.Column(
            "new_value",
            sa.Text(),
            nullable=True,
            comment="Value after the change (null when deleted).",
        ),
        sa.Column(
            "old_confidence",
            sa.Numeric(precision=5, scale=4),
            nullable=True,
            comment="Confidence before the change.",
        ),
        sa.Column(
            "new_confidence",
            sa.Numeric(precision=5, scale=4),
            nullable=True,
            comment="Confidence after the change.",
        ),
        sa.Column(
            "observation_count",
            sa.Integer(),
            nullable=True,
            comment="Observation count after the change.",
        ),
        sa.Column("source", sa.Text(), nullable=True, comment="Source reported with the change."),
        sa.Column(
            "actor",
            sa.Text(),
            nullable=True,
            comment="API key name or database user that made the change.",
        ),
        sa.Column(
            "changed_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the change was committed.",
        ),
        sa.CheckConstraint(
            "change IN ('created', 'reinforced', 'superseded', 'updated', 'archived', 'restored', 'deleted')",
            name=op.f("ck_memory_history_change"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_history")),
        comment="Every change to a long-term memory, written by triggers on long_term_memory.",
    )
    op.create_index(
        "ix_memory_history_memory_id_id", "memory_history", ["memory_id", "id"], unique=False
    )
    op.create_index(
        "ix_memory_history_namespace_mem_key_id",
        "memory_history",
        ["namespace", "mem_key", "id"],
        unique=False,
    )
    op.create_table(
        "recall_log",
        sa.Column("id", sa.UUID(), nullable=False, comment="recall_id returned to the client."),
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace searched."),
        sa.Column("query", sa.Text(), nullable=False, comment="Query text as sent."),
        sa.Column("k", sa.Integer(), nullable=False, comment="Results asked for."),
        sa.Column(
            "filters",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
            comment="Filters as sent.",
        ),
        sa.Column(
            "result_ids",
            postgresql.ARRAY(sa.UUID()),
            nullable=False,
            comment="Returned memory ids, best first.",
        ),
        sa.Column(
            "scores",
            postgresql.ARRAY(sa.Float()),
            nullable=False,
            comment="Score of each returned memory.",
        ),
        sa.Column(
            "results",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="Per result: id, key, value, score and its components, as returned.",
        ),
        sa.Column("actor", sa.Text(), nullable=True, comment="API key name that asked."),
        sa.Column(
            "duration_ms",
            sa.Float(),
            nullable=True,
            comment="Time spent in the service, milliseconds.",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the recall ran.",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recall_log")),
        comment="One row per recall: what was asked and what came back, with scores.",
    )
    op.create_index(
        "ix_recall_log_namespace_created_at",
        "recall_log",
        ["namespace", "created_at"],
        unique=False,
    )
    op.create_table(
        "working_sessions",
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace of the session."),
        sa.Column("session_id", sa.Text(), nullable=False, comment="Client-chosen session id."),
        sa.Column(
            "status",
            sa.Text(),
            server_default=sa.text("'active'"),
            nullable=False,
            comment="active (accepts steps) or ended.",
        ),
        sa.Column(
            "next_step",
            sa.Integer(),
            server_default=sa.text("0"),
            nullable=False,
            comment="step_index the next appended step gets.",
        ),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
            comment="Client-defined JSON object.",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="First write.",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="Last write.",
        ),
        sa.Column(
            "ended_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="When the session was ended.",
        ),
        sa.Column(
            "expires_at",
            sa.DateTime(timezone=True),
            nullable=False,
            comment="When the session and its steps expire: the TTL after the last write.",
        ),
        sa.CheckConstraint(
            "status IN ('active', 'ended')", name=op.f("ck_working_sessions_status")
        ),
        sa.PrimaryKeyConstraint("namespace", "session_id", name=op.f("pk_working_sessions")),
        comment="Working-memory sessions: one running task each.",
    )
    op.create_index(
        "ix_working_sessions_expires_at", "working_sessions", ["expires_at"], unique=False
    )
    op.create_table(
        "working_memory",
        sa.Column(
            "id", sa.BigInteger(), sa.Identity(always=True), nullable=False, comment="Row id."
        ),
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace of the session."),
        sa.Column("session_id", sa.Text(), nullable=False, comment="Session the step belongs to."),
        sa.Column(
            "step_index",
            sa.Integer(),
            nullable=False,
            comment="Position in the session, from 0, assigned by the server.",
        ),
        sa.Column(
            "role",
            sa.Text(),
            nullable=False,
            comment="Who produced the step (user, assistant, tool, system ...).",
        ),
        sa.Column("content", sa.Text(), nullable=False, comment="What was done or said."),
        sa.Column(
            "summary",
            sa.Text(),
            nullable=True,
            comment="Short form used for older steps in the context read.",
        ),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
            comment="Client-defined JSON object.",
        ),
        sa.Column(
            "idempotency_key",
            sa.Text(),
            nullable=True,
            comment="Client retry key; a repeated append with the same key returns the first step.",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the step was appended.",
        ),
        sa.Column(
            "expires_at",
            sa.DateTime(timezone=True),
            nullable=False,
            comment="Expiry shared by all steps of the session; never returned after it.",
        ),
        sa.ForeignKeyConstraint(
            ["namespace", "session_id"],
            ["working_sessions.namespace", "working_sessions.session_id"],
            name=op.f("fk_working_memory_namespace_session_id_working_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_working_memory")),
        comment="Working memory: the steps of running sessions (Redis holds a hot copy).",
    )
    op.create_index("ix_working_memory_expires_at", "working_memory", ["expires_at"], unique=False)
    op.create_index(
        "uq_working_memory_idempotency_key",
        "working_memory",
        ["namespace", "session_id", "idempotency_key"],
        unique=True,
        postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )
    op.create_index(
        "uq_working_memory_step",
        "working_memory",
        ["namespace", "session_id", "step_index"],
        unique=True,
    )
    op.execute(TRIGGER_FUNCTIONS)
    op.execute(
        functions.load(
            hindsight_actor="45390ef4f7cb",
            long_term_memory_inserted="d13aa27ee10e",
            long_term_memory_updated="45b68ad4f60e",
            long_term_memory_deleted="b32a41b10e37",
        )
    )
    meta = sa.table("hindsight_meta", sa.column("name"), sa.column("value"))
    op.bulk_insert(
        meta,
        [
            {"name": "embedding_model", "value": embedding_name},
            {"name": "embedding_dimensions", "value": str(dimensions)},
        ],
    )


def downgrade() -> None:
    op.execute(DROP_TRIGGERS)
    op.drop_index("uq_working_memory_step", table_name="working_memory")
    op.drop_index(
        "uq_working_memory_idempotency_key",
        table_name="working_memory",
        postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )
    op.drop_index("ix_working_memory_expires_at", table_name="working_memory")
    op.drop_table("working_memory")
    op.drop_index("ix_working_sessions_expires_at", table_name="working_sessions")
    op.drop_table("working_sessions")
    op.drop_index("ix_recall_log_namespace_created_at", table_name="recall_log")
    op.drop_table("recall_log")
    op.drop_index("ix_memory_history_namespace_mem_key_id", table_name="memory_history")
    op.drop_index("ix_memory_history_memory_id_id", table_name="memory_history")
    op.drop_table("memory_history")
    op.drop_index(
        "uq_long_term_memory_active_key",
        table_name="long_term_memory",
        postgresql_where=sa.text("status = 'active'"),
    )
    op.drop_index("ix_long_term_memory_namespace_id", table_name="long_term_memory")
    op.drop_index(
        "ix_long_term_memory_keywords",
        table_name="long_term_memory",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"keywords": "sparsevec_ip_ops"},
    )
    op.drop_index(
        "ix_long_term_memory_embedding",
        table_name="long_term_memory",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "halfvec_cosine_ops"},
    )
    op.drop_table("long_term_memory")
    op.drop_index("ix_keyword_stats_namespace_term", table_name="keyword_stats")
    op.drop_table("keyword_stats")
    op.drop_table("hindsight_meta")
    op.drop_table("api_keys")
