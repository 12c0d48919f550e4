"""How much of the exact top 10 the HNSW index finds, and what a wider search costs.

    python -m benchmarks.hnsw_quality --corpus zipf --n 100000 --keep DIR
    python -m benchmarks.hnsw_quality --corpus english --n 100000 --ef 40,100,200,400

Loads the corpus through the bulk import (or reuses a kept one), then for each
`hnsw.ef_search` runs the id-only vector query for every test query and compares its ids
with an exact scan of the same namespace: mean recall@10 and p50/p99 latency. Prints a
table; nothing is written.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from pgvector import HalfVector

from benchmarks.corpora import CORPORA
from benchmarks.matrix import Cell, cell_database, load_import
from benchmarks.perf import summary
from benchmarks.stack import stores
from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.db.schema import EMBEDDING_INDEX, embedding_index_sql
from hindsight.embeddings.builtin import BuiltinEmbedder

QUERY = (
    "SELECT id FROM long_term_memory WHERE namespace = 'bench' AND status = 'active' "
    "ORDER BY embedding <=> %s LIMIT 10"
)
EXACT = (
    "SELECT id FROM long_term_memory WHERE namespace = 'bench' AND status = 'active' "
    "ORDER BY (embedding <=> %s) + 0 LIMIT 10"
)


async def sweep(url: str, queries: list[str], efs: list[int], settings: Settings) -> None:
    embedder = BuiltinEmbedder()
    vectors = [HalfVector(embedder.embed_one(q)) for q in queries]
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 1}), url, search=False)
    async with pool.connection() as conn:
        await conn.execute("SET enable_seqscan = off")
        exact = []
        await conn.execute("SET enable_indexscan = off")  # the HNSW index is an index scan
        for v in vectors:
            exact.append({r["id"] for r in await (await conn.execute(EXACT, (v,))).fetchall()})
        await conn.execute("RESET enable_indexscan")
        await conn.execute("SET enable_sort = off")
        print("| ef_search | recall@10 | p50 ms | p99 ms |\n| ---: | ---: | ---: | ---: |")
        for ef in efs:
            await conn.execute(f"SET hnsw.ef_search = {ef}")
            found, times = [], []
            for v, want in zip(vectors, exact, strict=True):
                start = time.perf_counter()
                got = {r["id"] for r in await (await conn.execute(QUERY, (v,))).fetchall()}
                times.append(time.perf_counter() - start)
                found.append(len(got & want) / max(1, len(want)))
            s = summary(times)
            print(f"| {ef} | {statistics.fmean(found):.3f} | {s['p50']} | {s['p99']} |")
    await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default="zipf", choices=sorted(CORPORA))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--ef", default="40,64,100,200,400")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path)
    parser.add_argument(
        "--build",
        help="rebuild the vector index first WITH (m = M, ef_construction = EFC), given as M,EFC",
    )
    args = parser.parse_args()
    corpus = CORPORA[args.corpus]
    cell = Cell(args.corpus, "import", 1, args.n)
    with stores(args.keep) as s, cell_database(s, cell, args.keep is not None) as (url, fresh):
        settings = Settings(api_key="x" * 20, data_dir=s.root)
        if fresh:
            print(f"loading {args.n:,} {args.corpus} memories ...", flush=True)
            asyncio.run(load_import(url, cell, corpus, settings))
        if args.build:
            m, efc = (int(x) for x in args.build.split(","))
            took = rebuild(url, m, efc)
            print(f"index rebuilt WITH (m = {m}, ef_construction = {efc}) in {took:.0f} s")
        efs = [int(e) for e in args.ef.split(",")]
        asyncio.run(sweep(url, corpus.queries(args.queries), efs, settings))


def rebuild(url: str, m: int, efc: int) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {EMBEDDING_INDEX}")
        conn.execute("SET maintenance_work_mem = '1GB'")
        start = time.perf_counter()
        conn.execute(
            embedding_index_sql().replace(
                "m = 16, ef_construction = 64", f"m = {m}, ef_construction = {efc}"
            )
        )
        return time.perf_counter() - start


if __name__ == "__main__":
    main()
