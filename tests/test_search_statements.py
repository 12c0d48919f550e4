"""Recall's two statements are sent with their placeholders numbered once
(stores.search.numbered), not converted by psycopg on every call: they must find exactly
what the named statements psycopg converts itself find, in a namespace searched exactly and
in one searched through HNSW, with and without filters (which add placeholders of their
own, and narrow the search)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pgvector import HalfVector

from hindsight.db.pool import open_pool
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import query_terms
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter
from tests.conftest import Api, make_settings
from tests.support.servers import ThreadServer

EXACT_MAX = 50
WORDS = ["river", "stone", "cloud", "lamp", "garden", "window", "paper", "engine", "harbor"]
FILTERS = {
    "none": MemoryFilter(),
    "tag": MemoryFilter(tags=("rare",)),
    "types and confidence": MemoryFilter(memory_types=("fact",), min_confidence=0.5),
    "created window": MemoryFilter(
        created_after=datetime.now(UTC) - timedelta(days=1),
        created_before=datetime.now(UTC) + timedelta(days=1),
    ),
    "key prefix": MemoryFilter(key_prefix="note.1"),
}


@pytest.fixture(scope="module")
def loaded(module_db: str, redis_url: str) -> str:
    settings = make_settings(exact_search_max_rows=EXACT_MAX)
    with ThreadServer(settings, module_db, redis_url) as srv:
        for ns, n in (("big", 300), ("small", 30)):
            Api.at(srv.url, ns).observe(
                *(
                    {
                        "key": f"note.{i}",
                        "value": f"{WORDS[i % 9]} {WORDS[(i * 4) % 9]} by the {WORDS[i % 5]} "
                        f"number {i}",
                        "tags": ["rare"] if i % 17 == 0 else ["common"],
                    }
                    for i in range(n)
                )
            )
    return module_db


async def both_ways(url: str, search: search_store.Search, arm: str) -> tuple[Any, Any]:
    settings = make_settings(exact_search_max_rows=EXACT_MAX, db_pool_min=1, db_pool_max=1)
    pool = await open_pool(settings, url, search=True)
    try:
        async with pool.connection() as conn:
            sql, params = search.statement(arm)
            named = await (await conn.execute(sql, params, binary=True)).fetchall()
            numbered = await search_store.arm_candidates(conn, search, arm)
    finally:
        await pool.close()
    return named, numbered


@pytest.mark.parametrize("which", list(FILTERS))
@pytest.mark.parametrize("namespace", ["big", "small"])
def test_numbered_statements_find_what_named_ones_find(
    loaded: str, namespace: str, which: str
) -> None:
    query = "stone garden river"
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))
    search = search_store.Search(
        namespace, vector, terms, counts, FILTERS[which], 10, EXACT_MAX, 3000
    )
    for arm in ("vector", "keyword"):
        named, numbered = asyncio.run(both_ways(loaded, search, arm))
        assert named, (arm, which)  # every case finds something to compare
        assert numbered == named, (arm, which)


def test_numbering_follows_first_use() -> None:
    sql, names = search_store.numbered(
        "SELECT %(a)s, %(b)s WHERE x = %(a)s AND y = ANY(%(c)s::int[])"
    )
    assert sql == "SELECT $1, $2 WHERE x = $1 AND y = ANY($3::int[])"
    assert names == ("a", "b", "c")
