"""Indexes and counts that let recall search a selective filter exactly among its rows.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-04

A large namespace is searched through HNSW, and a filter was checked on the rows the walk
met: pgvector's iterative scan walked on until k of them passed, up to
hnsw.max_scan_tuples (20,000). On one namespace of 100k English sentences, a filter
admitting 5% took the vector arm 13-690 ms and still missed 3 of 20 memories asked for
(benchmarks/README.md, items 29-30). Recall now counts what a filter admits first and,
when that is at most HINDSIGHT_EXACT_SEARCH_MAX_ROWS, scores exactly those rows, found
through one of these indexes (stores/narrowing.py):

- ix_long_term_memory_labels (GIN): a live memory's labels, its memory type and each of its
  tags, each prefixed by its namespace (hindsight_labels()), so a tag's posting list holds
  that namespace's memories only.
- keyword_stats rows for labels: the number of live memories of a namespace with a label,
  under a negative term (hindsight_label_term(); keyword terms are positive, 0 counts the
  namespace), kept by a trigger like the keyword terms' and merged by the same maintenance.
  So recall knows, before reading a posting list, how long it is.
- ix_long_term_memory_occurred, ix_long_term_memory_created (btree, live rows): the time
  windows, counted up to the limit and read in order.

last_observed and confidence are not indexed: they change on every reinforcement, which
would then rewrite both HNSW indexes instead of updating the row in place (HOT). The type,
tags, created_at and occurred_at of a memory seldom change.

Cost: the three index builds (one pass over the table each; ~1 min at 1M memories on 2
cores) and one more pass to count the labels, under the migration's lock; on writes, a
label array per row for the GIN index and the trigger.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYWORD_TERM_COMMENT_BEFORE = "Term hash; 0 counts active memories."
KEYWORD_TERM_COMMENT = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag), "
    "hindsight_label_term()."
)

# The label counts' trigger function as this revision wrote it (0025 replaced it, and puts
# this back on downgrade); the labels' functions and the triggers are loaded from
# hindsight/db/functions.sql.
LABEL_STATS = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_label_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO keyword_stats (namespace, term, df)
    SELECT n.namespace, t.term, count(*)
    FROM new_rows n, unnest(hindsight_label_terms(n.memory_type, n.tags)) t(term)
    WHERE n.status IN ('active', 'cold')
    GROUP BY n.namespace, t.term;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO keyword_stats (namespace, term, df)
    SELECT o.namespace, t.term, -count(*)
    FROM old_rows o, unnest(hindsight_label_terms(o.memory_type, o.tags)) t(term)
    WHERE o.status IN ('active', 'cold')
    GROUP BY o.namespace, t.term;
  ELSE
    INSERT INTO keyword_stats (namespace, term, df)
    SELECT d.namespace, d.term, sum(d.delta)
    FROM (
      SELECT o.namespace, unnest(hindsight_label_terms(o.memory_type, o.tags)) AS term,
             -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE o.status IN ('active', 'cold')
        AND (n.status NOT IN ('active', 'cold') OR n.memory_type <> o.memory_type
             OR n.tags IS DISTINCT FROM o.tags OR n.namespace <> o.namespace)
      UNION ALL
      SELECT n.namespace, unnest(hindsight_label_terms(n.memory_type, n.tags)), 1
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE n.status IN ('active', 'cold')
        AND (o.status NOT IN ('active', 'cold') OR n.memory_type <> o.memory_type
             OR n.tags IS DISTINCT FROM o.tags OR n.namespace <> o.namespace)
    ) d
    GROUP BY d.namespace, d.term
    HAVING sum(d.delta) <> 0;
  END IF;
  RETURN NULL;
END $$;
"""

BACKFILL = """
INSERT INTO keyword_stats (namespace, term, df)
SELECT m.namespace, t.term, count(*)
FROM long_term_memory m, unnest(hindsight_label_terms(m.memory_type, m.tags)) t(term)
WHERE m.status IN ('active', 'cold')
GROUP BY m.namespace, t.term
"""

INDEXES = (
    "CREATE INDEX ix_long_term_memory_labels ON long_term_memory "
    "USING gin (hindsight_labels(namespace, memory_type, tags)) WITH (fastupdate = off) "
    "WHERE live",
    # INCLUDE: a window is counted from the index alone (an index-only scan cannot read an
    # expression's columns from the expression); 2.7 -> 1.1 ms for 5,001 entries at 100k
    "CREATE INDEX ix_long_term_memory_occurred ON long_term_memory "
    "(namespace, coalesce(occurred_at, created_at)) INCLUDE (occurred_at, created_at) "
    "WHERE live",
    "CREATE INDEX ix_long_term_memory_created ON long_term_memory (namespace, created_at) "
    "WHERE live",
)


def upgrade() -> None:
    op.execute(LABEL_STATS)
    op.execute(
        functions.load(
            hindsight_labels="9aaad4b30a01",
            hindsight_label_term="c64b9ca4b49e",
            hindsight_label_terms="45fc56a8bc3f",
            long_term_memory_labels_inserted="820e7dc514b7",
            long_term_memory_labels_updated="4203b993db7e",
            long_term_memory_labels_deleted="0db39d0b0821",
        )
    )
    op.execute(BACKFILL)
    for statement in INDEXES:
        op.execute(statement)
    op.alter_column(
        "keyword_stats",
        "term",
        comment=KEYWORD_TERM_COMMENT,
        existing_comment=KEYWORD_TERM_COMMENT_BEFORE,
    )


def downgrade() -> None:
    op.alter_column(
        "keyword_stats",
        "term",
        comment=KEYWORD_TERM_COMMENT_BEFORE,
        existing_comment=KEYWORD_TERM_COMMENT,
    )
    for name in ("labels", "occurred", "created"):
        op.execute(f"DROP INDEX ix_long_term_memory_{name}")
    for event in ("inserted", "updated", "deleted"):
        op.execute(f"DROP TRIGGER long_term_memory_labels_{event} ON long_term_memory")
    op.execute("DROP FUNCTION hindsight_ltm_label_stats()")
    op.execute("DELETE FROM keyword_stats WHERE term < 0")
    op.execute("DROP FUNCTION hindsight_label_terms(text, text[])")
    op.execute("DROP FUNCTION hindsight_label_term(text)")
    op.execute("DROP FUNCTION hindsight_labels(text, text, text[])")
