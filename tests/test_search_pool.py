"""How the two connection pools search HNSW: recall's search pool walks the graph at
HINDSIGHT_HNSW_EF_SEARCH (pgvector's 40 by default since issue 33: 100 cost recall 0.3-2.4 ms
of its p50 at 100k memories for 0.3-2.2 points of the exact top 10,
benchmarks/results/recall_ab.md); a write's near-duplicate check, on the general pool,
keeps 40 whatever recall is set to, so raising recall's breadth does not slow ingest."""

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


def test_only_recall_searches_wider_when_asked(migrated: str) -> None:
    assert ef_search(migrated) == ("40", "40")
    assert ef_search(migrated, hnsw_ef_search=400) == ("400", "40")
