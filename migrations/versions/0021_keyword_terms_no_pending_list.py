"""The keyword-terms GIN index without a pending list (fastupdate off).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03

With PostgreSQL's default (fastupdate on), new rows' terms go to an unsorted pending list,
merged into the index only by VACUUM or once it passes gin_pending_list_limit (4 MB), and
every search of the index reads the whole list. A service taking writes always has one: the
keyword arm of a large namespace (the posting lists of the query's rarest terms) paid for
it on every recall. Measured on a copy of 100k English sentences (imported, so the index
starts clean), 150 queries, the keyword arm alone: p50 4.62-4.74 ms clean, 6.16-6.45 ms
after 10,000 more memories (215 pending pages), back to 4.81-5.19 ms once the list was
merged; with fastupdate off 5.15 ms after the same writes, and the 10,000 inserts took
the same time (19.7-21.7 s on, 21.8 s off): a batch's terms go straight into the tree.

Cost: a catalogue change, then merging whatever is pending (at most 4 MB; well under a
second). The downgrade puts PostgreSQL's default back.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_long_term_memory_keyword_terms"


def upgrade() -> None:
    # An interrupted `hindsight import` leaves its search indexes dropped; the service
    # builds them again (with this setting) at start-up.
    op.execute(
        f"""
        DO $$ BEGIN
            IF to_regclass('{INDEX}') IS NOT NULL THEN
                ALTER INDEX {INDEX} SET (fastupdate = off);
                PERFORM gin_clean_pending_list('{INDEX}'::regclass);
            END IF;
        END $$
        """
    )


def downgrade() -> None:
    op.execute(
        f"""
        DO $$ BEGIN
            IF to_regclass('{INDEX}') IS NOT NULL THEN
                ALTER INDEX {INDEX} RESET (fastupdate);
            END IF;
        END $$
        """
    )
