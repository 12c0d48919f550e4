"""What a wider HNSW search (`HINDSIGHT_HNSW_EF_SEARCH`) costs recall and what it finds.

    python -m benchmarks.ef_search_default --keep DIR [--corpora english,zipf,synthetic] \
        [--ef 40,100] [--n 100000] [--queries 200]

On corpora `benchmarks.matrix --keep DIR --paths import --spreads 1` loaded (one namespace
of N memories), for each ef_search: recall's two statements run as the service runs them
(concurrently, on the search pool), interleaved query by query with the other ef_search
values so that load on the shared machine lands on all of them alike, and the vector arm
alone the same way; then, as `benchmarks.perf` measures HNSW quality, the share of the
exact top 10 the vector arm and the ranked answers find. A wider search walks more of the
graph, so the vector arm costs more; whether recall does depends on whether the vector
arm is the slower of the two statements.

This study once chose 100 (benchmarks/README.md item 24: there the wider walk cost the two
statements 0-1 ms at 100k). Issue 33 measured the whole recall over HTTP, both settings
side by side (`benchmarks.recall_ab`, results/recall_ab.md): 100 cost 0.3-2.4 ms of
recall's p50 at 100k for 0.3-2.2 points of the answers' share of the exact fused top 10,
so the default is pgvector's 40 again (benchmarks/README.md item 33). Run both to see the
trade-off on your own corpus.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from psycopg_pool import AsyncConnectionPool
from tests.support.servers import database_url

from benchmarks.corpora import CORPORA
from benchmarks.matrix import namespace_of
from benchmarks.perf import hnsw_quality, search_of, summary
from benchmarks.stack import stores
from hindsight.config import Settings
from hindsight.db.pool import Connection, open_pool
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter

Pool = AsyncConnectionPool[Connection]


async def timed(pool: Pool, search: search_store.Search, arms: tuple[str, ...]) -> float:
    async def arm(which: str) -> None:
        async with pool.connection() as conn:
            await search_store.arm_candidates(conn, search, which)

    start = time.perf_counter()
    await asyncio.gather(*(arm(a) for a in arms))
    return time.perf_counter() - start


async def latencies(url: str, queries: list[tuple[str, str]], efs: list[int]) -> dict[int, Any]:
    settings = Settings()
    pools = {
        ef: await open_pool(
            settings.model_copy(update={"hnsw_ef_search": ef, "db_pool_min": 2}), url, search=True
        )
        for ef in efs
    }
    searches = [search_of(ns, q, settings, MemoryFilter()) for ns, q in queries]
    both: dict[int, list[float]] = {ef: [] for ef in efs}
    vector: dict[int, list[float]] = {ef: [] for ef in efs}
    for warm in (True, False):
        for i, search in enumerate(searches):
            order = efs if i % 2 == 0 else efs[::-1]
            for ef in order:
                b = await timed(pools[ef], search, ("vector", "keyword"))
                v = await timed(pools[ef], search, ("vector",))
                if not warm:
                    both[ef].append(b)
                    vector[ef].append(v)
    for pool in pools.values():
        await pool.close()

    return {
        ef: {
            "both p50": summary(both[ef])["p50"],
            "both p95": summary(both[ef])["p95"],
            "vector p50": summary(vector[ef])["p50"],
        }
        for ef in efs
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--corpora", default="english,zipf,synthetic")
    parser.add_argument("--ef", default="40,100")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    efs = [int(x) for x in args.ef.split(",")]
    rows = []
    with stores(args.keep) as s:
        for name in args.corpora.split(","):
            url = database_url(s.server_url, f"m_{name}_import_1_{args.n}")
            queries = [(namespace_of(0, 1), q) for q in CORPORA[name].queries(args.queries)]
            times = asyncio.run(latencies(url, queries, efs))
            for ef in efs:
                base = Settings().model_copy(update={"hnsw_ef_search": ef})
                found = asyncio.run(hnsw_quality(url, queries[:150], base, {}))
                rows.append((name, ef, times[ef], found))
                print(name, ef, times[ef], found, flush=True)
    print()
    print(
        f"One namespace of {args.n:,} memories ({args.queries} queries, interleaved); ms; "
        "quality as the share of the exact top 10 found (150 queries)."
    )
    print()
    print(
        "| corpus | ef_search | both statements p50 | p95 | vector arm alone p50 "
        "| vector arm vs exact | answers vs exact |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, ef, t, q in rows:
        print(
            f"| {name} | {ef} | {t['both p50']} | {t['both p95']} | {t['vector p50']} "
            f"| {q['vector']} | {q['answers']} |"
        )


if __name__ == "__main__":
    main()
