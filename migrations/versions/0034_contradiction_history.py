"""History change `contradiction`: the entry linking two memories that contradict each other.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-05

When a write (or the lifecycle's reflection) finds that a memory contradicts another one
under a different key, each memory's history gets a `contradiction` entry naming the other
(id and key) and what was done — superseded, both sent to review, or the newer one held —
before the moves that carry it out (`archived`, `quarantined`). Before, the newer memory's
link read `superseded` and a held older memory's `updated`, names that mean other things.
The history trigger (`hindsight_ltm_updated`) now names a live memory's move to review
`quarantined`, as it names a claim stored for review, instead of `updated`.

Downgrade: the entries become `updated`, their reasons kept; the trigger 0028 wrote.

Cost: the CHECK constraint is re-validated (one read of memory_history) under ACCESS
EXCLUSIVE; the trigger function is replaced in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from hindsight.db import functions

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = (
    "created",
    "reinforced",
    "superseded",
    "updated",
    "archived",
    "restored",
    "deleted",
    "cooled",
    "warmed",
    "expired",
    "quarantined",
    "approved",
    "released",
    "rejected",
)
_AFTER = (*_BEFORE, "contradiction")


def _comment(changes: tuple[str, ...]) -> str:
    return ", ".join(changes[:-1]) + " or " + changes[-1] + "."


def _constraint(changes: tuple[str, ...]) -> None:
    op.drop_constraint(op.f("ck_memory_history_change"), "memory_history", type_="check")
    listed = ", ".join(f"'{c}'" for c in changes)
    op.create_check_constraint(
        op.f("ck_memory_history_change"), "memory_history", f"change IN ({listed})"
    )
    op.alter_column(
        "memory_history",
        "change",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment=_comment(changes),
    )


def upgrade() -> None:
    # the function first: on a Citus cluster a function command may not follow the
    # constraint's parallel DDL on the distributed table in one transaction
    op.execute(functions.load(hindsight_ltm_updated="50b2b0376541"))
    _constraint(_AFTER)


def downgrade() -> None:
    op.execute(functions.written_by("0028", "UPDATED"))
    op.execute("UPDATE memory_history SET change = 'updated' WHERE change = 'contradiction'")
    _constraint(_BEFORE)
