"""Find the recalls that returned a memory without reading the namespace's whole log.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-04

The echo rule asks, for each reinforcement, whether a recall by the same key returned that
memory within the echo window. With only (namespace, created_at) to go by, the look-up read
every recall of the namespace in the window: on a log of 60,000 recalls in the last hour,
37 ms p50 per reinforcement (measured on this machine). A GIN index on result_ids finds the
recalls that returned the memory directly: 0.6 ms.

Cost: one index build over the recall log under the migration's lock (the log keeps
HINDSIGHT_RECALL_LOG_RETENTION_DAYS, 30 by default); on each logged recall, its result ids
into the index (GIN's pending list batches them; the log is written off recall's path).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_recall_log_result_ids", "recall_log", ["result_ids"], postgresql_using="gin"
    )


def downgrade() -> None:
    op.drop_index("ix_recall_log_result_ids", table_name="recall_log")
