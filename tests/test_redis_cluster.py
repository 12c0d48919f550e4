"""Working memory on a real Redis Cluster (three masters, three replicas on loopback):
each session's keys live in one slot, and a master killed mid-traffic costs no step and
fails no request."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from pydantic import ValidationError
from redis.cluster import RedisCluster as SyncCluster

from hindsight.config import Settings
from hindsight.stores.hot_steps_scripts import expiry_key, session_key, tombstone_key
from tests.conftest import Api, make_settings
from tests.support.poll import wait_until
from tests.support.redis_cluster import RedisCluster
from tests.support.servers import ThreadServer

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    made = RedisCluster(Path(tmp_path_factory.mktemp("rc"))).start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture(scope="module")
def cluster_server(cluster: RedisCluster, module_db: str) -> Iterator[ThreadServer]:
    settings = make_settings(redis_mode="cluster", redis_url=cluster.url)
    with ThreadServer(settings, module_db, cluster.url) as srv:
        yield srv


@pytest.fixture
def capi(cluster_server: ThreadServer, ns: str) -> Iterator[Api]:
    api = Api.at(cluster_server.url, ns)
    yield api
    api.client.close()


def cached_keys(cluster: RedisCluster) -> list[str]:
    with SyncCluster.from_url(cluster.url) as c:
        return sorted(k.decode() for k in c.scan_iter(match="hs:*"))


def test_cluster_mode_needs_a_node_url() -> None:
    with pytest.raises(ValidationError, match="HINDSIGHT_REDIS_URL"):
        Settings(redis_mode="cluster")
    with pytest.raises(ValidationError, match="redis://"):
        Settings(redis_mode="cluster", redis_url="unix:///tmp/redis.sock")
    with pytest.raises(ValidationError, match="redis_mode"):
        Settings(redis_mode="sentinel", redis_url="redis://h:1")


def test_every_key_of_a_session_is_in_one_slot(cluster: RedisCluster) -> None:
    with redis.Redis(port=cluster.ports[0]) as c:
        for ns, session in [("alice", "s1"), ("t-1:2", "a:b"), ("ünï", "x y")]:
            keys = [f(ns, session) for f in (session_key, tombstone_key, expiry_key)]
            slots = {int(c.execute_command("CLUSTER KEYSLOT", k)) for k in keys}
            assert len(slots) == 1, keys


def test_working_memory_is_served_from_the_cluster(capi: Api, cluster: RedisCluster) -> None:
    sessions = [f"s{i}" for i in range(6)]  # spread over the three masters' slots
    for session in sessions:
        for i in range(3):
            capi.append(session, f"{session} step {i}")
    for session in sessions:
        assert [s["content"] for s in capi.steps(session)] == [
            f"{session} step {i}" for i in range(3)
        ]
    keys = cached_keys(cluster)
    for session in sessions:
        assert session_key(capi.ns, session) in keys
        assert expiry_key(capi.ns, session) in keys
    masters = {cluster.master_of(session_key(capi.ns, s)) for s in sessions}
    assert len(masters) > 1  # the sessions really are spread over masters
    r = capi.client.delete(f"{capi.base}/sessions/s0")
    assert r.status_code == 200, r.text  # with a receipt of what it deleted
    assert r.json() == {"session_id": "s0", "deleted_steps": 3}
    assert capi.steps("s0") == []
    assert session_key(capi.ns, "s0") not in cached_keys(cluster)
    assert capi.client.get("/readyz").json()["checks"]["redis"] == "ok"


def test_a_master_fails_over_without_losing_a_step_or_a_request(
    capi: Api, cluster: RedisCluster
) -> None:
    session = "failover"
    written: list[int] = []
    failures: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            r = capi.client.post(
                f"{capi.base}/sessions/{session}/steps", json={"content": f"step {i}"}
            )
            if r.status_code != 201:
                failures.append(f"append {i}: {r.status_code} {r.text}")
                return
            written.append(r.json()["step_index"])
            r = capi.client.get(f"{capi.base}/sessions/{session}/steps", params={"recent": 5})
            if r.status_code != 200 or r.json()["steps"][-1]["content"] != f"step {i}":
                failures.append(f"read after {i}: {r.status_code} {r.text}")
                return
            i += 1

    def written_at_least(n: int) -> bool:
        assert not failures, failures
        return len(written) >= n

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_until(lambda: written_at_least(20), "20 steps written")
        master = cluster.master_of(session_key(capi.ns, session))
        replica = cluster.replica_of(master)
        cluster.kill(master)
        cluster.wait_promoted(replica)
        promoted_at = len(written)
        # well past the failover
        wait_until(lambda: written_at_least(promoted_at + 40), "40 steps after the failover")
        # and Redis is in use again, on the promoted replica: it catches up with the writes
        # (after an error the service leaves Redis alone for a while, then checks it)
        assert cluster.master_of(session_key(capi.ns, session)) == replica

        def cached_newest() -> int:
            with redis.Redis(port=replica) as c:
                newest = c.zrange(session_key(capi.ns, session), -1, -1, withscores=True)
            return int(newest[0][1]) if newest else -1

        def caught_up() -> bool:
            target = written[-1]
            return not failures and cached_newest() >= target

        wait_until(caught_up, "the promoted replica to hold the newest step", timeout=20)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not failures, failures
    assert written == list(range(len(written)))
    # every step, a page of at most 1,000 at a time (a quick machine writes more than that)
    steps: list[dict[str, Any]] = []
    before: int | None = None
    while True:
        params: dict[str, Any] = {"recent": 1000}
        if before is not None:
            params["before"] = before
        r = capi.client.get(f"{capi.base}/sessions/{session}/steps", params=params)
        assert r.status_code == 200, r.text
        page = r.json()["steps"]
        steps = page + steps
        if len(page) < 1000:
            break
        before = page[0]["step_index"]
    assert [s["content"] for s in steps] == [f"step {i}" for i in range(len(written))]
    assert cached_newest() == written[-1]
