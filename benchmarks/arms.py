"""Where a recall's database time goes: each arm's statement on its own, cold and warm.

    python -m benchmarks.arms --n 100000                         # one namespace
    python -m benchmarks.arms --n 1000000 --spread 1000 --keep /var/tmp/hsb

Loads N memories as `benchmarks.perf` does (with `--keep`, into a database kept there and
reused by later runs of either benchmark), then for each arm (the service's own statements,
as recall runs them) measures:
- cold: the first pass over the queries, as EXPLAIN (ANALYZE, BUFFERS): execution and
  planning time, and the buffers found in shared memory (hit) or read from the OS (read);
- warm: a later pass, timed at the client as the service would see it, and its buffers.
`python -m benchmarks.matrix --profile` runs the same on a matrix cell's corpus. It also
times the id-only HNSW query (`ORDER BY embedding <=> q LIMIT 10`, the usual
pgvector benchmark query) for reference. The cold pass of each arm uses its own queries,
so neither arm warms the other's pages. The cold pass is cold only in a run that reuses a
kept corpus: PostgreSQL has just started, so its shared buffers are empty while the
operating system's page cache is not.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from pathlib import Path
from typing import Any

import psycopg
from tests.support.plans import executed_nodes

from benchmarks import perf
from benchmarks.corpus import Corpus
from benchmarks.stack import stores
from hindsight.config import Settings
from hindsight.db.pool import Connection, open_pool
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter

ARMS = ("vector", "keyword")


def searches(settings: Settings, spread: int, count: int) -> list[search_store.Search]:
    rng = random.Random(99)
    corpus = Corpus(seed=99)
    names = perf.namespaces(spread)
    chosen = [(rng.choice(names), corpus.query()) for _ in range(count)]
    return [perf.search_of(ns, q, settings, MemoryFilter()) for ns, q in chosen]


def buffers(plan: dict[str, Any]) -> tuple[int, int]:
    return plan.get("Shared Hit Blocks", 0), plan.get("Shared Read Blocks", 0)


# the tables an arm reads memories' rows from: the memories, the keyword arm's postings'
# copy (migration 0035) and the facets' (min_confidence's since 0036, min_importance's and
# observed_*'s since 0038, when it was renamed memory_facets)
READ = ("long_term_memory", "memory_keywords", "memory_confidence", "memory_facets")


def rows_read(plan: dict[str, Any]) -> int:
    """Rows of the memory tables the statement's scans read, kept or filtered out, beside
    the by-id fetch of each candidate (the primary key probes, one row each): what grows
    with the namespace when an arm does more than walk an index to its k rows."""
    return round(
        sum(
            node.rows_read
            for node in executed_nodes(plan)
            if node.relation in READ and node.index != "pk_long_term_memory"
        )
    )


async def explained(conn: Connection, search: search_store.Search, arm: str) -> dict[str, float]:
    sql, params = search.statement(arm)
    cur = await conn.execute(
        "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + sql, params, binary=True
    )
    row = await cur.fetchone()
    assert row is not None
    (out,) = row.values()
    top = out[0]
    hit, read = buffers(top["Plan"])
    return {
        "exec_ms": top["Execution Time"],
        "plan_ms": top["Planning Time"],
        "hit": hit,
        "read": read,
        "rows": rows_read(top["Plan"]),
    }


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}


async def measure(
    url: str, settings: Settings, found: list[search_store.Search], queries: int
) -> dict[str, Any]:
    """Both arms over `found` (at least 2 × `queries` searches: each arm's cold pass has
    its own), cold then warm, and the id-only HNSW query."""
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 1}), url, search=True)
    out: dict[str, Any] = {}
    async with pool.connection() as conn:
        for i, arm in enumerate(ARMS):
            mine = found[i * queries : (i + 1) * queries]
            out[f"{arm} cold"] = medians([await explained(conn, s, arm) for s in mine])
        for arm in ARMS:
            mine = found[:queries]
            for s in mine:  # warm what both arms read
                await search_store.arm_candidates(conn, s, arm)
            client = []
            for s in mine:
                start = time.perf_counter()
                await search_store.arm_candidates(conn, s, arm)
                client.append((time.perf_counter() - start) * 1000)
            warm = medians([await explained(conn, s, arm) for s in mine])
            out[f"{arm} warm"] = warm | {"client_ms": round(statistics.median(client), 2)}
        id_only = []
        for s in found[:queries]:
            start = time.perf_counter()
            await conn.execute(
                "SELECT id FROM long_term_memory WHERE namespace = %s "
                "ORDER BY embedding <=> %s LIMIT 10",
                (s.namespace, s.query_vector),
            )
            id_only.append((time.perf_counter() - start) * 1000)
        out["id-only HNSW query, warm"] = {"client_ms": round(statistics.median(id_only), 2)}
    await pool.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--spread", type=int, default=1)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--keep", type=Path, help="keep the loaded database in this directory")
    args = parser.parse_args()
    with stores(args.keep) as s:
        settings = Settings(api_key="x" * 20, data_dir=s.root)
        config = perf.Config(args.n, args.spread)
        with perf.loaded(s, config, settings, keep=args.keep is not None) as (url, load):
            with psycopg.connect(url) as conn:
                sizes = conn.execute(
                    "SELECT current_setting('shared_buffers'), "
                    "pg_size_pretty(pg_database_size(current_database()))"
                ).fetchone()
            found = searches(settings, args.spread, args.queries * len(ARMS))
            measured = asyncio.run(measure(url, settings, found, args.queries))
        print(f"{config.name} memories, loaded at {load}; shared_buffers, database size:")
        print(sizes)
        for label, numbers in measured.items():
            print(f"{label:>26}: {numbers}")


if __name__ == "__main__":
    main()
