"""memory_confidence: each memory's confidence, indexed, so that a min_confidence filter that
admits few memories is searched exactly among them.

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-07

Recall narrows a filter that admits few memories of a large namespace by counting them
through an index and scoring those exactly (stores/narrowing.py). min_confidence could not
be counted: an index on long_term_memory.confidence would make every reinforcement, which
changes it, a non-HOT update that enters the row into both HNSW graphs again. So the vector
arm walked the graph until it met k memories the filter admits. At 100k memories with
min_confidence admitting 1.1% of them it took 32-33 ms p50 (0.11%: 63-67 ms, 94 ms at p99),
and the keyword arm, probing each budgeted posting's memory, found 0.23-0.65 of the keyword
top 10 of what the filter admits (benchmarks/README item 37).

memory_confidence holds (namespace, id, live, confidence) per memory, in every status, with
a b-tree on (namespace, confidence) over the live rows; statement triggers on
long_term_memory (hindsight_ltm_confidence_rows, the 0035 pattern) write it with the memory,
rewrite a row when its confidence or liveness changes (a reinforcement does) and delete it
with the memory. long_term_memory stays the source.

On a Citus cluster the table is distributed by namespace with long_term_memory here,
before its triggers exist.

Cost: one pass over long_term_memory to copy it and one b-tree build, with writes to it
locked out until the upgrade commits (its triggers are created first).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0036"
down_revision: str | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = """
CREATE TABLE memory_confidence (
    namespace text NOT NULL,
    id uuid NOT NULL,
    live boolean NOT NULL,
    confidence numeric(5, 4) NOT NULL,
    CONSTRAINT pk_memory_confidence PRIMARY KEY (namespace, id)
);
COMMENT ON TABLE memory_confidence IS 'Each long-term memory''s confidence and liveness, '
    'kept by triggers on long_term_memory, indexed for recall''s min_confidence filter.';
COMMENT ON COLUMN memory_confidence.namespace IS 'Namespace of the memory.';
COMMENT ON COLUMN memory_confidence.id IS 'long_term_memory.id.';
COMMENT ON COLUMN memory_confidence.live IS 'The memory''s live (copied).';
COMMENT ON COLUMN memory_confidence.confidence IS 'The memory''s confidence (copied).';
"""

_COPY = """
INSERT INTO memory_confidence (namespace, id, live, confidence)
SELECT namespace, id, live, confidence FROM long_term_memory
"""

# The copy's trigger function as this revision wrote it (0037 replaced it, to count the
# live memories per confidence bucket too, and puts this back on downgrade).
CONFIDENCE_ROWS = """
CREATE OR REPLACE FUNCTION hindsight_ltm_confidence_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  namespaces text[];
  copies jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.live, n.confidence FROM new_rows n) c;
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
  ELSE
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o;
  END IF;
  IF ids IS NOT NULL THEN  -- ANY(NULL) would leave Citus no shard to route to
    DELETE FROM memory_confidence c WHERE c.namespace = ANY(namespaces) AND c.id = ANY(ids);
  END IF;
  IF copies IS NOT NULL THEN
    INSERT INTO memory_confidence (namespace, id, live, confidence)
    SELECT c.namespace, c.id, c.live, c.confidence
    FROM jsonb_populate_recordset(NULL::memory_confidence, copies) c;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_confidence_rows() IS
  'Keeps memory_confidence a copy of each memory''s confidence and liveness.';
"""

INDEX = (
    "CREATE INDEX ix_memory_confidence_live ON memory_confidence (namespace, confidence) "
    "INCLUDE (id) WHERE live"
)

# The triggers as this revision created them (0038 replaced them; its downgrade puts them
# back).
INSERTED = """
CREATE TRIGGER long_term_memory_confidence_inserted AFTER INSERT ON long_term_memory
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_confidence_rows();
"""
UPDATED = """
CREATE TRIGGER long_term_memory_confidence_updated AFTER UPDATE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_confidence_rows();
"""
DELETED = """
CREATE TRIGGER long_term_memory_confidence_deleted AFTER DELETE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_confidence_rows();
"""
TRIGGERS = (INSERTED, UPDATED, DELETED)


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
    op.execute(CONFIDENCE_ROWS)
    op.execute(TABLE)
    if _distributed():
        op.execute(
            "SELECT create_distributed_table('memory_confidence', 'namespace', "
            "colocate_with => 'long_term_memory')"
        )
    # The triggers before the copy, one statement at a time, as in 0035: CREATE TRIGGER
    # keeps writes to long_term_memory out until the upgrade commits.
    for trigger in TRIGGERS:
        op.execute(trigger)
    op.execute(_COPY)
    op.execute(INDEX)
    op.execute("ANALYZE memory_confidence")


def downgrade() -> None:
    if _distributed():
        # the function is dropped after DDL on distributed tables (as in 0035)
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    for event in ("inserted", "updated", "deleted"):
        op.execute(f"DROP TRIGGER long_term_memory_confidence_{event} ON long_term_memory")
    op.execute("DROP TABLE memory_confidence")
    op.execute("DROP FUNCTION hindsight_ltm_confidence_rows()")
