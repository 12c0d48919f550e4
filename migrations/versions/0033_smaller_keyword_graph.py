"""The sparse HNSW graph over keyword vectors built smaller (m = 8, ef_construction = 16):
a write keeps it up to date for a quarter of what it cost.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-05

The keyword arm of a large namespace reads the posting lists (GIN on keyword_terms) of the
query's rarest terms; the graph answers only queries whose every term is too common for the
postings budget (7% of Zipf queries at 100k, 19% of our synthetic corpus's at 50k). Keeping
it up to date was half of what a written memory cost the database: per memory, measured as
the backend's CPU by dropping each piece in turn from a copy of 50k Zipf memories
(benchmarks/write_cost.py), 6.4-7.8 ms in all, of which the sparse graph 3.6-4.3 and the
embedding's graph 3.2-4.3; the GIN postings, the label GIN, the b-trees and the triggers
were each within the noise. On 50k synthetic memories the graph at m = 16,
ef_construction = 64 cost 1.48 ms a memory and at m = 8, ef_construction = 16 0.44; the
keyword arm then found 0.82 of the exact BM25 top 10 of the queries it answers, against
0.91 (and 0.95 on every other query, unchanged). Dropping it instead, and reading the
memories that hold the rarest few terms through the posting lists, found 0.55-0.64 and took
twice as long on those queries.

Cost: the graph is built again (parallel, a few seconds at 50k; about a minute at 1M on two
cores) under the migration's lock; recall answers the queries it serves by exact search
meanwhile. The downgrade builds it again with the old parameters (five minutes at 100k).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from hindsight.db.schema import KEYWORDS_INDEX, keywords_index_sql

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _rebuild(m: int, ef_construction: int) -> None:
    op.execute(f"DROP INDEX IF EXISTS {KEYWORDS_INDEX}")
    op.execute("SET LOCAL maintenance_work_mem = '1GB'")
    op.execute("SET LOCAL max_parallel_maintenance_workers = 2")
    op.execute(keywords_index_sql(m=m, ef_construction=ef_construction))


def upgrade() -> None:
    _rebuild(8, 16)


def downgrade() -> None:
    _rebuild(16, 64)
