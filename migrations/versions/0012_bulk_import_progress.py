"""Bulk imports remember what they wrote, so a re-run after a failure is idempotent.

Revision ID: 0012
Revises: 0005
Create Date: 2026-12-01

`hindsight import` records each input (by a hash of its lines) and, while it runs, the
line numbers it has written, in the same transactions as the memories. A re-run of the
same input skips those lines instead of reinforcing them a second time; once an import
finishes its line numbers are deleted and a re-run is a no-op.

Cost: two new, empty tables; no lock on existing ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bulk_imports",
        sa.Column(
            "id",
            sa.Text(),
            nullable=False,
            comment="SHA-256 of the input's lines and default namespace: the same input, "
            "the same id.",
        ),
        sa.Column("lines", sa.Integer(), nullable=False, comment="Memories in the input."),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the first run of this input began.",
        ),
        sa.Column(
            "finished_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="When a run got through every line.",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bulk_imports")),
        comment="`hindsight import` runs by input, so a re-run skips what an earlier run wrote.",
    )
    op.create_table(
        "bulk_import_lines",
        sa.Column("import_id", sa.Text(), nullable=False, comment="bulk_imports.id."),
        sa.Column("line", sa.Integer(), nullable=False, comment="Line number written (1-based)."),
        sa.ForeignKeyConstraint(
            ["import_id"],
            ["bulk_imports.id"],
            name=op.f("fk_bulk_import_lines_import_id_bulk_imports"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("import_id", "line", name=op.f("pk_bulk_import_lines")),
        comment="Lines of an unfinished import already written, committed with them; "
        "deleted when the import finishes.",
    )


def downgrade() -> None:
    op.drop_table("bulk_import_lines")
    op.drop_table("bulk_imports")
