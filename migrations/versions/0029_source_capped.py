"""A writer's source label ranks no higher than an agent's: source_capped on memories.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-04

Observe already trusted a writer's self-declared source no more than `agent` when it set the
claim's confidence and decided on quarantine, but recall read the stored label as written:
a writer naming `user` ranked as the user. Each memory now records whether its source is
such a label, set by the write that gave the source; ranking caps it at an agent's trust.
Existing rows keep false (ranked as before: who wrote their label is not known).

Cost: a column with a constant default, a catalog change (no rewrite).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "long_term_memory",
        sa.Column(
            "source_capped",
            sa.Boolean(),
            server_default=sa.text("false"),
            nullable=False,
            comment="The source label is a writer's own word: ranking trusts it no more than "
            "an agent.",
        ),
    )


def downgrade() -> None:
    op.drop_column("long_term_memory", "source_capped")
