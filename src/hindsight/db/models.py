"""The schema as SQLAlchemy metadata: what Alembic's migrations must produce.

The service talks to the database through the SQL in `hindsight.stores`; these tables are
the contract that `alembic check` holds the migrations to, and their comments become the
`COMMENT ON` text an operator reads with `\\d+` in psql.

The embedding column's width is fixed when the schema is created (it follows the embedding
model), so the model declares it without one; `hindsight.db.schema` reads the real width.
"""

from __future__ import annotations

from pgvector.sqlalchemy import HALFVEC, SPARSEVEC
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from hindsight import limits
from hindsight.text.tokenize import KEYWORD_DIMENSIONS

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

MEMORY_TYPES = limits.MEMORY_TYPES
MEMORY_STATUSES = ("active", "cold", "archived", "quarantined")
# Recalled and holding their key: the statuses the unique index and keyword statistics cover.
LIVE_STATUSES = ("active", "cold")
SESSION_STATUSES = ("active", "ended")


def _timestamp(name: str, comment: str, *, nullable: bool = False, default: bool = True) -> Column:  # type: ignore[type-arg]
    return Column(
        name,
        DateTime(timezone=True),
        nullable=nullable,
        server_default=text("now()") if default else None,
        comment=comment,
    )


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


long_term_memory = Table(
    "long_term_memory",
    metadata,
    Column("id", UUID(as_uuid=True), comment="Stable id of this key's memory."),
    Column("namespace", Text, nullable=False, comment="Agent, user or tenant; nothing crosses it."),
    Column(
        "memory_type",
        Text,
        nullable=False,
        comment="fact, preference, experience, reflection, relation, event or summary.",
    ),
    Column(
        "mem_key",
        Text,
        nullable=False,
        comment="What the claim is about; one active memory per (namespace, key).",
    ),
    Column("mem_value", Text, nullable=False, comment="The claim itself."),
    Column(
        "embedding",
        HALFVEC(),
        nullable=False,
        comment="Unit vector of key and value from "
        "the embedding model recorded in hindsight_meta (half precision).",
    ),
    Column(
        "keywords",
        SPARSEVEC(KEYWORD_DIMENSIONS),
        nullable=False,
        comment="BM25 saturated term frequencies of key and value, indexed by term hash.",
    ),
    Column(
        "keyword_terms",
        ARRAY(Integer),
        nullable=False,
        comment="Sorted term hashes of keywords; feeds the document frequencies in keyword_stats.",
    ),
    Column(
        "confidence",
        Numeric(5, 4),
        nullable=False,
        comment="Belief in the claim, 0..1; "
        "each re-observation of the same value adds the reinforcement step.",
    ),
    Column(
        "importance",
        Float,
        nullable=False,
        server_default=text("0.5"),
        comment="How much the claim matters to the agent, 0..1.",
    ),
    Column(
        "observation_count",
        Integer,
        nullable=False,
        server_default=text("1"),
        comment="Times the current value was observed.",
    ),
    Column("source", Text, comment="Who or what reported the claim last."),
    Column(
        "verified",
        Boolean,
        nullable=False,
        server_default=text("false"),
        comment="A human or trusted process confirmed the claim.",
    ),
    Column(
        "permanent",
        Boolean,
        nullable=False,
        server_default=text("false"),
        comment="Exempt from forgetting policies.",
    ),
    Column(
        "status",
        Text,
        nullable=False,
        server_default=text("'active'"),
        comment="active, cold (recalled, ranked lower), archived (kept, never recalled) or "
        "quarantined (waiting for a curator's review; never recalled).",
    ),
    Column(
        "tags",
        ARRAY(Text),
        nullable=False,
        server_default=text("'{}'"),
        comment="Free labels for filtering.",
    ),
    Column(
        "metadata",
        JSONB,
        nullable=False,
        server_default=text("'{}'"),
        comment="Client-defined JSON object.",
    ),
    Column("changed_by", Text, comment="API key name (or psql user) behind the last change."),
    _timestamp("created_at", "When the key was first stored."),
    _timestamp("updated_at", "Last change of value, confidence, type, tags or status."),
    _timestamp("last_observed", "Last time the claim was observed (created or reinforced)."),
    _timestamp(
        "expires_at",
        "Hard expiry: never returned after it, and the purge deletes it.",
        nullable=True,
        default=False,
    ),
    _timestamp(
        "occurred_at",
        "When the thing the claim describes happened (set by the client or by extraction), "
        "as opposed to created_at, when it was recorded; null: unknown, and recall's time "
        "filters and time factor use created_at instead.",
        nullable=True,
        default=False,
    ),
    # The partial indexes name these, never `status`: a column that an index names makes
    # every change of it a non-HOT update, which re-inserts the row into both HNSW indexes
    # (migration 0020). Cooling and warming change `status` but neither of these.
    Column(
        "live",
        Boolean,
        Computed(_in("status", LIVE_STATUSES), persisted=True),
        nullable=False,
        comment="status is active or cold (computed): the row holds its key and is recalled.",
    ),
    Column(
        "quarantined",
        Boolean,
        Computed("status = 'quarantined'", persisted=True),
        nullable=False,
        comment="status is quarantined (computed): the row waits for a curator's review.",
    ),
    CheckConstraint(_in("memory_type", MEMORY_TYPES), name="memory_type"),
    CheckConstraint(_in("status", MEMORY_STATUSES), name="status"),
    CheckConstraint("confidence >= 0 AND confidence <= 1", name="confidence_range"),
    CheckConstraint("importance >= 0 AND importance <= 1", name="importance_range"),
    PrimaryKeyConstraint("namespace", "id", name="pk_long_term_memory"),
    comment="Long-term memory: one row per key/value claim with confidence and access counts.",
    # room on every page for one more version of a row (~1.3 kB, 1.5 kB at most), so that
    # a tier move can stay on its page (a HOT update)
    postgresql_with={"fillfactor": 80},
)
Index(
    "uq_long_term_memory_active_key",
    long_term_memory.c.namespace,
    long_term_memory.c.mem_key,
    unique=True,
    postgresql_where=text("live"),
)
# the review queue, and the claims waiting on a key (observe checks them for a release)
Index(
    "ix_long_term_memory_quarantined_key",
    long_term_memory.c.namespace,
    long_term_memory.c.mem_key,
    postgresql_where=text("quarantined"),
)
Index(
    "ix_long_term_memory_expires_at",
    long_term_memory.c.expires_at,
    postgresql_where=text("expires_at IS NOT NULL"),
)
Index(
    "ix_long_term_memory_embedding",
    long_term_memory.c.embedding,
    postgresql_using="hnsw",
    postgresql_with={"m": 16, "ef_construction": 64},
    postgresql_ops={"embedding": "halfvec_cosine_ops"},
)
Index(
    "ix_long_term_memory_keywords",
    long_term_memory.c.keywords,
    postgresql_using="hnsw",
    postgresql_with={"m": 16, "ef_construction": 64},
    postgresql_ops={"keywords": "sparsevec_ip_ops"},
)
Index(
    "ix_long_term_memory_keyword_terms",
    long_term_memory.c.keyword_terms,
    postgresql_using="gin",
)

memory_history = Table(
    "memory_history",
    metadata,
    Column("id", BigInteger, Identity(always=True), comment="Order of changes."),
    Column(
        "memory_id",
        UUID(as_uuid=True),
        nullable=False,
        comment="long_term_memory.id (kept after the memory is deleted).",
    ),
    Column("namespace", Text, nullable=False, comment="Namespace of the memory."),
    Column("mem_key", Text, nullable=False, comment="Key of the memory."),
    Column(
        "change",
        Text,
        nullable=False,
        comment="created, reinforced, superseded, updated, archived, restored, deleted, "
        "cooled, warmed, expired, quarantined, approved, released or rejected.",
    ),
    Column("memory_type", Text, nullable=False, comment="Type after the change."),
    Column(
        "old_value",
        Text,
        comment="Value before the change (null when created); null once the memory is deleted.",
    ),
    Column(
        "new_value",
        Text,
        comment="Value after the change (null when deleted); null once the memory is deleted.",
    ),
    Column("old_confidence", Numeric(5, 4), comment="Confidence before the change."),
    Column("new_confidence", Numeric(5, 4), comment="Confidence after the change."),
    Column("observation_count", Integer, comment="Observation count after the change."),
    Column("source", Text, comment="Source reported with the change."),
    Column("actor", Text, comment="API key name or database user that made the change."),
    _timestamp("changed_at", "When the change was committed."),
    Column("reason", Text, comment="Why the change was made (lifecycle rules)."),
    CheckConstraint(
        _in(
            "change",
            (
                "created",
                "reinforced",
                "superseded",
                "updated",
                "archived",
                "restored",
                "deleted",
                "cooled",
                "warmed",
                "expired",
                "quarantined",
                "approved",
                "released",
                "rejected",
            ),
        ),
        name="change",
    ),
    PrimaryKeyConstraint("namespace", "id", name="pk_memory_history"),
    comment="Every change to a long-term memory, written by triggers on long_term_memory.",
)
Index("ix_memory_history_memory_id_id", memory_history.c.memory_id, memory_history.c.id)
Index(
    "ix_memory_history_namespace_mem_key_id",
    memory_history.c.namespace,
    memory_history.c.mem_key,
    memory_history.c.id,
)

recall_log = Table(
    "recall_log",
    metadata,
    Column("id", UUID(as_uuid=True), comment="recall_id returned to the client."),
    Column("namespace", Text, nullable=False, comment="Namespace searched."),
    Column("query", Text, nullable=False, comment="Query text as sent."),
    Column("k", Integer, nullable=False, comment="Results asked for."),
    Column(
        "filters", JSONB, nullable=False, server_default=text("'{}'"), comment="Filters as sent."
    ),
    Column(
        "result_ids",
        ARRAY(UUID(as_uuid=True)),
        nullable=False,
        comment="Returned memory ids, best first.",
    ),
    Column("scores", ARRAY(Float), nullable=False, comment="Score of each returned memory."),
    Column(
        "results",
        JSONB,
        nullable=False,
        comment="Per result: id, key, value, score and its components, as returned.",
    ),
    Column("actor", Text, comment="API key name that asked."),
    Column("duration_ms", Float, comment="Time spent in the service, milliseconds."),
    _timestamp("created_at", "When the recall ran."),
    PrimaryKeyConstraint("namespace", "id", name="pk_recall_log"),
    comment="One row per recall: what was asked and what came back, with scores.",
)
Index("ix_recall_log_namespace_created_at", recall_log.c.namespace, recall_log.c.created_at)

keyword_stats = Table(
    "keyword_stats",
    metadata,
    Column(
        "id",
        BigInteger,
        Identity(always=True),
        comment="Row id; rows are deltas, merged by maintenance.",
    ),
    Column("namespace", Text, nullable=False, comment="Namespace counted."),
    Column("term", Integer, nullable=False, comment="Term hash; 0 counts active memories."),
    Column(
        "df",
        BigInteger,
        nullable=False,
        comment="Change in the number of active "
        "memories holding the term; sum per (namespace, term) for the total.",
    ),
    PrimaryKeyConstraint("namespace", "id", name="pk_keyword_stats"),
    comment="Document frequencies for BM25 IDF, kept as append-only deltas so concurrent "
    "writers never wait on one another.",
)
Index("ix_keyword_stats_namespace_term", keyword_stats.c.namespace, keyword_stats.c.term)
# maintenance merges the rows added since its watermark
Index("ix_keyword_stats_id", keyword_stats.c.id)

working_sessions = Table(
    "working_sessions",
    metadata,
    Column("namespace", Text, primary_key=True, comment="Namespace of the session."),
    Column("session_id", Text, primary_key=True, comment="Client-chosen session id."),
    Column(
        "status",
        Text,
        nullable=False,
        server_default=text("'active'"),
        comment="active (accepts steps) or ended.",
    ),
    Column(
        "next_step",
        Integer,
        nullable=False,
        server_default=text("0"),
        comment="step_index the next appended step gets.",
    ),
    Column(
        "metadata",
        JSONB,
        nullable=False,
        server_default=text("'{}'"),
        comment="Client-defined JSON object.",
    ),
    _timestamp("created_at", "First write."),
    _timestamp("updated_at", "Last write."),
    _timestamp("ended_at", "When the session was ended.", nullable=True, default=False),
    _timestamp(
        "expires_at",
        "When the session and its steps expire: the TTL after the last write.",
        default=False,
    ),
    Column(
        "consolidated_through",
        Integer,
        nullable=False,
        server_default=text("-1"),
        comment="Highest step_index already distilled into long-term memory (-1: none).",
    ),
    CheckConstraint(_in("status", SESSION_STATUSES), name="status"),
    comment="Working-memory sessions: one running task each.",
)
Index("ix_working_sessions_expires_at", working_sessions.c.expires_at)

working_memory = Table(
    "working_memory",
    metadata,
    Column("id", BigInteger, Identity(always=True), comment="Row id."),
    Column("namespace", Text, nullable=False, comment="Namespace of the session."),
    Column("session_id", Text, nullable=False, comment="Session the step belongs to."),
    Column(
        "step_index",
        Integer,
        nullable=False,
        comment="Position in the session, from 0, assigned by the server.",
    ),
    Column(
        "role",
        Text,
        nullable=False,
        comment="Who produced the step (user, assistant, tool, system ...).",
    ),
    Column("content", Text, nullable=False, comment="What was done or said."),
    Column("summary", Text, comment="Short form used for older steps in the context read."),
    Column(
        "metadata",
        JSONB,
        nullable=False,
        server_default=text("'{}'"),
        comment="Client-defined JSON object.",
    ),
    Column(
        "idempotency_key",
        Text,
        comment="Client retry key; a repeated append with the same key returns the first step.",
    ),
    _timestamp("created_at", "When the step was appended."),
    _timestamp(
        "expires_at",
        "Expiry shared by all steps of the session; never returned after it.",
        default=False,
    ),
    _timestamp(
        "occurred_at",
        "When the step's event happened, if the client said (e.g. a replayed conversation); "
        "null: when it was appended (created_at).",
        nullable=True,
        default=False,
    ),
    ForeignKeyConstraint(
        ["namespace", "session_id"],
        ["working_sessions.namespace", "working_sessions.session_id"],
        ondelete="CASCADE",
    ),
    PrimaryKeyConstraint("namespace", "id", name="pk_working_memory"),
    comment="Working memory: the steps of running sessions (Redis holds a hot copy).",
)
Index(
    "uq_working_memory_step",
    working_memory.c.namespace,
    working_memory.c.session_id,
    working_memory.c.step_index,
    unique=True,
)
Index(
    "uq_working_memory_idempotency_key",
    working_memory.c.namespace,
    working_memory.c.session_id,
    working_memory.c.idempotency_key,
    unique=True,
    postgresql_where=text("idempotency_key IS NOT NULL"),
)
Index("ix_working_memory_expires_at", working_memory.c.expires_at)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True, comment="Key id."),
    Column("name", Text, nullable=False, unique=True, comment="Human name; recorded as actor."),
    Column(
        "key_hash",
        LargeBinary,
        nullable=False,
        unique=True,
        comment="SHA-256 of the key; the key itself is never stored.",
    ),
    Column(
        "key_prefix", Text, nullable=False, comment="First characters of the key, to recognise it."
    ),
    Column("namespaces", ARRAY(Text), comment="Namespaces the key may use; null: all."),
    Column(
        "role",
        Text,
        nullable=False,
        server_default=text("'writer'"),
        comment="reader, writer, curator or admin; each may do what the one before may.",
    ),
    _timestamp("created_at", "When the key was created."),
    _timestamp(
        "revoked_at",
        "When the key was revoked; revoked keys are refused.",
        nullable=True,
        default=False,
    ),
    _timestamp("last_used_at", "Roughly when the key was last used.", nullable=True, default=False),
    CheckConstraint(_in("role", ("reader", "writer", "curator", "admin")), name="role"),
    comment="API keys, stored hashed, optionally scoped to namespaces.",
)

hindsight_meta = Table(
    "hindsight_meta",
    metadata,
    Column("name", Text, primary_key=True, comment="Setting name."),
    Column("value", Text, nullable=False, comment="Setting value."),
    comment="Facts about the schema itself, e.g. which embedding model made the vectors.",
)

memory_access = Table(
    "memory_access",
    metadata,
    Column("namespace", Text, nullable=False, comment="Namespace of the memory."),
    Column(
        "memory_id",
        UUID(as_uuid=True),
        nullable=False,
        comment="long_term_memory.id; the row goes when the memory does.",
    ),
    Column(
        "access_count",
        BigInteger,
        nullable=False,
        server_default=text("0"),
        comment="Times recall returned the memory.",
    ),
    _timestamp("last_accessed", "Last time recall returned it.", nullable=True, default=False),
    Column(
        "used_count",
        BigInteger,
        nullable=False,
        server_default=text("0"),
        comment="Times feedback said the agent used the memory a recall returned.",
    ),
    Column(
        "unused_count",
        BigInteger,
        nullable=False,
        server_default=text("0"),
        comment="Times feedback said a returned memory went unused.",
    ),
    _timestamp("last_used", "Last time feedback said it was used.", nullable=True, default=False),
    PrimaryKeyConstraint("namespace", "memory_id", name="pk_memory_access"),
    comment="Recall counts, apart from the memories: a recall then rewrites a narrow row "
    "here instead of a memory row with its vectors.",
)

JOB_STATUSES = ("pending", "running", "succeeded", "failed")

consolidation_jobs = Table(
    "consolidation_jobs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True, comment="Job id the client polls."),
    Column("namespace", Text, nullable=False, comment="Namespace of the session."),
    Column("session_id", Text, nullable=False, comment="Session whose steps are distilled."),
    Column("trigger", Text, nullable=False, comment="end, every_n or manual."),
    Column(
        "status",
        Text,
        nullable=False,
        server_default=text("'pending'"),
        comment="pending, running, succeeded or failed.",
    ),
    Column("method", Text, comment="llm or deterministic, once known."),
    Column("from_step", Integer, comment="First step distilled."),
    Column("through_step", Integer, comment="Last step distilled."),
    Column(
        "attempts",
        Integer,
        nullable=False,
        server_default=text("0"),
        comment="Times a worker has started it.",
    ),
    _timestamp("run_after", "Not to be started before this (backoff after a failure)."),
    _timestamp(
        "locked_until",
        "Lease of the worker running it; past it, another worker may take over.",
        nullable=True,
        default=False,
    ),
    Column("result", JSONB, comment="What the job did: memories observed, summaries written."),
    Column("error", Text, comment="Why the last attempt failed."),
    _timestamp("created_at", "When the job was queued."),
    _timestamp("started_at", "When a worker first started it.", nullable=True, default=False),
    _timestamp(
        "finished_at", "When it succeeded or failed for good.", nullable=True, default=False
    ),
    CheckConstraint(_in("status", JOB_STATUSES), name="status"),
    comment="Consolidation jobs: distilling a session's steps into long-term memory.",
)
Index(
    "uq_consolidation_jobs_open",
    consolidation_jobs.c.namespace,
    consolidation_jobs.c.session_id,
    unique=True,
    postgresql_where=text("status IN ('pending', 'running')"),
)
Index(
    "ix_consolidation_jobs_status_run_after",
    consolidation_jobs.c.status,
    consolidation_jobs.c.run_after,
)

embedding_cache = Table(
    "embedding_cache",
    metadata,
    Column("model", Text, primary_key=True, comment="Embedding model name and width."),
    Column("content_hash", LargeBinary, primary_key=True, comment="SHA-256 of the text."),
    Column("vector", LargeBinary, nullable=False, comment="float32 vector, little-endian."),
    _timestamp("created_at", "When it was computed."),
    comment="Embeddings by content and model, so the same text is never embedded twice.",
)

namespace_policy = Table(
    "namespace_policy",
    metadata,
    Column("namespace", Text, primary_key=True, comment="Namespace the policy governs."),
    Column(
        "policy",
        JSONB,
        nullable=False,
        server_default=text("'{}'"),
        comment="The fields set by the last PUT, by section (lifecycle, ranking, capacity); "
        "unset fields take the server's defaults.",
    ),
    Column("updated_by", Text, comment="API key name of the last PUT."),
    _timestamp("updated_at", "When it was last replaced."),
    comment="Per-namespace policy document: lifecycle thresholds, ranking factor weights, "
    "capacity.",
)

namespace_lifecycle = Table(
    "namespace_lifecycle",
    metadata,
    Column("namespace", Text, primary_key=True, comment="Namespace."),
    _timestamp(
        "last_pass_at",
        "Clock of the last lifecycle pass over the namespace.",
        nullable=True,
        default=False,
    ),
    _timestamp(
        "low_confidence_pass_at",
        "Clock of the last low-confidence archiving pass.",
        nullable=True,
        default=False,
    ),
    Column(
        "merge_cursor",
        UUID(as_uuid=True),
        comment="Retroactive merge resumes after this memory id (null: from the start).",
    ),
    Column(
        "active_count",
        BigInteger,
        comment="Active memories the last pass found, before capacity archiving.",
    ),
    Column("capacity", BigInteger, comment="Capacity then in force."),
    Column(
        "capacity_archived",
        BigInteger,
        nullable=False,
        server_default=text("0"),
        comment="Memories the last pass archived to get down to the capacity.",
    ),
    comment="The lifecycle scheduler's state per namespace (what it last did).",
)

session_demotions = Table(
    "session_demotions",
    metadata,
    Column("namespace", Text, primary_key=True, comment="Namespace of the session."),
    Column("session_id", Text, primary_key=True, comment="The ended session."),
    _timestamp("ended_at", "When it ended; demotion is due a policy delay after."),
    comment="Ended sessions whose event and experience memories are still to be demoted; "
    "a row goes once done.",
)

recall_feedback = Table(
    "recall_feedback",
    metadata,
    Column("namespace", Text, primary_key=True, comment="Namespace of the recall."),
    Column("recall_id", UUID(as_uuid=True), primary_key=True, comment="recall_log.id."),
    Column(
        "memory_id", UUID(as_uuid=True), primary_key=True, comment="A memory that recall returned."
    ),
    Column("used", Boolean, nullable=False, comment="The agent used it (or not)."),
    Column("actor", Text, comment="API key name that reported it."),
    _timestamp("created_at", "When the feedback arrived."),
    comment="Which recalled memories the agent used; the first report per pair counts.",
)
Index(
    "ix_recall_feedback_namespace_memory_id",
    recall_feedback.c.namespace,
    recall_feedback.c.memory_id,
)

bulk_imports = Table(
    "bulk_imports",
    metadata,
    Column(
        "id",
        Text,
        primary_key=True,
        comment="SHA-256 of the input's lines and default namespace: the same input, the same id.",
    ),
    Column("lines", Integer, nullable=False, comment="Memories in the input."),
    _timestamp("started_at", "When the first run of this input began."),
    _timestamp("finished_at", "When a run got through every line.", nullable=True, default=False),
    comment="`hindsight import` runs by input, so a re-run skips what an earlier run wrote.",
)

bulk_import_lines = Table(
    "bulk_import_lines",
    metadata,
    Column("import_id", Text, primary_key=True, comment="bulk_imports.id."),
    Column("line", Integer, primary_key=True, comment="Line number written (1-based)."),
    ForeignKeyConstraint(["import_id"], ["bulk_imports.id"], ondelete="CASCADE"),
    comment="Lines of an unfinished import already written, committed with them; "
    "deleted when the import finishes.",
)
