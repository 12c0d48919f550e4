"""English words in the keyword arm as their Porter stems.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-05

The keyword arm indexed words as written, so "adopted" never matched "adopting" and
"party" never matched "parties". It now indexes and searches the Porter stem of every word
in plain Latin letters (`hindsight.text.stem`; other text, digits and CJK, unchanged). Every
memory whose terms change gets its keyword vector and terms rewritten; the triggers move
its document frequencies in `keyword_stats` as for any update (no history entry: the value
is unchanged). Specificities kept in `memory_access` were computed over the old terms and
are cleared (recall computes them again). Embeddings are not touched: the built-in
embedder does not stem.

Cost: one read of long_term_memory (key and value, in batches of 2,000 by id) and a rewrite
of each changed row: in English text nearly every row. When more than 10,000 rows change,
the two keyword indexes (sparse HNSW and GIN) are dropped first and built again at the end,
which is several times faster than updating them row by row (at 100k memories: about a
minute in all on two cores). Downgrade re-indexes the same way without stemming.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from hindsight.db.schema import KEYWORDS_INDEX, keywords_index_sql
from hindsight.text.stem import stem
from hindsight.text.tokenize import KEYWORD_DIMENSIONS, keyword_tokens, term_id

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# BM25 document side, as in hindsight.retrieval.keywords (fixed here: it defines the index)
K1, B, AVG_DOC_TERMS, MAX_TERMS = 1.2, 0.75, 10.0, 1000
BATCH = 2000
REBUILD_ABOVE = 10_000
# the posting lists as they were then, on long_term_memory (0035 moved them)
_KEYWORD_TERMS_INDEX = "ix_long_term_memory_keyword_terms"
_KEYWORD_TERMS_INDEX_SQL = (
    f"CREATE INDEX {_KEYWORD_TERMS_INDEX} ON long_term_memory USING gin (keyword_terms) "
    "WITH (fastupdate = off)"
)

_ROWS = sa.text(
    "SELECT namespace, id, mem_key, mem_value, keyword_terms FROM long_term_memory "
    "WHERE id > :after ORDER BY id LIMIT :n"
)
_UPDATE = sa.text(
    "UPDATE long_term_memory m SET keywords = u.k::sparsevec, keyword_terms = u.t::int[] "
    "FROM unnest(CAST(:ns AS text[]), CAST(:ids AS uuid[]), CAST(:k AS text[]), "
    "CAST(:t AS text[])) AS u(namespace, id, k, t) "
    "WHERE m.namespace = u.namespace AND m.id = u.id"
)


def _stemmed(text: str) -> Counter[int]:
    """A memory's terms from this revision on: keyword tokens, English words stemmed."""
    return Counter(term_id(stem(t)) for t in keyword_tokens(text))


def _unstemmed(text: str) -> Counter[int]:
    """How revision 0031's code made a memory's terms: keyword tokens as written."""
    return Counter(term_id(t) for t in keyword_tokens(text))


def _sparse(counts: Counter[int]) -> tuple[str, list[int]]:
    if len(counts) > MAX_TERMS:
        counts = Counter(dict(counts.most_common(MAX_TERMS)))
    norm = K1 * (1 - B + B * sum(counts.values()) / AVG_DOC_TERMS)
    weights = {t: tf * (K1 + 1) / (tf + norm) for t, tf in sorted(counts.items())}
    text = ",".join(f"{t + 1}:{w}" for t, w in weights.items())
    return "{" + text + "}/" + str(KEYWORD_DIMENSIONS), sorted(weights)


def _changes(terms: Callable[[str], Counter[int]]) -> list[list[tuple[str, Any, str, str]]]:
    """Per batch, (namespace, id, keyword vector, terms) of every row whose terms change."""
    conn = op.get_bind()
    batches: list[list[tuple[str, Any, str, str]]] = []
    after: Any = "00000000-0000-0000-0000-000000000000"
    while True:
        rows = list(conn.execute(_ROWS, {"after": after, "n": BATCH}))
        if not rows:
            return batches
        changed = []
        for row in rows:
            vector, ids = _sparse(terms(f"{row.mem_key}: {row.mem_value}"))
            if ids != list(row.keyword_terms or []):
                changed.append((row.namespace, row.id, vector, "{" + ",".join(map(str, ids)) + "}"))
        if changed:
            batches.append(changed)
        after = rows[-1].id


def _reindex(terms: Callable[[str], Counter[int]]) -> None:
    conn = op.get_bind()
    batches = _changes(terms)
    rebuild = sum(len(b) for b in batches) > REBUILD_ABOVE
    if rebuild:
        op.execute(f"DROP INDEX IF EXISTS {KEYWORDS_INDEX}")
        op.execute(f"DROP INDEX IF EXISTS {_KEYWORD_TERMS_INDEX}")
    for batch in batches:
        namespaces, ids, vectors, term_lists = zip(*batch, strict=True)
        conn.execute(
            _UPDATE,
            {"ns": list(namespaces), "ids": list(ids), "k": list(vectors), "t": list(term_lists)},
        )
    if rebuild:
        op.execute("SET LOCAL maintenance_work_mem = '1GB'")
        op.execute(keywords_index_sql(m=16, ef_construction=64))  # as it was then (0033)
        op.execute(_KEYWORD_TERMS_INDEX_SQL)
    # computed over the old terms (stores.search reads them back while they hold)
    op.execute(
        "UPDATE memory_access SET specificity = NULL, specificity_of = NULL, "
        "specificity_at = NULL, specificity_n = NULL WHERE specificity IS NOT NULL"
    )


def upgrade() -> None:
    _reindex(_stemmed)


def downgrade() -> None:
    _reindex(_unstemmed)
