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
memories per confidence bucket of 0.05, under terms of their own below every label's
(hindsight_confidence_term), the way labels are counted (migration 0024): statement-level
deltas, compacted by maintenance. The buckets at and above the bound's own give an upper
bound of what it admits, those above it (or all, when the bound starts its bucket) a lower
one; the index is counted only when the limit falls between them.

Cost: one pass over memory_confidence to count the buckets, with writes to memories locked
out until the upgrade commits: a write already under way when the new function is created
runs the old one, which counts nothing, so the count must wait for it and see its rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db import functions

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COUNT = """
INSERT INTO keyword_stats (namespace, term, df)
SELECT namespace, hindsight_confidence_term(confidence), count(*)
FROM memory_confidence WHERE live GROUP BY 1, 2
"""

# The trigger function as this revision loaded it (0038 replaced it with
# hindsight_ltm_facet_rows, which keeps memory_facets instead, and puts this back on
# downgrade).
CONFIDENCE_ROWS = """
CREATE OR REPLACE FUNCTION hindsight_ltm_confidence_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  namespaces text[];
  copies jsonb;
  deltas jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.live, n.confidence FROM new_rows n) c;
    SELECT jsonb_agg(d) INTO deltas FROM (
      SELECT n.namespace, hindsight_confidence_term(n.confidence) AS term, count(*) AS df
      FROM new_rows n WHERE n.live GROUP BY 1, 2) d;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE (o.namespace, o.live, o.confidence) IS DISTINCT FROM
          (n.namespace, n.live, n.confidence);
    IF ids IS NULL THEN
      RETURN NULL;
    END IF;
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.live, n.confidence FROM new_rows n WHERE n.id = ANY(ids)) c;
    SELECT jsonb_agg(d) INTO deltas FROM (
      SELECT b.namespace, b.term, sum(b.delta) AS df FROM (
        SELECT o.namespace, hindsight_confidence_term(o.confidence) AS term, -1 AS delta
        FROM old_rows o WHERE o.live AND o.id = ANY(ids)
        UNION ALL
        SELECT n.namespace, hindsight_confidence_term(n.confidence), 1
        FROM new_rows n WHERE n.live AND n.id = ANY(ids)) b
      GROUP BY b.namespace, b.term HAVING sum(b.delta) <> 0) d;
  ELSE
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o;
    SELECT jsonb_agg(d) INTO deltas FROM (
      SELECT o.namespace, hindsight_confidence_term(o.confidence) AS term,
             -count(*) AS df
      FROM old_rows o WHERE o.live GROUP BY 1, 2) d;
  END IF;
  IF ids IS NOT NULL THEN  -- ANY(NULL) would leave Citus no shard to route to
    DELETE FROM memory_confidence c WHERE c.namespace = ANY(namespaces) AND c.id = ANY(ids);
  END IF;
  IF copies IS NOT NULL THEN
    INSERT INTO memory_confidence (namespace, id, live, confidence)
    SELECT c.namespace, c.id, c.live, c.confidence
    FROM jsonb_populate_recordset(NULL::memory_confidence, copies) c;
  END IF;
  IF deltas IS NOT NULL THEN
    PERFORM hindsight_keyword_deltas(deltas);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_confidence_rows() IS
  'Keeps memory_confidence a copy of each memory''s confidence and liveness, and the live '
  'memories'' counts per confidence bucket in keyword_stats.';
"""


TERM_COMMENT_BEFORE = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag), "
    "hindsight_label_term()."
)
TERM_COMMENT = (
    "Term hash; 0 counts live memories; negative: a label (memory type or tag), "
    "hindsight_label_term(), or below -2^30 a confidence bucket, hindsight_confidence_term()."
)

# Writers hold long_term_memory (ROW EXCLUSIVE) from their statement to their commit, and
# the triggers that count run inside: this waits for those under way and holds new ones
# until the commit, when they find the new function.
_LOCK = "LOCK TABLE long_term_memory IN SHARE ROW EXCLUSIVE MODE"

# On a Citus cluster a function command may not follow a multi-shard statement in one
# transaction (0034), so both ways change the functions first.


def upgrade() -> None:
    op.execute(
        functions.load(
            hindsight_confidence_term="6781ce19eede",
            hindsight_confidence_terms="dd77d74f3e8a",
        )
    )
    op.execute(CONFIDENCE_ROWS)
    op.alter_column(
        "keyword_stats", "term", comment=TERM_COMMENT, existing_comment=TERM_COMMENT_BEFORE
    )
    op.execute(_LOCK)
    op.execute(_COUNT)


def downgrade() -> None:
    op.execute(functions.written_by("0036", "CONFIDENCE_ROWS"))
    op.execute("DROP FUNCTION hindsight_confidence_terms(numeric)")
    op.execute("DROP FUNCTION hindsight_confidence_term(numeric)")
    op.alter_column(
        "keyword_stats", "term", comment=TERM_COMMENT_BEFORE, existing_comment=TERM_COMMENT
    )
    op.execute(_LOCK)
    # the buckets' terms, and no label's (hindsight_label_term reaches -2^30 at most)
    op.execute("DELETE FROM keyword_stats WHERE term < -1073741824")
