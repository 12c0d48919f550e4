"""Working memory's tables: the sessions of running tasks, their steps, and the ended
sessions whose memories are still to be demoted."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

from hindsight.db.models.base import _in, _timestamp, metadata

SESSION_STATUSES = ("active", "ended")

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

session_demotions = Table(
    "session_demotions",
    metadata,
    Column("namespace", Text, primary_key=True, comment="Namespace of the session."),
    Column("session_id", Text, primary_key=True, comment="The ended session."),
    _timestamp("ended_at", "When it ended; demotion is due a policy delay after."),
    comment="Ended sessions whose event and experience memories are still to be demoted; "
    "a row goes once done.",
)
