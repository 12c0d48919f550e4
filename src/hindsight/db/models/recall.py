"""Recall's tables: each recall as asked and answered, the feedback on what it returned,
and the per-memory counts of both, kept apart from the memories."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from hindsight.db.models.base import _timestamp, metadata

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
# which recalls returned a memory: the echo rule's look-up (stores.recall_log.recalled)
Index("ix_recall_log_result_ids", recall_log.c.result_ids, postgresql_using="gin")

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
    Column(
        "specificity",
        Float,
        comment="The memory's specificity as recall last computed it (0..1).",
    ),
    Column(
        "specificity_n",
        BigInteger,
        comment="How many memories its namespace held when the specificity was computed.",
    ),
    _timestamp(
        "specificity_of",
        "The memory's updated_at when the specificity was computed.",
        nullable=True,
        default=False,
    ),
    _timestamp(
        "specificity_at", "When the specificity was computed.", nullable=True, default=False
    ),
    Column(
        "keyword_mass",
        Float,
        comment="The memory's BM25 mass (its keyword weights by each term's IDF) as recall "
        "last computed it, with the specificity and under the same specificity_* columns.",
    ),
    PrimaryKeyConstraint("namespace", "memory_id", name="pk_memory_access"),
    comment="Recall counts, apart from the memories: a recall then rewrites a narrow row "
    "here instead of a memory row with its vectors.",
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
