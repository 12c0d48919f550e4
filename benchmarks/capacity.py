"""Per-row costs for the capacity model in docs/scaling.md.

Loads memories spread over many small namespaces (as a large deployment holds them) with
the bulk import path, then measures: bytes per memory in the table and in each index, the
rows the side tables gain per memory, the HNSW build rate (REINDEX) and the insert rate
into the indexed table (triggers included), and working memory per step in PostgreSQL and
in Redis.

    python -m benchmarks.capacity [--n 20000] [--per-namespace 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import psycopg
import redis

from benchmarks.perf import load
from benchmarks.stack import API_KEY, stores
from hindsight import core
from hindsight.config import Settings
from hindsight.maintenance import purge
from hindsight.stores.hot_steps_scripts import session_key

RESULTS = Path(__file__).parent / "results" / "capacity.json"
STEP = "Searched the catalogue for hotels near the station and compared three prices. " * 2


def sizes(url: str) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        rows = conn.execute(
            "SELECT c.relname, c.relkind, pg_relation_size(c.oid) AS bytes, "
            "pg_total_relation_size(c.oid) AS total, "
            "(SELECT t.relname FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid "
            " WHERE x.indexrelid = c.oid) AS of_table "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')"
        ).fetchall()
        counts = {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
            for t in (
                "long_term_memory",
                "memory_history",
                "keyword_stats",
                "memory_access",
                "recall_log",
                "working_memory",
            )
        }
    tables = {r[0]: {"heap": r[2], "total": r[3]} for r in rows if r[1] == "r"}
    indexes = {r[0]: {"bytes": r[2], "table": r[4]} for r in rows if r[1] == "i"}
    return {"tables": tables, "indexes": indexes, "rows": counts}


async def compact(url: str) -> None:
    """One maintenance pass: keyword statistics merged to a row per (namespace, term)."""
    settings = Settings(api_key=API_KEY)
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        await purge.run_once(hs.pool, settings)
    finally:
        await hs.aclose()


def index_build_rate(url: str, n: int) -> dict[str, float]:
    out = {}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_maintenance_workers = 0")
        for index in ("ix_long_term_memory_embedding",):
            started = time.perf_counter()
            conn.execute(f"REINDEX INDEX {index}")  # type: ignore[arg-type]
            out[index] = round(n / (time.perf_counter() - started))
    return out


def insert_rate(url: str, rows: int) -> float:
    """Rows/s inserted one statement each into the indexed table, triggers firing, by
    copying existing memories into a new namespace."""
    with psycopg.connect(url, autocommit=True) as conn:
        columns = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'long_term_memory' AND is_generated = 'NEVER' "
                "AND column_name NOT IN ('id', 'namespace') ORDER BY ordinal_position"
            )
        ]
        ids = [r[0] for r in conn.execute("SELECT id FROM long_term_memory LIMIT %s", (rows,))]
        cols = ", ".join(columns)
        started = time.perf_counter()
        for memory_id in ids:
            conn.execute(
                f"INSERT INTO long_term_memory (id, namespace, {cols}) "  # type: ignore[arg-type]
                f"SELECT gen_random_uuid(), 'insert-rate', {cols} FROM long_term_memory "
                "WHERE id = %s",
                (memory_id,),
            )
        return round(len(ids) / (time.perf_counter() - started))


async def steps(url: str, redis_url: str, sessions: int, per_session: int) -> None:
    settings = Settings(api_key=API_KEY, working_memory_cache_steps=100)
    hs = await core.start(settings, database_url=url, redis_url=redis_url, background=False)
    try:
        for s in range(sessions):
            for _ in range(per_session):
                await hs.sessions.append_step("steps", f"s{s}", content=STEP)
    finally:
        await hs.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--per-namespace", type=int, default=100)
    args = parser.parse_args()
    spread = max(1, args.n // args.per_namespace)
    out: dict[str, Any] = {"n": args.n, "namespaces": spread}
    with stores() as s, s.database() as url:
        settings = Settings(api_key=API_KEY)
        started = time.perf_counter()
        out["load"] = asyncio.run(load(url, args.n, spread, settings))
        out["load_seconds"] = round(time.perf_counter() - started, 1)
        asyncio.run(compact(url))
        out["sizes"] = sizes(url)
        out["hnsw_build_rows_per_s"] = index_build_rate(url, args.n)
        out["insert_rows_per_s"] = insert_rate(url, 2000)
        asyncio.run(steps(url, s.redis_url, sessions=10, per_session=150))
        out["steps_sizes"] = sizes(url)["tables"]["working_memory"]
        out["steps_rows"] = 10 * 150
        client = redis.Redis.from_url(s.redis_url)
        out["redis_bytes_per_session_of_100_steps"] = client.memory_usage(
            session_key("steps", "s0")
        )
        out["step_json_bytes"] = len(STEP)
    RESULTS.write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
