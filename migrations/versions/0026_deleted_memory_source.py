"""A deleted memory's source leaves its history, as its values already did.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-04

A source label may name a person or a conversation ("mail from Ann", "session:…"), yet a
deletion kept it on the tombstone and on every earlier history entry, while the README
promised id, key, time and actor only. hindsight_ltm_deleted() now clears it with the
values. Rows deleted before this revision keep their source; `UPDATE memory_history SET
source = NULL WHERE change IN ('deleted', 'expired', 'rejected')` (and on the entries of
those memories) clears them by hand.

Cost: the function is replaced in place, a catalog change (no table lock, no rewrite).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(functions.load(hindsight_ltm_deleted="81819fc0e04a"))


def downgrade() -> None:
    op.execute(functions.written_by("0025", "DELETED"))
