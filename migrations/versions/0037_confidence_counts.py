"""Live memories counted per confidence bucket, so recall decides whether a min_confidence
narrows the search without reading index entries.

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-07

0036 let recall narrow a min_confidence that admits few memories: each arm counts the
memory_confidence index entries at or above the bound, up to one past
HINDSIGHT_EXACT_SEARCH_MAX_ROWS, and searches those exactly when there are few. A bound that
admits many reads those 5,001 entries on every recall only to learn it cannot narrow: ~1 ms
a recall at 100k (benchmarks/README item 37).

Now hindsight_ltm_confidence_rows also keeps, in keyword_stats, each namespace's live
memories per confidence bucket of 0.05, under label terms (hindsight_confidence_terms), the
way labels are counted (migration 0024): statement-level deltas, compacted by maintenance.
The buckets at and above the bound's own give an upper bound of what it admits, those above
it a lower one; the index is counted only when the limit falls between them.

Cost: one pass over memory_confidence to count the buckets, under a lock that keeps writes
to memories out until the upgrade commits (a write between the new function and the count
would be counted twice or not at all).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from hindsight.db import functions

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COUNT = """
INSERT INTO keyword_stats (namespace, term, df)
SELECT namespace, (hindsight_confidence_terms(confidence))[1], count(*)
FROM memory_confidence WHERE live GROUP BY 1, 2
"""


TERM_COMMENT_BEFORE = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag), "
    "hindsight_label_term()."
)
TERM_COMMENT = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag) or a "
    "confidence bucket, hindsight_label_term() and hindsight_confidence_terms()."
)

# On a Citus cluster a function command may not follow a multi-shard statement in one
# transaction (0034), so both ways change the functions first.


def upgrade() -> None:
    op.execute(
        functions.load(
            hindsight_confidence_terms="25c939c5d4cd",
            hindsight_ltm_confidence_rows="b39202f6c549",
        )
    )
    op.alter_column(
        "keyword_stats", "term", comment=TERM_COMMENT, existing_comment=TERM_COMMENT_BEFORE
    )
    # memory_confidence is written only by long_term_memory's triggers: this lock holds
    # memory writes from before the count to the commit
    op.execute("LOCK TABLE memory_confidence IN SHARE ROW EXCLUSIVE MODE")
    op.execute(_COUNT)


def downgrade() -> None:
    conn = op.get_bind()
    terms = conn.execute(sa.text("SELECT hindsight_confidence_terms(0)")).scalar()
    op.execute(functions.written_by("0036", "CONFIDENCE_ROWS"))
    op.execute("DROP FUNCTION hindsight_confidence_terms(numeric)")
    op.alter_column(
        "keyword_stats", "term", comment=TERM_COMMENT_BEFORE, existing_comment=TERM_COMMENT
    )
    op.execute("LOCK TABLE memory_confidence IN SHARE ROW EXCLUSIVE MODE")
    conn.execute(sa.text("DELETE FROM keyword_stats WHERE term = ANY(:terms)"), {"terms": terms})
