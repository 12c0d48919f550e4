"""memory_keywords: a narrow copy of each memory's keyword columns, and the keyword arm's
posting lists over it.

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-06

The keyword arm of a large namespace reads the postings of the query's rarest terms (up to
3,000) and scores each memory they name from its row. A memory's row is ~1.2 kB with its
embedding, six to a page, so each posting cost a page of its own (2-3 µs). memory_keywords
holds, per memory, only what the arm and the write path's twin check read: terms, keyword
vector, type, tags, expiry and liveness, ~0.1 kB. The GIN index over keyword_terms moves here
from long_term_memory. Measured as a prototype at 100k memories (benchmarks/README item
35): the arm alone 1.2-1.5x faster at p50 and 1.35-2.0x at p99 with the same answers; recall
end to end, English p50 / p99 10.1 / 26.4 -> 8.5 / 19.5 ms, Zipf 10.0 / 20.4 -> 9.4 / 17.6.

long_term_memory stays the source: statement triggers on it (hindsight_ltm_keyword_rows)
write the copy of every row inserted, rewrite it when one of the copied columns changes
(never on a reinforcement or an access), and delete it with the memory. One row per
memory in every status, so restoring or approving a memory rewrites only its copy.

On a Citus cluster the table is distributed by namespace with long_term_memory here,
before its triggers exist, so that they write co-located shards from the start.

Cost: one pass over long_term_memory to copy it and one GIN build, with writes to it
locked out until the upgrade commits: 1.2-1.7 s for 100k memories on a 2-core machine
(the downgrade, which builds the GIN index on long_term_memory again, 0.1-0.9 s). The
copy with its key and posting lists takes 43-45 MB there, beside the memory table's
313-330 MB without the posting lists it had.
Writes measured the same before and after (benchmarks/README item 36).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from hindsight.db import functions
from hindsight.text.tokenize import KEYWORD_DIMENSIONS

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_INDEX = "ix_long_term_memory_keyword_terms"
_OLD_INDEX_SQL = (
    f"CREATE INDEX IF NOT EXISTS {_OLD_INDEX} ON long_term_memory USING gin (keyword_terms) "
    "WITH (fastupdate = off)"
)
_INDEX_SQL = (
    "CREATE INDEX ix_memory_keywords_keyword_terms ON memory_keywords USING gin "
    "(keyword_terms) WITH (fastupdate = off)"
)

TABLE = f"""
CREATE TABLE memory_keywords (
    namespace text NOT NULL,
    id uuid NOT NULL,
    memory_type text NOT NULL,
    tags text[] NOT NULL,
    live boolean NOT NULL,
    expires_at timestamptz,
    keyword_terms integer[] NOT NULL,
    keywords sparsevec({KEYWORD_DIMENSIONS}) NOT NULL,
    CONSTRAINT pk_memory_keywords PRIMARY KEY (namespace, id)
);
COMMENT ON TABLE memory_keywords IS 'A narrow copy of each long-term memory''s keyword '
    'columns, kept by triggers on long_term_memory, for recall''s keyword arm.';
COMMENT ON COLUMN memory_keywords.namespace IS 'Namespace of the memory.';
COMMENT ON COLUMN memory_keywords.id IS 'long_term_memory.id.';
COMMENT ON COLUMN memory_keywords.memory_type IS 'The memory''s type (copied).';
COMMENT ON COLUMN memory_keywords.tags IS 'The memory''s tags (copied).';
COMMENT ON COLUMN memory_keywords.live IS 'The memory''s live (copied).';
COMMENT ON COLUMN memory_keywords.expires_at IS 'The memory''s hard expiry (copied).';
COMMENT ON COLUMN memory_keywords.keyword_terms IS 'The memory''s keyword_terms (copied); '
    'the posting lists recall reads.';
COMMENT ON COLUMN memory_keywords.keywords IS 'The memory''s keyword vector (copied), '
    'scored for each posting read.';
"""

_COPY = """
INSERT INTO memory_keywords (namespace, id, memory_type, tags, live, expires_at, keyword_terms,
                             keywords)
SELECT namespace, id, memory_type, tags, live, expires_at, keyword_terms, keywords
FROM long_term_memory
"""


TRIGGERS = {
    "long_term_memory_keywords_inserted": "2a962caf0c00",
    "long_term_memory_keywords_updated": "5b83e74e1a51",
    "long_term_memory_keywords_deleted": "96e28f6dbf0c",
}


def _distributed() -> bool:
    """long_term_memory is a Citus distributed table here."""
    conn = op.get_bind()
    if conn.execute(sa.text("SELECT to_regclass('pg_dist_partition')")).scalar() is None:
        return False
    return bool(
        conn.execute(
            sa.text(
                "SELECT EXISTS (SELECT FROM pg_dist_partition "
                "WHERE logicalrelid = 'long_term_memory'::regclass)"
            )
        ).scalar()
    )


def upgrade() -> None:
    # the function first: on a Citus cluster a function command may not follow parallel
    # DDL on a distributed table in one transaction (0034)
    op.execute(functions.load(hindsight_ltm_keyword_rows="52d9b6d7c7eb"))
    op.execute(TABLE)
    if _distributed():
        op.execute(
            "SELECT create_distributed_table('memory_keywords', 'namespace', "
            "colocate_with => 'long_term_memory')"
        )
    # The triggers before the copy: CREATE TRIGGER locks long_term_memory against writes
    # (SHARE ROW EXCLUSIVE) until the upgrade commits, so the copy below sees every write
    # committed before it and none can come between (the service may be running). One
    # statement at a time: Citus sends a distributed table's DDL to the shards as it was
    # given, and a string of several commands cannot be sent that way.
    for trigger, pin in TRIGGERS.items():
        op.execute(functions.load(**{trigger: pin}))
    op.execute(_COPY)
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    op.execute(_INDEX_SQL)
    # an interrupted `hindsight import` leaves it dropped (0021)
    op.execute(f"DROP INDEX IF EXISTS {_OLD_INDEX}")
    op.execute("ANALYZE memory_keywords")


def downgrade() -> None:
    if _distributed():
        # the function is dropped after DDL on distributed tables, which Citus allows in
        # one transaction only when that DDL ran shard by shard (as 0034 says of upgrades)
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    for event in ("inserted", "updated", "deleted"):
        op.execute(f"DROP TRIGGER long_term_memory_keywords_{event} ON long_term_memory")
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    op.execute(_OLD_INDEX_SQL)
    op.execute("DROP TABLE memory_keywords")
    op.execute("DROP FUNCTION hindsight_ltm_keyword_rows()")
