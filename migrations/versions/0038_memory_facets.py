"""memory_facets: each memory's confidence, importance and last observation, indexed, so that a
min_importance or an observed_* window that admits few memories is searched exactly among
them, as a min_confidence has been since 0036.

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-07

Recall narrows a filter that admits few memories of a large namespace by counting them
through an index and scoring those exactly (stores/narrowing.py). min_importance and
observed_* could not be counted: session demotion and consolidation change the importance,
every reinforcement the last observation, and an index on either on long_term_memory would
make those non-HOT updates that enter the row into both HNSW graphs again. So the vector arm
walked the graph until it met k memories the filter admits: at 100k memories with a
min_importance admitting 0.91% of them, both arms took 39.5 ms p50 and 60.6 ms p99, and the
vector arm found 0.938 of the exact top 10 (benchmarks/README item 39).

memory_facets replaces memory_confidence (0036): (namespace, id, live, confidence,
importance, last_observed) per memory, in every status, with a b-tree over the live rows on
(namespace, x) for each of the three. Its trigger function, hindsight_ltm_facet_rows, also
counts the live memories per importance bucket of 0.05 in keyword_stats, beside the
confidence's (0037), under terms 21 further down (hindsight_importance_term; the edges are
compared as float8, the importance's type), so that recall
decides whether a min_importance narrows without reading index entries. The service's own
importance estimate gives most memories 0.5 or 0.1, so most bounds admit whole buckets.

On a Citus cluster the table is distributed by namespace with long_term_memory.

Cost: one pass over long_term_memory to copy it, three b-tree builds and a count of the
importance buckets (with 0039, ~0.5 s at 100k memories), with writes to memories locked
out until the upgrade commits: a write under way with the old triggers would be missed by
the copy and the count. Reads go on. The old triggers are disabled here and dropped, with
memory_confidence and their function, by 0039 in a transaction of its own: dropping them
here would take an ACCESS EXCLUSIVE lock after the weaker one, and deadlock with a reader
that then writes. The downgrade holds reads out too while it runs, and wants the service
stopped (see there).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import citus, functions

revision: str = "0038"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = """
CREATE TABLE memory_facets (
    namespace text NOT NULL,
    id uuid NOT NULL,
    live boolean NOT NULL,
    confidence numeric(5, 4) NOT NULL,
    importance double precision NOT NULL,
    last_observed timestamptz NOT NULL,
    CONSTRAINT pk_memory_facets PRIMARY KEY (namespace, id)
);
COMMENT ON TABLE memory_facets IS 'What of each long-term memory recall filters by and '
    'reinforcements or the lifecycle change, kept by triggers on long_term_memory, indexed '
    'for recall''s min_confidence, min_importance and observed_* filters.';
COMMENT ON COLUMN memory_facets.namespace IS 'Namespace of the memory.';
COMMENT ON COLUMN memory_facets.id IS 'long_term_memory.id.';
COMMENT ON COLUMN memory_facets.live IS 'The memory''s live (copied).';
COMMENT ON COLUMN memory_facets.confidence IS 'The memory''s confidence (copied).';
COMMENT ON COLUMN memory_facets.importance IS 'The memory''s importance (copied).';
COMMENT ON COLUMN memory_facets.last_observed IS 'The memory''s last_observed (copied).';
"""

_COPY = """
INSERT INTO memory_facets (namespace, id, live, confidence, importance, last_observed)
SELECT namespace, id, live, confidence, importance, last_observed FROM long_term_memory
"""

INDEXES = [
    f"CREATE INDEX ix_memory_facets_{name} ON memory_facets (namespace, {column}) "
    "INCLUDE (id) WHERE live"
    for name, column in (
        ("confidence", "confidence"),
        ("importance", "importance"),
        ("observed", "last_observed"),
    )
]

_COUNT = """
INSERT INTO keyword_stats (namespace, term, df)
SELECT namespace, hindsight_importance_term(importance), count(*)
FROM memory_facets WHERE live GROUP BY 1, 2
"""

_CONFIDENCE_COPY = """
INSERT INTO memory_confidence (namespace, id, live, confidence)
SELECT namespace, id, live, confidence FROM long_term_memory
"""

TERM_COMMENT_BEFORE = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag), "
    "hindsight_label_term(), or below -2^30 a confidence bucket, hindsight_confidence_term()."
)
TERM_COMMENT = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag), "
    "hindsight_label_term(), or below -2^30 a confidence bucket, hindsight_confidence_term(), "
    "or an importance bucket, hindsight_importance_term()."
)

TRIGGERS = {
    "long_term_memory_facets_inserted": "9b0b0975c7f1",
    "long_term_memory_facets_updated": "0ab483ff1467",
    "long_term_memory_facets_deleted": "7895072414c1",
}
_EVENTS = ("inserted", "updated", "deleted")

# Writers hold long_term_memory (ROW EXCLUSIVE) from their statement to their commit, and
# the triggers run inside: this waits for those under way and holds new ones until the
# commit, when they find the new triggers (as in 0037).
_LOCK = "LOCK TABLE long_term_memory IN SHARE ROW EXCLUSIVE MODE"


def _distribute(table: str) -> None:
    op.execute(
        f"SELECT create_distributed_table('{table}', 'namespace', "
        "colocate_with => 'long_term_memory')"
    )


def upgrade() -> None:
    distributed = citus.distributed_table(op.get_bind())
    # the functions first: on a Citus cluster a function command may not follow parallel
    # DDL on a distributed table in one transaction (0034)
    op.execute(
        functions.load(
            hindsight_importance_bucket="9fb7aba2b995",
            hindsight_importance_term="7ebce0a38114",
            hindsight_importance_terms="03060d60ad11",
            hindsight_facet_terms="4e79f380531d",
            hindsight_ltm_facet_rows="174aaec40bb9",
        )
    )
    op.execute(_LOCK)
    op.execute(TABLE)
    if distributed:
        _distribute("memory_facets")
    for trigger, pin in TRIGGERS.items():
        op.execute(functions.load(**{trigger: pin}))
    op.execute(_COPY)
    for index in INDEXES:
        op.execute(index)
    op.execute(_COUNT)
    # The old triggers are disabled, not dropped: DROP TRIGGER takes an ACCESS EXCLUSIVE
    # lock, and asking for it while holding the lock above would deadlock with a reader
    # that then writes (observe reads its key, then upserts). 0039, a transaction of its
    # own, drops them with their table.
    for event in _EVENTS:
        op.execute(
            f"ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_confidence_{event}"
        )
    op.alter_column(
        "keyword_stats", "term", comment=TERM_COMMENT, existing_comment=TERM_COMMENT_BEFORE
    )
    op.execute("ANALYZE memory_facets")


def downgrade() -> None:
    distributed = citus.distributed_table(op.get_bind())
    if distributed:
        # the functions are dropped after DDL on distributed tables (as in 0036)
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    # Stop the service first: it reads and writes memory_facets, which this drops, and no
    # order of locks suits both its readers (memory_facets, then the memories) and its
    # writers (the memories, then memory_facets through the trigger), so a request under
    # way can deadlock with the downgrade, which then rolls back. The lock is taken up
    # front all the same: a weaker one first would deadlock with any reader that then
    # writes (see the upgrade).
    op.execute("LOCK TABLE long_term_memory IN ACCESS EXCLUSIVE MODE")
    for event in _EVENTS:
        op.execute(
            f"ALTER TABLE long_term_memory ENABLE TRIGGER long_term_memory_confidence_{event}"
        )
    # memory_confidence missed every write since the upgrade: made anew
    op.execute("DELETE FROM memory_confidence")
    op.execute(_CONFIDENCE_COPY)
    # the importance buckets' terms (hindsight_importance_term: 21 below the confidence's)
    op.execute("DELETE FROM keyword_stats WHERE term < -1073741845")
    for event in _EVENTS:
        op.execute(f"DROP TRIGGER long_term_memory_facets_{event} ON long_term_memory")
    op.execute("DROP TABLE memory_facets")
    for function in (
        "hindsight_ltm_facet_rows()",
        "hindsight_facet_terms(numeric, double precision)",
        "hindsight_importance_terms(double precision)",
        "hindsight_importance_term(double precision)",
        "hindsight_importance_bucket(double precision)",
    ):
        op.execute(f"DROP FUNCTION {function}")
    op.alter_column(
        "keyword_stats", "term", comment=TERM_COMMENT_BEFORE, existing_comment=TERM_COMMENT
    )
    op.execute("ANALYZE memory_confidence")
