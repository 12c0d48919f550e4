"""Consolidation jobs, the session's consolidation mark, and the embedding cache.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Cost: two new empty tables; `ADD COLUMN ... DEFAULT -1 NOT NULL` on working_sessions is a
catalog-only change since PostgreSQL 11 (no rewrite, a brief ACCESS EXCLUSIVE lock).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "consolidation_jobs",
        sa.Column("id", sa.UUID(), nullable=False, comment="Job id the client polls."),
        sa.Column("namespace", sa.Text(), nullable=False, comment="Namespace of the session."),
        sa.Column(
            "session_id", sa.Text(), nullable=False, comment="Session whose steps are distilled."
        ),
        sa.Column("trigger", sa.Text(), nullable=False, comment="end, every_n or manual."),
        sa.Column(
            "status",
            sa.Text(),
            server_default=sa.text("'pending'"),
            nullable=False,
            comment="pending, running, succeeded or failed.",
        ),
        sa.Column("method", sa.Text(), nullable=True, comment="llm or deterministic, once known."),
        sa.Column("from_step", sa.Integer(), nullable=True, comment="First step distilled."),
        sa.Column("through_step", sa.Integer(), nullable=True, comment="Last step distilled."),
        sa.Column(
            "attempts",
            sa.Integer(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Times a worker has started it.",
        ),
        sa.Column(
            "run_after",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="Not to be started before this (backoff after a failure).",
        ),
        sa.Column(
            "locked_until",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="Lease of the worker running it; past it, another worker may take over.",
        ),
        sa.Column(
            "result",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment="What the job did: memories observed, summaries written.",
        ),
        sa.Column("error", sa.Text(), nullable=True, comment="Why the last attempt failed."),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the job was queued.",
        ),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="When a worker first started it.",
        ),
        sa.Column(
            "finished_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="When it succeeded or failed for good.",
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'succeeded', 'failed')",
            name=op.f("ck_consolidation_jobs_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consolidation_jobs")),
        comment="Consolidation jobs: distilling a session's steps into long-term memory.",
    )
    op.create_index(
        "ix_consolidation_jobs_status_run_after",
        "consolidation_jobs",
        ["status", "run_after"],
        unique=False,
    )
    op.create_index(
        "uq_consolidation_jobs_open",
        "consolidation_jobs",
        ["namespace", "session_id"],
        unique=True,
        postgresql_where=sa.text("status IN ('pending', 'running')"),
    )
    op.create_table(
        "embedding_cache",
        sa.Column("model", sa.Text(), nullable=False, comment="Embedding model name and width."),
        sa.Column("content_hash", sa.LargeBinary(), nullable=False, comment="SHA-256 of the text."),
        sa.Column(
            "vector", sa.LargeBinary(), nullable=False, comment="float32 vector, little-endian."
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When it was computed.",
        ),
        sa.PrimaryKeyConstraint("model", "content_hash", name=op.f("pk_embedding_cache")),
        comment="Embeddings by content and model, so the same text is never embedded twice.",
    )
    op.add_column(
        "working_sessions",
        sa.Column(
            "consolidated_through",
            sa.Integer(),
            server_default=sa.text("-1"),
            nullable=False,
            comment="Highest step_index already distilled into long-term memory (-1: none).",
        ),
    )


def downgrade() -> None:
    op.drop_column("working_sessions", "consolidated_through")
    op.drop_table("embedding_cache")
    op.drop_index(
        "uq_consolidation_jobs_open",
        table_name="consolidation_jobs",
        postgresql_where=sa.text("status IN ('pending', 'running')"),
    )
    op.drop_index("ix_consolidation_jobs_status_run_after", table_name="consolidation_jobs")
    op.drop_table("consolidation_jobs")
