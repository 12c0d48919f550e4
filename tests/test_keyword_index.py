"""The keyword arm's GIN index keeps no pending list: with PostgreSQL's default (fastupdate
on) new rows' terms wait in an unsorted list that every search reads whole, until VACUUM or
4 MB of them; a service taking writes always had one, and every recall of a large namespace
paid for it (migration 0021 has the numbers). These tests hold every way the index comes
to exist: the migrations, an import's rebuild, and a database upgraded with entries pending."""

from __future__ import annotations

import asyncio
import json

import psycopg

from hindsight import core
from hindsight.db import migrate
from hindsight.db.schema import KEYWORD_TERMS_INDEX
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.services.bulk_import import BulkImporter, parse_line
from hindsight.text.tokenize import KEYWORD_DIMENSIONS
from tests.conftest import Api, make_settings

# the index's name before migration 0035 moved it to memory_keywords
ON_MEMORIES = "ix_long_term_memory_keyword_terms"


def pending_pages(url: str, index: str = KEYWORD_TERMS_INDEX) -> int:
    """Merges the index's pending list; how many pages it held."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (index,)).fetchone()
    assert row is not None
    return int(row[0])


def index_options(url: str, index: str = KEYWORD_TERMS_INDEX) -> list[str]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT coalesce(reloptions, '{}') FROM pg_class WHERE relname = %s", (index,)
        ).fetchone()
    assert row is not None
    return list(row[0])


def test_observed_memories_leave_nothing_for_recall_to_read_twice(api: Api, migrated: str) -> None:
    pending_pages(migrated)  # whatever earlier tests left, if anything
    api.observe(
        *(
            {"key": f"trip-{i}", "value": f"flight {i} to Lisbon leaves gate B{i} at dawn"}
            for i in range(60)
        )
    )
    assert pending_pages(migrated) == 0
    # and recall still finds them through the index
    hits = api.recall("gate B7 Lisbon flight")["results"]
    assert any(h["key"] == "trip-7" for h in hits)


def test_an_import_that_rebuilds_the_indexes_builds_it_the_same_way(fresh_db: str) -> None:
    async def load() -> None:
        settings = make_settings(db_pool_min=1, db_pool_max=2)
        hs = await core.start(settings, database_url=fresh_db, redis_url=None, background=False)
        try:
            lines = [
                json.dumps({"key": f"k{i}", "value": f"note {i} about harbour {i}"})
                for i in range(40)
            ]
            items = [parse_line(line, "imp", i) for i, line in enumerate(lines)]
            importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
            await importer.run(items, total=len(items), import_id="gin", rebuild_indexes=True)
        finally:
            await hs.aclose()

    asyncio.run(load())
    assert "fastupdate=off" in index_options(fresh_db)


def test_the_upgrade_merges_what_an_older_schema_left_pending(empty_db: str) -> None:
    cfg = migrate.alembic_config(
        empty_db, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
    )
    migrate.upgrade(cfg, "0020")
    assert "fastupdate=off" not in index_options(empty_db, ON_MEMORIES)
    zero = "[" + ",".join(["0.1"] * 384) + "]"
    with psycopg.connect(empty_db, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type, "
            "embedding, keywords, keyword_terms, confidence) "
            "SELECT gen_random_uuid(), 'old', 'k' || i, 'v' || i, 'fact', %s::halfvec, "
            "('{' || (i %% 500 + 1) || ':1}/' || %s)::sparsevec, ARRAY[i %% 500, 7], 0.5 "
            "FROM generate_series(1, 2000) i",
            (zero, KEYWORD_DIMENSIONS),
        )
        assert conn.execute(
            "SELECT count(*) FROM long_term_memory WHERE keyword_terms && ARRAY[7]"
        ).fetchone() == (2000,)
    migrate.upgrade(cfg, "0021")  # later revisions re-index these made-up terms (0028)
    assert "fastupdate=off" in index_options(empty_db, ON_MEMORIES)
    assert pending_pages(empty_db, ON_MEMORIES) == 0  # the upgrade merged them
    with psycopg.connect(empty_db) as conn:  # into the index, not away
        conn.execute("SET enable_seqscan = off")
        assert conn.execute(
            "SELECT count(*) FROM long_term_memory WHERE keyword_terms && ARRAY[7]"
        ).fetchone() == (2000,)
    migrate.downgrade(cfg, "0020")
    assert "fastupdate=off" not in index_options(empty_db, ON_MEMORIES)
