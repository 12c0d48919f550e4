"""The service's own tables: API keys, facts about the schema, consolidation jobs,
per-namespace policy and lifecycle-scheduler state, and bulk-import progress."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from hindsight.db.models.base import _in, _timestamp, metadata

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

namespace_erasures = Table(
    "namespace_erasures",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True, comment="The erasure receipt's id."),
    Column(
        "erased_namespace",
        Text,
        nullable=False,
        comment="The namespace erased (not named `namespace`: an erasure deletes those rows).",
    ),
    _timestamp("erased_at", "When it was erased."),
    Column("actor", Text, nullable=False, comment="API key name (or `cli`) that erased it."),
    comment="One row per namespace erasure, and nothing of what the namespace held: an "
    "import of an export older than the erasure is refused unless told otherwise.",
)
Index(
    "ix_namespace_erasures_erased_namespace_erased_at",
    namespace_erasures.c.erased_namespace,
    namespace_erasures.c.erased_at,
)
