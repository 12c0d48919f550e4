"""A record of each namespace erasure: which namespace, when, by whom; no values.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-04

`hindsight import` reads it to refuse restoring an export older than the erasure (the
data an erasure removed would come back unnoticed); `hindsight erase --compact` reads it
for the tables to rewrite. The column is `erased_namespace`, not `namespace`: an erasure
deletes every row whose `namespace` is the erased one, and this record must survive it.

Cost: a new, empty table.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE namespace_erasures (
            id uuid NOT NULL,
            erased_namespace text NOT NULL,
            erased_at timestamptz NOT NULL DEFAULT now(),
            actor text NOT NULL,
            CONSTRAINT pk_namespace_erasures PRIMARY KEY (id)
        );
        CREATE INDEX ix_namespace_erasures_erased_namespace_erased_at
            ON namespace_erasures (erased_namespace, erased_at);
        COMMENT ON TABLE namespace_erasures IS 'One row per namespace erasure, and nothing of '
            'what the namespace held: an import of an export older than the erasure is '
            'refused unless told otherwise.';
        COMMENT ON COLUMN namespace_erasures.id IS 'The erasure receipt''s id.';
        COMMENT ON COLUMN namespace_erasures.erased_namespace IS 'The namespace erased (not '
            'named `namespace`: an erasure deletes those rows).';
        COMMENT ON COLUMN namespace_erasures.erased_at IS 'When it was erased.';
        COMMENT ON COLUMN namespace_erasures.actor IS 'API key name (or `cli`) that erased it.';
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE namespace_erasures")
