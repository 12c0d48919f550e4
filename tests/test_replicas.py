"""Three API replicas on one PostgreSQL and one Redis, driven at once through all of them:
nothing a single process guarantees may break when requests for the same namespace,
session or key land on different processes."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import cycle
from typing import Any, TypeVar

import httpx
import psycopg
import pytest

from hindsight.services.auth import CACHE_SECONDS
from hindsight.stores.lifecycle import LIFECYCLE_LOCK
from hindsight.stores.maintenance import MAINTENANCE_LOCK
from tests.conftest import ADMIN_KEY, Api
from tests.support.cli import hindsight
from tests.support.poll import wait_until
from tests.support.servers import separate_database, spawn_server

T = TypeVar("T")
REPLICAS = 3


@pytest.fixture(scope="module")
def replica_db(pg_url: str) -> Iterator[str]:
    # a database of their own: their job workers and purges must not meet other tests' data
    with separate_database(pg_url) as url:
        yield url


@pytest.fixture(scope="module")
def replicas(replica_db: str, redis_url: str) -> Iterator[list[str]]:
    env = {
        "HINDSIGHT_DATABASE_URL": replica_db,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_AUTO_MIGRATE": "false",
        "HINDSIGHT_ACCESS_FLUSH_INTERVAL_MS": "20",
        "HINDSIGHT_JOB_POLL_INTERVAL_SECONDS": "0.05",
        "HINDSIGHT_MAINTENANCE_INTERVAL_SECONDS": "0.2",
        # a lifecycle pass due on every maintenance turn (fresh memories under the default
        # policy never move, so the other tests' data stays put)
        "HINDSIGHT_LIFECYCLE_INTERVAL_SECONDS": "0.2",
    }
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for _ in range(REPLICAS):
            proc, url = spawn_server(env, ready_path="/readyz")
            procs.append(proc)
            urls.append(url)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def apis(replicas: list[str], ns: str) -> Iterator[list[Api]]:
    made = [Api.at(url, ns) for url in replicas]
    yield made
    for api in made:
        api.client.close()


def spread(apis: list[Api], n: int, call: Callable[[Api, int], T], threads: int = 12) -> list[T]:
    """`call(api, i)` for i in 0..n-1, round-robin over the replicas, `threads` at a time."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(call, cycle(apis), range(n)))


def test_reinforcement_counts_stay_exact(apis: list[Api]) -> None:
    n = 60
    results = spread(
        apis, n, lambda api, i: api.observe({"key": "user.city", "value": "Bergen"})[0]
    )
    assert sorted(r["observation_count"] for r in results) == list(range(1, n + 1))
    assert len({r["id"] for r in results}) == 1
    final = apis[0].get(results[0]["id"])
    assert final["observation_count"] == n
    assert final["confidence"] == pytest.approx(1.0)
    assert sum(r["outcome"] == "created" for r in results) == 1


def test_step_indexes_strictly_increase_per_session(apis: list[Api]) -> None:
    n = 48
    made = spread(apis, n, lambda api, i: api.append("shared", f"step {i}"))
    assert sorted(s["step_index"] for s in made) == list(range(n))
    for api in apis:
        steps = api.steps("shared", recent=n)
        indexes = [s["step_index"] for s in steps]
        assert indexes == list(range(n))  # strictly increasing, no gap, same on every replica
        assert sorted(s["content"] for s in steps) == sorted(f"step {i}" for i in range(n))


def test_each_consolidation_job_runs_once(apis: list[Api], replica_db: str) -> None:
    sessions = [f"task-{i}" for i in range(12)]

    def work(api: Api, i: int) -> str:
        session = sessions[i]
        api.append(
            session,
            "the user mentioned their editor",
            metadata={"memory": {"key": "user.editor", "value": "helix"}},
        )
        r = api.client.post(f"{api.base}/sessions/{session}:end")
        assert r.status_code == 200, r.text
        job_id: str = r.json()["consolidation"]["job_id"]
        return job_id

    job_ids = spread(apis, len(sessions), work)

    def finished() -> list[dict[str, Any]] | None:
        jobs = [apis[0].client.get(f"{apis[0].base}/jobs/{j}").json() for j in job_ids]
        return jobs if all(j["status"] in ("succeeded", "failed") for j in jobs) else None

    jobs = wait_until(finished, "every consolidation job to finish", timeout=40)
    assert all(j["status"] == "succeeded" and j["attempts"] == 1 for j in jobs), jobs
    page = apis[1].client.get(f"{apis[1].base}/memories").json()["memories"]
    (editor,) = [m for m in page if m["key"] == "user.editor"]
    assert editor["observation_count"] == len(sessions)  # one observation per job, not more
    with psycopg.connect(replica_db) as conn:
        rows = conn.execute(
            "SELECT count(*) FROM memory_history h JOIN long_term_memory m ON m.id = h.memory_id "
            "WHERE m.namespace = %s AND m.mem_key = 'user.editor'",
            (apis[0].ns,),
        ).fetchone()
    assert rows is not None and rows[0] == len(sessions)


def test_access_counts_add_up(apis: list[Api]) -> None:
    (memory,) = apis[0].observe({"key": "user.tea", "value": "green tea, no sugar"})
    n = 45
    hits = spread(apis, n, lambda api, i: api.recall("green tea", k=1)["results"])
    assert all(h and h[0]["id"] == memory["id"] for h in hits)
    wait_until(
        lambda: apis[2].get(memory["id"])["access_count"] == n,
        f"access_count to reach {n} from three replicas' flushes",
    )


def test_purge_runs_on_one_replica_at_a_time(apis: list[Api], replica_db: str) -> None:
    for i in range(5):
        apis[i % REPLICAS].append("old", f"step {i}")
    expire = (
        "UPDATE working_memory SET expires_at = now() - interval '1 minute' "
        "WHERE namespace = %s AND session_id = 'old'"
    )
    left = "SELECT count(*) FROM working_memory WHERE namespace = %s AND session_id = 'old'"

    def remaining() -> int:
        with psycopg.connect(replica_db) as conn:
            row = conn.execute(left, (apis[0].ns,)).fetchone()
        return int(row[0]) if row else 0

    # Holding the purge's advisory lock stands in for a replica in the middle of a pass:
    # all three replicas, every 0.2 s, must skip their turn while it is held.
    with psycopg.connect(replica_db) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (MAINTENANCE_LOCK,))
        holder.execute(expire, (apis[0].ns,))
        holder.commit()
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:  # ~7 intervals on each of three replicas
            assert remaining() == 5, "a replica purged while another held the maintenance lock"
            time.sleep(0.1)
        holder.execute("SELECT pg_advisory_unlock(%s)", (MAINTENANCE_LOCK,))
        holder.commit()
    wait_until(lambda: remaining() == 0, "a replica to purge once the lock was free")


def test_lifecycle_runs_on_one_replica_at_a_time(apis: list[Api], replica_db: str) -> None:
    apis[0].observe(
        {"key": "user.city", "value": "lives in Bergen"},
        {"key": "user.pet", "value": "a beagle called Rex"},
        {"key": "user.bike", "value": "a red gravel bike"},
        {"key": "user.tea", "value": "green tea, no sugar"},
    )
    ns = apis[0].ns
    active = "SELECT count(*) FROM long_term_memory WHERE namespace = %s AND status = 'active'"
    archived = (
        "SELECT count(*), count(DISTINCT memory_id) FROM memory_history "
        "WHERE namespace = %s AND change = 'archived'"
    )

    def count(statement: str) -> tuple[int, ...]:
        with psycopg.connect(replica_db) as conn:
            row = conn.execute(statement, (ns,)).fetchone()
        assert row is not None
        return tuple(row)

    # As for the purge: holding the lifecycle's advisory lock stands in for a replica in
    # the middle of a pass, and all three replicas must skip their turn while it is held.
    with psycopg.connect(replica_db, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (LIFECYCLE_LOCK,))
        # a cap of one: the next pass archives three of the four
        cap = {"capacity": {"max_active_memories": 1}}
        r = apis[0].client.put(f"{apis[0].base}/policy", json=cap)
        assert r.status_code == 200, r.text

        def cap_seen_everywhere() -> bool:
            caps = [
                api.client.get(f"{api.base}/policy").json()["capacity"]["max_active_memories"]
                for api in apis
            ]
            return caps == [1] * REPLICAS

        wait_until(cap_seen_everywhere, "every replica to see the new cap")
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:  # ~7 turns on each of three replicas
            assert count(active) == (4,), "a replica moved memories while the lock was held"
            time.sleep(0.1)
        assert count(archived) == (0, 0)
        holder.execute("SELECT pg_advisory_unlock(%s)", (LIFECYCLE_LOCK,))
    wait_until(lambda: count(active) == (1,), "a replica to apply the cap once the lock was free")
    assert count(archived) == (3, 3)  # each archived once, by one replica's pass


def test_a_revoked_key_is_refused_by_every_replica_in_time(
    apis: list[Api], replica_db: str
) -> None:
    name = "agent-" + uuid.uuid4().hex[:8]
    made = hindsight("keys", "create", name, "--namespace", apis[0].ns, database_url=replica_db)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    clients = [
        httpx.Client(base_url=str(api.client.base_url), headers={"Authorization": f"Bearer {key}"})
        for api in apis
    ]
    path = f"{apis[0].base}/memories"
    try:
        assert all(c.get(path).status_code == 200 for c in clients)  # cached on every replica
        revoked = hindsight("keys", "revoke", name, database_url=replica_db)
        assert revoked.returncode == 0, revoked.stderr
        started = time.monotonic()
        refused: dict[int, float] = {}

        def all_refuse() -> bool:
            # A request sent more than CACHE_SECONDS (+ 2 s) after the revocation was
            # answered after it too, however busy the machine: it must be refused.
            for i, c in enumerate(clients):
                if i in refused:
                    continue
                sent = time.monotonic() - started
                if c.get(path).status_code == 401:
                    refused[i] = sent
                else:
                    assert sent < CACHE_SECONDS + 2, f"replica {i} accepted it at {sent:.1f} s"
            return len(refused) == len(clients)

        wait_until(all_refuse, "every replica to refuse the revoked key", interval=0.05)
        # once refused, refused everywhere, for good
        assert all(c.get(path).status_code == 401 for c in clients)
    finally:
        for c in clients:
            c.close()
