"""Trust: key roles.

Revision ID: 0013
Revises: 0004
Create Date: 2026-12-01

Keys get a role (reader, writer, curator, admin) in place of the admin flag. Existing keys
keep what they could do: admin keys become admins, every other key a writer (with its
namespaces unchanged, so an unscoped key still reaches every namespace). Downgrading maps
admin back to the flag and every other role to a plain key.

Cost: api_keys is tiny; catalog changes only.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLES = ("reader", "writer", "curator", "admin")


def upgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column(
            "role",
            sa.Text(),
            server_default=sa.text("'writer'"),
            nullable=False,
            comment="reader, writer, curator or admin; each may do what the one before may.",
        ),
    )
    op.create_check_constraint(
        op.f("ck_api_keys_role"),
        "api_keys",
        f"role IN ({', '.join(repr(r) for r in ROLES)})",
    )
    op.execute("UPDATE api_keys SET role = 'admin' WHERE is_admin")
    op.drop_column("api_keys", "is_admin")


def downgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column(
            "is_admin",
            sa.Boolean(),
            server_default=sa.text("false"),
            nullable=False,
            comment="May manage keys and use every namespace.",
        ),
    )
    op.execute("UPDATE api_keys SET is_admin = true WHERE role = 'admin'")
    op.drop_constraint(op.f("ck_api_keys_role"), "api_keys", type_="check")
    op.drop_column("api_keys", "role")
