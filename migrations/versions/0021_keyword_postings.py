"""Keyword postings: the keyword arm scores from an index instead of a heap page per candidate.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02

Recall's keyword arm in a large namespace scores every memory that holds one of the query's
rarest terms (up to HINDSIGHT_KEYWORD_POSTINGS_BUDGET postings). It found them through the
GIN index on keyword_terms and then read each one's row to score it: one heap page per
candidate, 1,759 pages for 1,759 candidates, 5.9 of an 8.5 ms statement (English sentences,
one namespace of 100k; issue 10).

keyword_postings holds, for each memory and each of its terms, the term's weight in the
memory's keyword vector (BM25's saturated term frequency). Its primary key leads with
(namespace, term) and carries the weight, so the postings of a query's terms are a few
contiguous leaf pages read index-only, in this namespace only (the GIN index held every
namespace's postings of a term). The arm sums the rare terms' weights per memory, and reads
the rows of the best few only, to score them on every query term.

Triggers on long_term_memory keep it: every insert, every change of a row's keywords or
namespace, every delete, from any writer (the service, an import, psql). Their functions
plan with sequential scans and hash joins off: the statement that deletes a memory's
postings must probe the key, never scan the table, whatever the transition table's size
looks like to the planner. Cost: about 15 postings a memory, ~100 bytes each with the key
(1.5M postings, 207 MB at 100k English sentences; backfilled in 8 s there).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A sparsevec's text is {index:value,...}/dimensions with 1-based indexes; term ids are
# 0-based (retrieval.keywords).
_POSTINGS_OF = """
  SELECT r.namespace, split_part(e, ':', 1)::int - 1, r.id, split_part(e, ':', 2)::real
  FROM {rows} r,
       unnest(string_to_array(btrim(split_part(r.keywords::text, '/', 1), '{{}}'), ',')) e
"""

_ADDED = _POSTINGS_OF.format(rows="new_rows")
_CHANGED = _POSTINGS_OF.format(
    rows="(SELECT n.* FROM new_rows n JOIN old_rows o ON o.id = n.id "
    "WHERE n.keywords IS DISTINCT FROM o.keywords OR n.namespace <> o.namespace)"
)
_PLAN = "SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off"

TRIGGERS = f"""
CREATE FUNCTION hindsight_ltm_postings_added() RETURNS trigger LANGUAGE plpgsql {_PLAN} AS $$
BEGIN
  INSERT INTO keyword_postings (namespace, term, memory_id, weight)
  {_ADDED};
  RETURN NULL;
END $$;

CREATE FUNCTION hindsight_ltm_postings_changed() RETURNS trigger LANGUAGE plpgsql {_PLAN} AS $$
BEGIN
  DELETE FROM keyword_postings p
  USING old_rows o JOIN new_rows n ON n.id = o.id
  WHERE (n.keywords IS DISTINCT FROM o.keywords OR n.namespace <> o.namespace)
    AND p.namespace = o.namespace AND p.term = ANY(o.keyword_terms) AND p.memory_id = o.id;
  INSERT INTO keyword_postings (namespace, term, memory_id, weight)
  {_CHANGED};
  RETURN NULL;
END $$;

CREATE FUNCTION hindsight_ltm_postings_removed() RETURNS trigger LANGUAGE plpgsql {_PLAN} AS $$
BEGIN
  DELETE FROM keyword_postings p USING old_rows o
  WHERE p.namespace = o.namespace AND p.term = ANY(o.keyword_terms) AND p.memory_id = o.id;
  RETURN NULL;
END $$;

CREATE TRIGGER long_term_memory_postings_added AFTER INSERT ON long_term_memory
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_postings_added();
CREATE TRIGGER long_term_memory_postings_changed AFTER UPDATE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_postings_changed();
CREATE TRIGGER long_term_memory_postings_removed AFTER DELETE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_postings_removed();

COMMENT ON FUNCTION hindsight_ltm_postings_added() IS
  'Adds the keyword postings of new memories.';
COMMENT ON FUNCTION hindsight_ltm_postings_changed() IS
  'Replaces the keyword postings of memories whose keywords or namespace changed.';
COMMENT ON FUNCTION hindsight_ltm_postings_removed() IS
  'Removes the keyword postings of deleted memories.';
"""

DROP_TRIGGERS = """
DROP TRIGGER IF EXISTS long_term_memory_postings_removed ON long_term_memory;
DROP TRIGGER IF EXISTS long_term_memory_postings_changed ON long_term_memory;
DROP TRIGGER IF EXISTS long_term_memory_postings_added ON long_term_memory;
DROP FUNCTION IF EXISTS hindsight_ltm_postings_removed();
DROP FUNCTION IF EXISTS hindsight_ltm_postings_changed();
DROP FUNCTION IF EXISTS hindsight_ltm_postings_added();
"""


def upgrade() -> None:
    op.execute(
        "CREATE TABLE keyword_postings ("
        " namespace text NOT NULL, term integer NOT NULL, memory_id uuid NOT NULL,"
        " weight real NOT NULL,"
        " CONSTRAINT pk_keyword_postings PRIMARY KEY (namespace, term, memory_id)"
        " INCLUDE (weight))"
    )
    for target, comment in (
        (
            "TABLE keyword_postings",
            "One row per memory and term of its keywords, kept by "
            "triggers on long_term_memory: the keyword arm's inverted index.",
        ),
        ("COLUMN keyword_postings.namespace", "Namespace of the memory."),
        ("COLUMN keyword_postings.term", "Term hash, as in keyword_terms."),
        ("COLUMN keyword_postings.memory_id", "long_term_memory.id of the memory."),
        ("COLUMN keyword_postings.weight", "The term's value in the memory's keywords."),
    ):
        quoted = comment.replace("'", "''")
        op.execute(f"COMMENT ON {target} IS '{quoted}'")
    op.execute(
        "INSERT INTO keyword_postings (namespace, term, memory_id, weight)"
        + _POSTINGS_OF.format(rows="long_term_memory")
    )
    op.execute(TRIGGERS)


def downgrade() -> None:
    op.execute(DROP_TRIGGERS)
    op.execute("DROP TABLE keyword_postings")
