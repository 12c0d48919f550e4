"""Recall throughput at 16 clients with and without a streaming read replica.

A primary and a physical replica (`pg_basebackup -R`, streaming on loopback) from the
embedded server's own binaries, tuned as `hindsight serve` tunes its embedded server; the
corpus of `benchmarks.perf` imported into the primary; the service started as production
runs it, once on the primary alone and once with `HINDSIGHT_DATABASE_READ_URL`.

    python -m benchmarks.replica [--n 10000] [--queries 400] [--workers 1]

Both servers share this machine's cores, so this measures what routing costs and that
reads really move, not the capacity a second machine would add.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path
from typing import Any

import psutil
import psycopg
from tests.support.pg_replica import StreamingPair
from tests.support.servers import create_database, database_url

from benchmarks.corpus import Corpus
from benchmarks.perf import load, recall_calls, summary, timed_calls
from benchmarks.stack import API_KEY, service
from hindsight.config import Settings
from hindsight.runtime.embedded_redis import RedisProcess

RESULTS = Path(__file__).parent / "results" / "replica.md"


def index_scans(url: str) -> int:
    """Index scans the server has run (a standby counts its own)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes").fetchone()
    return int(row[0]) if row else 0


def measure(
    db: str, redis_url: str, queries: list[tuple[str, str]], workers: int, **env: str
) -> dict[str, Any]:
    with service(db, redis_url, workers=workers, **env) as svc:
        timed_calls(svc, recall_calls(queries, {}), 16)  # warm statements and caches
        runs = []
        for _ in range(3):
            samples, qps = timed_calls(svc, recall_calls(queries, {}), 16)
            runs.append({"qps": round(qps, 1), **summary(samples)})
    return {"runs": runs, "qps_median": statistics.median(r["qps"] for r in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()

    pair = StreamingPair(memory_bytes=psutil.virtual_memory().total).start()
    try:
        primary = create_database(pair.primary_url, "bench_replica")
        replica = database_url(pair.replica_url, "bench_replica")
        print(f"loading {args.n} memories ...", flush=True)
        settings = Settings(api_key=API_KEY)
        loaded = asyncio.run(load(primary, args.n, 1, settings))
        pair.wait_caught_up(timeout=600)
        print(f"loaded: {loaded}; replica caught up", flush=True)
        corpus = Corpus(seed=99)
        queries = [("bench", corpus.query()) for _ in range(args.queries)]
        redis = RedisProcess(pair.base / "redis")
        redis_url = redis.start()
        try:
            results: dict[str, Any] = {}
            before = index_scans(replica)
            results["primary only"] = measure(primary, redis_url, queries, args.workers)
            results["primary only"]["replica_index_scans"] = index_scans(replica) - before
            before = index_scans(replica)
            results["with read replica"] = measure(
                primary, redis_url, queries, args.workers, database_read_url=replica
            )
            results["with read replica"]["replica_index_scans"] = index_scans(replica) - before
        finally:
            redis.stop()
    finally:
        pair.stop()
    print(json.dumps(results, indent=1))
    lines = [
        "# Recall throughput with and without a streaming read replica",
        "",
        f"`python -m benchmarks.replica --n {args.n} --queries {args.queries} "
        f"--workers {args.workers}`: {args.n:,} memories in one namespace, built-in "
        "embedder, 16 keep-alive clients, three passes after a warm-up pass; primary and "
        "replica on this one 2-core machine, streaming over loopback.",
        "",
        "| | recalls/s (median of 3) | p50 ms | p99 ms | index scans on the replica |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        mid = sorted(r["runs"], key=lambda x: x["qps"])[1]
        lines.append(
            f"| {name} | {r['qps_median']} | {mid['p50']} | {mid['p99']} | "
            f"{r['replica_index_scans']:,} |"
        )
    lines += ["", "Every pass: `" + json.dumps(results) + "`", ""]
    RESULTS.write_text("\n".join(lines))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
