"""One keyword index: the sparse HNSW graph over `keywords` is dropped; the posting lists
(GIN on keyword_terms) serve the keyword arm alone.

Revision ID: 0034
Revises: 0032
Create Date: 2026-12-05

Both served the same query, the keyword arm of a large namespace. The posting lists of the
query's rarest terms were its main path (0.98 of the exact top 10 from 3,000 postings,
where the graph found 0.54 at ef_search 40); the graph answered only when even the rarest
term was too common for the postings budget. Keeping it was the larger part of what a
write costs the database: a written memory's backend CPU, measured by dropping each piece
in turn from a copy of 20k Zipf memories (benchmarks/write_cost.py), was 5.4 ms, of which
the sparse graph 3.3 and the embedding's HNSW graph 2.7; the GIN posting lists 0.15,
the triggers (history, keyword and label statistics) 0.3 together. It was also the slowest
index to build (about 300 rows/s, against 1,000+ for the embedding's).

A query whose rarest term is too common now reads the memories holding both of its two
rarest terms (one GIN lookup that intersects their lists), or the rarest term's postings
when it has one term; at most the budget of them, scored exactly (stores/search.py).

Cost: dropping an index (a catalog change under a brief lock). The downgrade builds it
again: one pass over the table, at ~300 rows/s on two cores (five minutes at 100k).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0034"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_long_term_memory_keywords"
# as migration 0001 created it (hindsight.db.schema.keywords_index_sql at 0032)
CREATE = (
    f"CREATE INDEX {INDEX} ON long_term_memory USING hnsw (keywords sparsevec_ip_ops) "
    "WITH (m = 16, ef_construction = 64)"
)


def upgrade() -> None:
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")


def downgrade() -> None:
    op.execute("SET LOCAL maintenance_work_mem = '1GB'")
    op.execute(CREATE)
