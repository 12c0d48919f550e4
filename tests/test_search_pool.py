"""How the two connection pools search HNSW: recall's search pool walks the graph at
HINDSIGHT_HNSW_EF_SEARCH (100 by default: on 100k English sentences 0.967 of the exact top
10 against 0.937 at pgvector's 40, benchmarks/README.md item 24); a write's near-duplicate
check, on the general pool, keeps pgvector's 40 whatever recall is set to, so raising
recall's breadth does not slow ingest."""

from __future__ import annotations

import asyncio

from hindsight import core
from tests.conftest import make_settings


def ef_search(url: str, **overrides: object) -> tuple[str, str]:
    async def go() -> tuple[str, str]:
        settings = make_settings(db_pool_min=1, db_pool_max=1, **overrides)
        hs = await core.start(settings, database_url=url, redis_url=None, background=False)
        try:
            shown = []
            for pool in (hs.search_pool, hs.pool):
                async with pool.connection() as conn:
                    row = await (await conn.execute("SHOW hnsw.ef_search")).fetchone()
                    assert row is not None
                    shown.append(row["hnsw.ef_search"])
            return shown[0], shown[1]
        finally:
            await hs.aclose()

    return asyncio.run(go())


def test_recall_searches_wider_than_a_write_checks_for_twins(migrated: str) -> None:
    assert ef_search(migrated) == ("100", "40")
    assert ef_search(migrated, hnsw_ef_search=400) == ("400", "40")
