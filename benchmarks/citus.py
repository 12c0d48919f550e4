"""Hindsight on a Citus cluster beside a single PostgreSQL 15 with the same data, in one run.

    python -m benchmarks.citus [--n 100000] [--spread 1000] [--shards 64]

Starts, from the binaries `../shared/citus/build.sh` installs, a Citus coordinator with two
workers and a single PostgreSQL 15, all with the same settings (tests/support/citus.py);
migrates both, distributes the cluster's tables (`hindsight db distribute`), loads the same
memories into each with the bulk import, serves each with the service in its own process
(uvicorn, as production runs it) and measures, cluster and single server alike:

- recall over HTTP, p50/p99 at concurrency 1 and 8, and recall's two statements alone;
- observe throughput (one new memory a request, 8 clients) and a step append's latency;
- consolidation jobs: session ends queued, then claimed and completed by 4 workers;
- the coordinator hop: one statement through the coordinator against the same statement on
  the worker's shard;
- what each worker and each shard holds (bytes and rows per memory, namespaces).

Writes benchmarks/results/citus.md and citus.json. Everything shares one 2-core machine:
the cluster's three servers, the service and the clients.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from tests.support.citus import PgCluster
from tests.support.cli import hindsight

from benchmarks.corpus import Corpus
from benchmarks.perf import load, namespaces, raw_recall, recall_calls, summary, timed_calls
from benchmarks.stack import Service, service
from hindsight.config import Settings
from hindsight.db import citus
from hindsight.db.pool import open_pool
from hindsight.runtime.embedded_redis import RedisProcess
from hindsight.stores import consolidation_jobs as jobs
from hindsight.stores.filters import MemoryFilter

RESULTS = Path(__file__).resolve().parent / "results"


def migrated(url: str, shards: int | None) -> None:
    for args in (
        ["db", "upgrade"],
        *([["db", "distribute", "--shard-count", str(shards)]] if shards else []),
    ):
        done = hindsight(*args, database_url=url)
        if done.returncode:
            sys.exit(f"hindsight {' '.join(args)} failed: {done.stderr}")


@dataclass
class Backend:
    """One side of the comparison: its database, the servers it runs on (for their
    statement statistics), and the service in front of it."""

    name: str
    url: str
    nodes: dict[str, str]  # role ("single", "coordinator", "worker N") -> URL
    svc: Service | None = None


SETTINGS = Settings(api_key="x" * 20, data_dir=Path(tempfile.gettempdir()))


def interleaved(
    backends: list[Backend],
    calls: Callable[[Backend, int], list[Callable[[Any], Any]]],
    concurrency: int,
    rounds: int,
) -> dict[str, dict[str, Any]]:
    """Each round runs its calls against one backend, then the other: load from anything
    else on the machine falls on both alike."""
    samples: dict[str, list[float]] = {b.name: [] for b in backends}
    rates: dict[str, list[float]] = {b.name: [] for b in backends}
    for r in range(rounds):
        for b in backends if r % 2 == 0 else reversed(backends):
            assert b.svc is not None
            got, per_s = timed_calls(b.svc, calls(b, r), concurrency)
            samples[b.name] += got
            rates[b.name].append(per_s)
    return {
        name: {**summary(samples[name]), "per_s": round(statistics.fmean(rates[name]))}
        for name in samples
    }


def measure(backends: list[Backend], args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(99)
    corpus = Corpus(seed=99)
    nss = namespaces(args.spread)
    rounds = args.rounds
    queries = [(rng.choice(nss), corpus.query()) for _ in range(args.queries)]
    chunk = len(queries) // rounds
    fresh = [
        (rng.choice(nss), dict(m, key=f"new.{i}"))
        for i, m in enumerate(Corpus(seed=31).memories(args.observes * len(backends)))
    ]
    steps = [(rng.choice(nss), corpus.sentence()) for _ in range(args.queries * len(backends))]
    per_round = {"observe": len(fresh) // (rounds * len(backends)), "step": chunk}
    taken: dict[tuple[int, str], int] = {}

    def next_of(items: list[Any], b: Backend, n: int) -> list[Any]:
        # the next n of the backend's own share: the two sides never share a new key
        done = taken.get((id(items), b.name), 0)
        taken[(id(items), b.name)] = done + n
        start = done + n * backends.index(b) * rounds
        return items[start : start + n]

    def recalls(b: Backend, r: int) -> list[Callable[[Any], Any]]:
        return recall_calls(queries[r * chunk : (r + 1) * chunk], {})

    def observes(b: Backend, r: int) -> list[Callable[[Any], Any]]:
        return [
            (lambda c, ns=ns, m=m: c.post(f"/v1/namespaces/{ns}/memories", json=m))
            for ns, m in next_of(fresh, b, per_round["observe"])
        ]

    def appends(b: Backend, r: int) -> list[Callable[[Any], Any]]:
        return [
            (lambda c, ns=ns, t=t, i=i: c.post(
                f"/v1/namespaces/{ns}/sessions/s{i % 7}/steps", json={"content": t}
            ))
            for i, (ns, t) in enumerate(next_of(steps, b, per_round["step"]))
        ]  # fmt: skip

    for b in backends:  # warm: caches, prepared statements
        assert b.svc is not None
        timed_calls(b.svc, recall_calls(queries[:100], {}), 8)
    reset_statements(backends)
    out: dict[str, Any] = {"load_average": {"before": os.getloadavg()[0]}}
    out["recall_c1"] = interleaved(backends, recalls, 1, rounds)
    out["recall_c8"] = interleaved(backends, recalls, 8, rounds)
    out["recall_sql"] = {b.name: [] for b in backends}
    for r in range(rounds):
        for b in backends if r % 2 == 0 else reversed(backends):
            out["recall_sql"][b.name] += asyncio.run(
                raw_recall(b.url, queries[r * chunk : (r + 1) * chunk], SETTINGS, MemoryFilter())
            )
    out["recall_sql"] = {name: summary(v) for name, v in out["recall_sql"].items()}
    out["observe_c8"] = interleaved(backends, observes, 8, rounds)
    out["append_c1"] = interleaved(backends, appends, 1, rounds)
    out["statements"] = read_statements(backends)
    jobs_done: dict[str, list[dict[str, float]]] = {b.name: [] for b in backends}
    for r in range(rounds):
        for b in backends if r % 2 == 0 else reversed(backends):
            jobs_done[b.name].append(
                asyncio.run(job_throughput(b.url, args.jobs // rounds, args.claimers))
            )
    out["jobs"] = {
        name: {k: round(statistics.fmean(x[k] for x in runs)) for k in runs[0]}
        for name, runs in jobs_done.items()
    }
    out["load_average"]["after"] = os.getloadavg()[0]
    return out


# What each kind of statement costs on each server (pg_stat_statements, planning tracked):
# recall's arms, observe's near-duplicate check and upsert, a step append's statements.
_KINDS = {
    "recall arm": re.compile(r"^\s*WITH stats AS"),
    "near-duplicate check": re.compile(r"^\s*WITH size AS"),
    "observe upsert": re.compile(r"^\s*INSERT INTO (public\.)?long_term_memory"),
    "step append (one statement)": re.compile(r"^\s*WITH sess AS"),
    "step: session upsert": re.compile(r"^\s*INSERT INTO (public\.)?working_sessions"),
    "step: insert": re.compile(r"^\s*INSERT INTO (public\.)?working_memory"),
}


def reset_statements(backends: list[Backend]) -> None:
    for b in backends:
        for url in b.nodes.values():
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("SELECT pg_stat_statements_reset()")


def read_statements(backends: list[Backend]) -> dict[str, Any]:
    """Per backend, kind and server (workers together): calls, mean planning and mean
    execution time (ms). A coordinator's execution includes waiting for its worker."""
    out: dict[str, Any] = {}
    for b in backends:
        sums: dict[str, dict[str, dict[str, float]]] = {}
        for role, url in b.nodes.items():
            where = "workers" if role.startswith("worker") else role
            with psycopg.connect(url, autocommit=True) as conn:
                rows = conn.execute(
                    "SELECT query, calls, plans, total_plan_time, total_exec_time "
                    "FROM pg_stat_statements WHERE dbid = "
                    "(SELECT oid FROM pg_database WHERE datname = current_database())"
                ).fetchall()
            for query, calls, plans, plan_ms, exec_ms in rows:
                kind = next((k for k, r in _KINDS.items() if r.match(query)), None)
                if kind is None:
                    continue
                acc = sums.setdefault(kind, {}).setdefault(
                    where, {"calls": 0, "plans": 0, "plan": 0.0, "exec": 0.0}
                )
                acc["calls"] += calls
                acc["plans"] += plans
                acc["plan"] += plan_ms
                acc["exec"] += exec_ms
        out[b.name] = {
            kind: {
                where: {
                    "calls": int(a["calls"]),
                    "plan_ms": round(a["plan"] / max(a["calls"], 1), 3),
                    "exec_ms": round(a["exec"] / max(a["calls"], 1), 3),
                }
                for where, a in by_where.items()
            }
            for kind, by_where in sums.items()
        }
    return out


async def job_throughput(url: str, n: int, claimers: int) -> dict[str, float]:
    """Session ends queued one by one (as the API queues them), then claimed and completed
    by `claimers` workers at once (as replicas' job workers do), doing nothing between."""
    pool = await open_pool(SETTINGS.model_copy(update={"db_pool_max": claimers + 1}), url)
    try:
        run = uuid.uuid4().hex[:6]
        started = time.perf_counter()
        for i in range(n):
            async with pool.connection() as conn:
                await jobs.enqueue(conn, uuid.uuid4(), f"ns{i % 1000}", f"end-{run}-{i}", "end")
        queued = n / (time.perf_counter() - started)
        done = 0

        async def worker() -> None:
            nonlocal done
            async with pool.connection() as conn:
                while (job := await jobs.claim(conn, 300, 5)) is not None:
                    await jobs.succeed(
                        conn, job["id"], job["attempts"], method="none", from_step=None,
                        through_step=None, result={},
                    )  # fmt: skip
                    done += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(claimers)))
        completed = done / (time.perf_counter() - started)
    finally:
        await pool.close()
    return {"queued_per_s": round(queued), "claimed_and_completed_per_s": round(completed)}


def hop(cluster: PgCluster, url: str, n: int = 2000) -> dict[str, float]:
    """One point read (primary key) through the coordinator, and the same statement on the
    shard, directly on its worker: the difference is what the coordinator adds to each
    statement (planning, routing, a connection to the worker)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET plan_cache_mode = force_custom_plan")  # as the service does
        ns, memory_id = conn.execute(
            "SELECT namespace, id FROM long_term_memory WHERE namespace = 'ns7' LIMIT 1"
        ).fetchone() or ("", "")
        shard, port = conn.execute(
            "SELECT shardid, nodeport FROM citus_shards WHERE shardid = "
            "get_shard_id_for_distribution_column('long_term_memory', %s::text)",
            (ns,),
        ).fetchone() or (0, 0)
        via = _timed(conn, "SELECT mem_value FROM long_term_memory", ns, memory_id, n)
    worker = next(w for w in cluster.workers_ if w.port == port)
    with psycopg.connect(cluster.url(url.rsplit("/", 1)[1], worker), autocommit=True) as conn:
        direct = _timed(conn, f"SELECT mem_value FROM long_term_memory_{shard}", ns, memory_id, n)
    return {
        "via_coordinator_p50_ms": via,
        "on_the_worker_p50_ms": direct,
        "hop_ms": round(via - direct, 3),
    }


def _timed(conn: psycopg.Connection[Any], select: str, ns: str, memory_id: Any, n: int) -> float:
    sql = f"{select} WHERE namespace = %s AND id = %s"
    for _ in range(100):
        conn.execute(sql, (ns, memory_id))  # type: ignore[arg-type]
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        conn.execute(sql, (ns, memory_id)).fetchone()  # type: ignore[arg-type]
        samples.append(time.perf_counter() - started)
    return round(statistics.median(samples) * 1000, 3)


def holdings(url: str) -> dict[str, Any]:
    """What the cluster holds: per table (bytes with indexes, rows, shards), per worker
    (bytes, shards, memories, namespaces)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        tables: dict[str, dict[str, int]] = {
            t: {"bytes": int(b), "shards": int(s)}
            for t, b, s in conn.execute(
                "SELECT table_name::text, sum(shard_size), count(DISTINCT shardid) "
                "FROM citus_shards GROUP BY 1"
            )
        }
        for p in citus.PLAN:
            count = conn.execute(f"SELECT count(*) FROM {p.table}").fetchone()
            tables[p.table]["rows"] = count[0] if count else 0
        workers = {
            node: {"bytes": int(b), "shards": int(s), "memories": int(m), "namespaces": int(n)}
            for node, b, s, m, n in conn.execute(
                """
                SELECT s.nodename || ':' || s.nodeport, sum(s.shard_size), count(*),
                       sum(c.memories) FILTER (WHERE s.table_name = 'long_term_memory'::regclass),
                       sum(c.namespaces) FILTER (WHERE s.table_name = 'long_term_memory'::regclass)
                FROM citus_shards s LEFT JOIN (
                    SELECT shardid, split_part(result, ',', 1)::bigint AS memories,
                           split_part(result, ',', 2)::bigint AS namespaces
                    FROM run_command_on_shards('long_term_memory',
                        $$SELECT count(*) || ',' || count(DISTINCT namespace) FROM %s$$)
                ) c USING (shardid)
                WHERE s.citus_table_type = 'distributed' GROUP BY 1 ORDER BY 1
                """
            )
        }
    return {"tables": tables, "workers": workers}


def single_sizes(url: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        return {
            p.table: conn.execute(
                "SELECT pg_total_relation_size(%s::regclass)", (p.table,)
            ).fetchone()[0]  # type: ignore[index]
            for p in citus.PLAN
        }


# every server keeps statement statistics, planning included
STATISTICS = ("pg_stat_statements.track_planning = on",)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="memories")
    parser.add_argument("--spread", type=int, default=1_000, help="namespaces")
    parser.add_argument("--shards", type=int, default=citus.SHARD_COUNT)
    parser.add_argument("--queries", type=int, default=400, help="recalls, and appends")
    parser.add_argument("--observes", type=int, default=800)
    parser.add_argument("--jobs", type=int, default=2_000)
    parser.add_argument("--claimers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=4, help="turns each side takes")
    parser.add_argument(
        "--report", action="store_true", help="only write citus.md again from citus.json"
    )
    args = parser.parse_args()
    if args.report:
        (RESULTS / "citus.md").write_text(report(json.loads((RESULTS / "citus.json").read_text())))
        return
    numbers: dict[str, Any] = {"args": vars(args)}
    with contextlib.ExitStack() as stack:
        redis = RedisProcess(Path(stack.enter_context(tempfile.TemporaryDirectory())))
        redis_url = redis.start()
        stack.callback(redis.stop)
        cluster = stack.enter_context(
            PgCluster(
                workers=2,
                conf=("shared_preload_libraries = 'citus,pg_stat_statements'", *STATISTICS),
            )
        )
        single = stack.enter_context(
            PgCluster(
                workers=0,
                citus=False,
                conf=("shared_preload_libraries = 'pg_stat_statements'", *STATISTICS),
            )
        )
        name = "bench"
        backends = [
            Backend("single", single.create_database(name), {}),
            Backend("citus", cluster.create_database(name), {}),
        ]
        backends[0].nodes = {"single": backends[0].url}
        backends[1].nodes = {
            "coordinator": backends[1].url,
            **{f"worker {i}": cluster.url(name, w) for i, w in enumerate(cluster.workers_, 1)},
        }
        for b in backends:
            migrated(b.url, args.shards if b.name == "citus" else None)
            with psycopg.connect(b.url, autocommit=True) as conn:  # Citus: every node
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            print(f"[{b.name}] loading {args.n:,} memories ...", flush=True)
            started = time.perf_counter()
            loaded = asyncio.run(load(b.url, args.n, args.spread, SETTINGS, raw=False))
            numbers.setdefault("load", {})[b.name] = {
                **loaded,
                "seconds": round(time.perf_counter() - started),
            }
            print(f"[{b.name}] {numbers['load'][b.name]}", flush=True)
        for b in backends:
            b.svc = stack.enter_context(service(b.url, redis_url))
        numbers.update(measure(backends, args))
        numbers["hop"] = hop(cluster, backends[1].url)
        numbers["holdings"] = holdings(backends[1].url)
        numbers["single_sizes"] = single_sizes(backends[0].url)
    (RESULTS / "citus.json").write_text(json.dumps(numbers, indent=2) + "\n")
    (RESULTS / "citus.md").write_text(report(numbers))
    print(report(numbers))


def report(x: dict[str, Any]) -> str:
    a = x["args"]

    def ms(d: dict[str, float]) -> str:
        return f"{d['p50']:.1f} / {d['p99']:.1f}"

    def row(name: str, what: str, show: Callable[[Any], Any]) -> str:
        return f"| {name} | {show(x[what]['single'])} | {show(x[what]['citus'])} |"

    rows = [
        row("recall, 1 client: p50 / p99 ms", "recall_c1", ms),
        row("recall, 8 clients: p50 / p99 ms", "recall_c8", ms),
        row("recall, 8 clients: recalls/s", "recall_c8", lambda d: d["per_s"]),
        row("recall's two statements alone: p50 / p99 ms", "recall_sql", ms),
        row("observe (a new memory a request), 8 clients: p50 / p99 ms", "observe_c8", ms),
        row("observe, 8 clients: memories/s", "observe_c8", lambda d: d["per_s"]),
        row("step append, 1 client: p50 / p99 ms", "append_c1", ms),
        row("session ends queued, one at a time: /s", "jobs", lambda d: d["queued_per_s"]),
        row(
            f"consolidation jobs claimed and completed, {a['claimers']} workers: /s",
            "jobs",
            lambda d: d["claimed_and_completed_per_s"],
        ),
        row("bulk import (the load): memories/s", "load", lambda d: d["import_rate"]),
    ]
    memories = x["holdings"]["tables"]["long_term_memory"]["rows"]
    hop = x["hop"]
    loads = x["load_average"]
    lines = [
        "# Citus beside a single PostgreSQL",
        "",
        f"`python -m benchmarks.citus --n {a['n']} --spread {a['spread']} --shards "
        f"{a['shards']}`: {a['n']:,} memories over {a['spread']:,} namespaces, loaded with "
        "the bulk import into a Citus 13.2 cluster (a coordinator and two workers, "
        f"{a['shards']} shards a table) and into a single PostgreSQL 15, with the same "
        "settings on every server (tests/support/citus.py: fsync off, 256 MB "
        "shared_buffers, pg_stat_statements). Both served at once by the service in its own "
        "process, measured over HTTP in turns (each measurement split into "
        f"{a['rounds']} rounds, one side then the other), so that the load of anything else "
        "on the machine falls on both alike.",
        "",
        "One 2-core machine holds all of it: the cluster's three servers, both services and "
        "the clients (load average "
        f"{loads['before']:.1f} when the measurements began, {loads['after']:.1f} at the "
        "end: other jobs shared the machine). These numbers show what distribution costs a "
        "request, not what more machines add.",
        "",
        "| | single PostgreSQL 15 | Citus, 2 workers |",
        "| --- | ---: | ---: |",
        *rows,
        "",
        "**The coordinator hop**: a primary-key read of one memory took "
        f"{hop['via_coordinator_p50_ms']} ms (p50) through the coordinator and "
        f"{hop['on_the_worker_p50_ms']} ms on its shard, directly on the worker: "
        f"{hop['hop_ms']} ms a statement for planning, routing and the worker's connection.",
        "",
        "## Where a statement's time goes",
        "",
        "Mean milliseconds a call, from pg_stat_statements on each server over the "
        "measurements above (planning / execution; a coordinator's execution includes "
        "waiting for the worker).",
        "",
        "| statement | single: plan / exec | coordinator: plan / exec | worker: plan / exec |",
        "| --- | ---: | ---: | ---: |",
    ]
    st = x["statements"]
    kinds = sorted({k for side in st.values() for k in side})
    for kind in kinds:

        def cell(side: str, where: str, kind: str = kind) -> str:
            d = st.get(side, {}).get(kind, {}).get(where)
            return f"{d['plan_ms']:.2f} / {d['exec_ms']:.2f}" if d else "—"

        lines.append(
            f"| {kind} | {cell('single', 'single')} | {cell('citus', 'coordinator')} | "
            f"{cell('citus', 'workers')} |"
        )
    lines += [
        "",
        "## What the cluster holds",
        "",
        "| table | shards | rows | bytes with indexes | bytes per memory |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    tables = x["holdings"]["tables"]
    for name, t in sorted(tables.items(), key=lambda kv: -kv[1]["bytes"]):
        lines.append(
            f"| {name} | {t['shards']} | {t['rows']:,} | {t['bytes']:,} | "
            f"{t['bytes'] / memories:,.0f} |"
        )
    namespace_tables = sum(t["bytes"] for name, t in tables.items() if name in _BY_NAMESPACE)
    single_tables = sum(v for k, v in x["single_sizes"].items() if k in _BY_NAMESPACE)
    lines += [
        "",
        f"The namespace tables hold {namespace_tables / memories:,.0f} bytes a memory on the "
        f"cluster, the same rows on the single server {single_tables / memories:,.0f} (each "
        f"shard keeps its own indexes and free space: {a['shards']} small B-trees and HNSW "
        "graphs a table in place of one).",
        "",
        "| worker | shards | memories | namespaces | bytes |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(
            f"| {node} | {w['shards']} | {w['memories']:,} | {w['namespaces']:,} | {w['bytes']:,} |"
            for node, w in x["holdings"]["workers"].items()
        ),
        "",
    ]
    return "\n".join(lines)


_BY_NAMESPACE = {p.table for p in citus.PLAN if p.column == "namespace"}


if __name__ == "__main__":
    main()
