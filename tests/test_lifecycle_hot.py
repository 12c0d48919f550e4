"""Tier moves are HOT updates: cooling memories that a bulk load wrote side by side
writes no index entry (migration 0020), so the scheduler's cost stays off both HNSW
indexes."""

from __future__ import annotations

import asyncio

from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.stores import lifecycle_moves as store
from tests.support.lifecycle import days_from_now, run_pass, sql
from tests.support.poll import wait_until

N = 300


def updates(url: str) -> tuple[int, int]:
    """long_term_memory's (updates, HOT updates) so far, as the statistics have them."""
    rows = sql(
        url,
        "SELECT pg_stat_clear_snapshot(), n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
        "WHERE relname = 'long_term_memory'",
    )
    return int(rows[0][1]), int(rows[0][2])


def test_cooling_a_bulk_load_is_hot_and_warming_too(fresh_db: str, settings: Settings) -> None:
    # N memories in one statement, as an import writes them: pages filled as far as the
    # fillfactor lets, and each cooling batch holds every row of most of its pages
    sql(
        fresh_db,
        "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type, "
        "embedding, keywords, keyword_terms, confidence) "
        "SELECT uuidv7(), 'hot', 'key ' || g, repeat('a value to keep ', 8) || g, 'fact', "
        # one-hot embeddings: no two alike, so the retroactive merge leaves them be
        "(array_fill(0::real, ARRAY[g - 1]) || 1::real || array_fill(0::real, ARRAY[384 - g]))"
        "::vector::halfvec, "
        "('{' || g || ':1}/268435456')::sparsevec, ARRAY[g], 0.7 "
        "FROM generate_series(1, %s) g",
        N,
    )
    pages, per_page = sql(
        fresh_db,
        "SELECT count(DISTINCT (ctid::text::point)[0]), max(n) FROM (SELECT ctid, count(*) "
        "OVER (PARTITION BY (ctid::text::point)[0]) AS n FROM long_term_memory) r",
    )[0]
    assert per_page >= 4 and pages < N / 3  # side by side, as the test means
    before = updates(fresh_db)

    report, moves = run_pass(settings, fresh_db, now=days_from_now(31), namespace="hot")
    assert report.ran and len(moves) == N and {m.action for m in moves} == {"cold"}

    # statistics reach the shared counters after the backends' transactions, not at once
    wait_until(lambda: updates(fresh_db)[0] - before[0] >= N, "the pass's updates are counted")
    after = updates(fresh_db)
    updated, hot = after[0] - before[0], after[1] - before[1]
    assert updated == N
    # before 0020 none was (status is named by the partial indexes); with the computed
    # columns but full pages, none either; with the room but the whole batch in one
    # transaction, what a page's room holds (120 of these 300, measured)
    assert hot >= 0.9 * N, (hot, updated)

    # a recall warming a few of them: one transaction, rows on different pages
    ids = [r[0] for r in sql(fresh_db, "SELECT id FROM long_term_memory ORDER BY id")][::7]

    async def warm() -> int:
        pool = await open_pool(settings, fresh_db)
        try:
            async with pool.connection() as conn, conn.transaction():
                return await store.warm(conn, [("hot", i) for i in ids])
        finally:
            await pool.close()

    assert asyncio.run(warm()) == len(ids)
    wait_until(lambda: updates(fresh_db)[0] - after[0] >= len(ids), "the warming is counted")
    warmed = updates(fresh_db)
    assert warmed[1] - after[1] >= 0.9 * len(ids), (warmed, after)
    assert sql(fresh_db, "SELECT count(*) FROM long_term_memory WHERE live") == [(N,)]
    history = sql(
        fresh_db, "SELECT change, count(*) FROM memory_history WHERE change <> 'created' GROUP BY 1"
    )
    assert dict(history) == {"cooled": N, "warmed": len(ids)}
