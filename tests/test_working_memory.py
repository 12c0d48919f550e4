"""Working memory: ordered steps in Postgres with a hot copy in Redis, expiring together."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import redis

from hindsight.observability import metrics
from hindsight.runtime.embedded_redis import RedisProcess
from hindsight.stores.hot_steps_scripts import session_key
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.fake_openai import FakeOpenAI
from tests.support.poll import wait_until
from tests.support.scrape import total, value
from tests.support.servers import ThreadServer


def test_steps_get_increasing_indexes_and_read_back_in_order(api: Api) -> None:
    for i in range(5):
        step = api.append(
            "s1", f"step {i}", role="assistant" if i % 2 else "user", metadata={"i": i}
        )
        assert step["step_index"] == i
    steps = api.steps("s1", recent=3)
    assert [s["step_index"] for s in steps] == [2, 3, 4]
    assert [s["content"] for s in steps] == ["step 2", "step 3", "step 4"]
    assert steps[1]["role"] == "assistant" and steps[1]["metadata"] == {"i": 3}
    assert [s["step_index"] for s in api.steps("s1", recent=50)] == [0, 1, 2, 3, 4]
    assert api.steps("never-written") == []


def test_concurrent_appends_get_distinct_consecutive_indexes(api: Api) -> None:
    def append(i: int) -> int:
        client = httpx.Client(base_url=str(api.client.base_url), headers=api.client.headers)
        index: int = Api(client, api.ns).append("busy", f"parallel {i}")["step_index"]
        client.close()
        return index

    with ThreadPoolExecutor(max_workers=16) as pool:
        indexes = list(pool.map(append, range(60)))
    assert sorted(indexes) == list(range(60))
    steps = api.steps("busy", recent=60)
    assert [s["step_index"] for s in steps] == list(range(60))
    assert {s["content"] for s in steps} == {f"parallel {i}" for i in range(60)}


def test_idempotency_key_makes_retries_harmless(api: Api) -> None:
    base = f"{api.base}/sessions/retry/steps"
    first = api.client.post(
        base, json={"content": "charge card"}, headers={"Idempotency-Key": "op-1"}
    )
    assert first.status_code == 201
    again = api.client.post(
        base, json={"content": "charge card"}, headers={"Idempotency-Key": "op-1"}
    )
    assert again.status_code == 200
    assert again.json()["step_index"] == first.json()["step_index"]
    body_key = api.client.post(base, json={"content": "x", "idempotency_key": "op-1"})
    assert body_key.status_code == 200
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(
            pool.map(
                lambda _: httpx.post(
                    f"{api.client.base_url}{base}",
                    json={"content": "ship", "idempotency_key": "op-2"},
                    headers=dict(api.client.headers),
                ).json()["step_index"],
                range(8),
            )
        )
    assert len(set(codes)) == 1
    assert [s["content"] for s in api.steps("retry")] == ["charge card", "ship"]


def test_context_gives_recent_steps_whole_and_older_as_summaries(api: Api) -> None:
    for i in range(6):
        api.append("ctx", f"long content of step {i} " * 5)
    r = api.client.patch(f"{api.base}/sessions/ctx/steps/1", json={"summary": "did step one"})
    assert r.status_code == 200 and r.json()["summary"] == "did step one"
    ctx = api.client.get(f"{api.base}/sessions/ctx/context", params={"recent": 2}).json()
    assert [s["step_index"] for s in ctx["recent"]] == [4, 5]
    assert [e["step_index"] for e in ctx["earlier"]] == [0, 1, 2, 3]
    assert ctx["earlier"][1] == {**ctx["earlier"][1], "text": "did step one", "summarized": True}
    assert ctx["earlier"][0]["summarized"] is False
    small = api.client.get(
        f"{api.base}/sessions/ctx/context", params={"recent": 2, "max_chars": 150}
    ).json()
    assert [e["step_index"] for e in small["earlier"]] == [1, 2, 3][-len(small["earlier"]) :]
    assert small["omitted_steps"] == 4 - len(small["earlier"])
    # the summary reached the hot copy too
    assert api.steps("ctx", recent=6)[1]["summary"] == "did step one"


def test_ended_session_refuses_steps_and_delete_removes_everything(api: Api) -> None:
    api.append("done", "only step")
    r = api.client.post(f"{api.base}/sessions/done:end")
    assert r.status_code == 200 and r.json()["status"] == "ended"
    r = api.client.post(f"{api.base}/sessions/done/steps", json={"content": "late"})
    assert r.status_code == 409 and "ended" in r.json()["error"]["message"]
    assert [s["content"] for s in api.steps("done")] == ["only step"]
    r = api.client.delete(f"{api.base}/sessions/done")
    assert r.status_code == 200 and r.json()["deleted_steps"] == 1
    assert api.steps("done") == []
    assert api.client.get(f"{api.base}/sessions/done").status_code == 404
    assert api.client.delete(f"{api.base}/sessions/done").status_code == 404
    # the id can be used again, from step 0
    assert api.append("done", "fresh start")["step_index"] == 0


def test_session_info(api: Api) -> None:
    a = api.append("info", "one", ttl_seconds=600)
    api.append("info", "two", ttl_seconds=600)
    info = api.client.get(f"{api.base}/sessions/info").json()
    assert info["status"] == "active" and info["step_count"] == 2 and info["live_steps"] == 2
    expires = datetime.fromisoformat(info["expires_at"])
    created = datetime.fromisoformat(a["created_at"])
    assert timedelta(seconds=600) <= expires - created <= timedelta(seconds=607)


def test_expired_steps_vanish_and_the_purge_deletes_them(api: Api, server: ThreadServer) -> None:
    api.append("long", "stays", ttl_seconds=3600)
    # the second append moves both steps' expiry: only the read below must come before it
    api.append("short", "soon gone", ttl_seconds=2)
    api.append("short", "also soon gone", ttl_seconds=2)
    assert len(api.steps("short")) == 2
    wait_until(lambda: api.steps("short") == [], "the short session's steps expire")
    ctx = api.client.get(f"{api.base}/sessions/short/context").json()
    assert ctx["recent"] == [] and ctx["earlier"] == []

    out = _purge_via_cli(server)
    assert out["expired_steps"] >= 2
    assert api.client.get(f"{api.base}/sessions/short").status_code == 404
    assert [s["content"] for s in api.steps("long")] == ["stays"]


def _purge_via_cli(server: ThreadServer) -> dict[str, int]:
    out = hindsight("maintenance", "purge", database_url=server.core.database_url)
    assert out.returncode == 0, out.stderr
    result: dict[str, int] = json.loads(out.stdout)
    return result


def test_appending_extends_the_whole_session(api: Api) -> None:
    first = api.append("slide", "a", ttl_seconds=1)
    second = api.append("slide", "b", ttl_seconds=60)
    # past the first step's own expiry, well within the session's
    own_expiry = datetime.fromisoformat(first["expires_at"])
    wait_until(lambda: datetime.now(UTC) > own_expiry, "the first step's own ttl to pass")
    steps = api.steps("slide")
    assert [s["content"] for s in steps] == ["a", "b"]
    assert steps[0]["expires_at"] == steps[1]["expires_at"] == second["expires_at"]
    assert second["expires_at"] > first["expires_at"]


def test_validation_of_steps(api: Api) -> None:
    base = f"{api.base}/sessions"
    cases = [
        (f"{base}/ok/steps", {"content": ""}, "content"),
        (f"{base}/ok/steps", {"content": "x" * 65_537}, "content"),
        (f"{base}/ok/steps", {"content": "x", "role": "not a role!"}, "role"),
        (f"{base}/ok/steps", {"content": "x", "ttl_seconds": 0}, "ttl_seconds"),
        (f"{base}/ok/steps", {"content": "nul\u0000byte"}, "content"),
        (f"{base}/bad%20id/steps", {"content": "x"}, "session_id"),
        (f"{base}/{'x' * 129}/steps", {"content": "x"}, "session_id"),
    ]
    for url, body, field in cases:
        r = api.client.post(url, json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["message"].startswith(field), r.json()
    assert api.steps("ok") == []


# --- Redis: the hot copy ----------------------------------------------------------------


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def wm_server(migrated: str, own_redis: RedisProcess) -> Iterator[ThreadServer]:
    with ThreadServer(make_settings(), migrated, own_redis.url) as srv:
        yield srv


def test_reads_come_from_redis_when_it_has_the_steps(
    wm_server: ThreadServer, own_redis: RedisProcess, ns: str
) -> None:
    api = Api.at(wm_server.url, ns)
    for i in range(3):
        api.append("hot", f"s{i}")
    r = redis.Redis.from_url(own_redis.url)
    key = session_key(ns, "hot")
    assert r.zcard(key) == 3
    ttl = r.pttl(key)
    assert 0 < ttl <= 24 * 3600 * 1000 + 60_000
    # prove the read is served from Redis: change the cached copy and see it come back
    member, score = r.zrange(key, -1, -1, withscores=True)[0]
    r.zadd(key, {member.replace(b'"s2"', b'"from redis"'): score})
    r.zrem(key, member)
    assert api.steps("hot", recent=1)[0]["content"] == "from redis"
    # a key with a gap is never trusted
    r.zremrangebyscore(key, 1, 1)
    assert [s["content"] for s in api.steps("hot", recent=3)] == ["s0", "s1", "s2"]


def test_cold_cache_is_filled_from_postgres(
    wm_server: ThreadServer, own_redis: RedisProcess, ns: str
) -> None:
    api = Api.at(wm_server.url, ns)
    for i in range(4):
        api.append("cold", f"c{i}")
    r = redis.Redis.from_url(own_redis.url)
    r.flushall()
    assert [s["content"] for s in api.steps("cold", recent=4)] == ["c0", "c1", "c2", "c3"]
    assert r.zcard(session_key(ns, "cold")) == 4


def test_redis_stopped_mid_test_working_memory_is_served_from_postgres(
    wm_server: ThreadServer, own_redis: RedisProcess, ns: str
) -> None:
    api = Api.at(wm_server.url, ns)
    api.append("outage", "before")
    own_redis.stop()
    before = metrics.exposition().decode()
    started = time.monotonic()
    api.append("outage", "during 1")
    api.append("outage", "during 2")
    assert [s["content"] for s in api.steps("outage")] == ["before", "during 1", "during 2"]
    after = metrics.exposition().decode()
    errors, reads = "hindsight_store_errors_total", "hindsight_working_memory_reads_total"
    assert total(after, errors, store="redis") > total(before, errors, store="redis")
    assert value(after, reads, source="postgres") == value(before, reads, source="postgres") + 1
    assert time.monotonic() - started < 5, "an outage must not add a timeout to every call"
    ready = api.client.get("/readyz")
    # working memory is served from Postgres meanwhile: degraded, not unready
    assert ready.status_code == 200 and ready.json()["checks"]["redis"] == "unreachable"
    assert ready.json()["status"] == "degraded" and ready.json()["degraded"] == ["redis"]
    # Redis comes back with its AOF: the session's cached copy misses the outage's steps,
    # and must not be served
    own_redis.start()
    r = redis.Redis.from_url(own_redis.url)

    # every read is complete; once the breaker closes, the stale key is dropped and the
    # cache refilled from Postgres with all three steps
    def settled() -> bool:
        assert [s["content"] for s in api.steps("outage")] == ["before", "during 1", "during 2"]
        return bool(r.zcard(session_key(api.ns, "outage")) == 3)

    wait_until(settled, "the hot copy to be refilled")
    api.append("outage", "after")
    assert [s["content"] for s in api.steps("outage")] == [
        "before",
        "during 1",
        "during 2",
        "after",
    ]
    assert api.client.get("/readyz").json()["status"] == "ready"


def test_aof_keeps_the_hot_copy_across_a_redis_crash(
    wm_server: ThreadServer, own_redis: RedisProcess, ns: str
) -> None:
    api = Api.at(wm_server.url, ns)
    api.append("durable", "kept")

    def in_the_aof() -> bool:  # written to the file (a kill -9 loses nothing written)
        files = [p for p in own_redis.directory.rglob("appendonly*") if p.is_file()]
        return any(b'"kept"' in p.read_bytes() for p in files)

    wait_until(in_the_aof, "the step to reach the append-only file")
    assert own_redis.process is not None
    own_redis.process.kill()  # no SHUTDOWN, no final flush
    own_redis.process.wait()
    own_redis.start()
    r = redis.Redis.from_url(own_redis.url)
    assert r.zcard(session_key(ns, "durable")) == 1


def test_a_long_step_gets_its_first_sentence_as_summary_when_written_without_an_llm(
    api: Api,
) -> None:
    long_en = "Opened the deployment config and found the port set twice. " + "detail " * 40
    long_zh = "打开了部署配置，发现端口设置了两次。" + "细节说明" * 70
    assert api.append("sum", long_en)["summary"] == (
        "Opened the deployment config and found the port set twice."
    )
    assert api.append("sum", long_zh)["summary"] == "打开了部署配置，发现端口设置了两次。"
    assert api.append("sum", "short step")["summary"] is None
    # the client's own summary stands
    assert api.append("sum", long_en, summary="mine")["summary"] == "mine"
    ctx = api.client.get(f"{api.base}/sessions/sum/context", params={"recent": 1}).json()
    assert ctx["earlier"][0]["summarized"] is True


def summaries(api: Api, outcome: str) -> float:
    r = api.client.get("/metrics")
    assert r.status_code == 200, r.text
    return value(r.text, "hindsight_step_summaries_total", outcome=outcome)


def test_with_an_llm_a_long_step_gets_the_models_summary_after_it_is_written(
    llm_api: Api, brain: FakeOpenAI
) -> None:
    first = "Opened the deployment config and found the port set twice."
    long_en = first + " " + "detail " * 40
    step = llm_api.append("llm-sum", long_en)
    assert step["summary"] == first  # at once: the context read is short from the start
    i = step["step_index"]
    wait_until(
        lambda: llm_api.steps("llm-sum")[-1]["summary"],
        "the model's summary replaces the first sentence",
        accept=lambda s: s == f"summary of step {i}",
    )
    assert llm_api.append("llm-sum", "short step")["summary"] is None
    ctx = llm_api.client.get(f"{llm_api.base}/sessions/llm-sum/context", params={"recent": 1})
    assert ctx.json()["earlier"][0]["text"] == f"summary of step {i}", ctx.text

    # a slow model never delays the write, and a summary the client sets meanwhile stands
    kept = summaries(llm_api, "kept")
    brain.delay_next(2)
    started = time.monotonic()
    slow = llm_api.append("llm-sum", long_en)
    assert time.monotonic() - started < 1.5
    assert slow["summary"] == first
    r = llm_api.client.patch(
        f"{llm_api.base}/sessions/llm-sum/steps/{slow['step_index']}", json={"summary": "mine"}
    )
    assert r.status_code == 200, r.text
    wait_until(lambda: summaries(llm_api, "kept") > kept, "the late summary is not applied")
    assert llm_api.steps("llm-sum")[-1]["summary"] == "mine"

    # a model that is down: the step is kept, with its first sentence
    failed = summaries(llm_api, "builtin")
    brain.fail_next(500, times=4)  # the first try and the client's three retries
    down = llm_api.append("llm-sum", long_en)
    wait_until(lambda: summaries(llm_api, "builtin") > failed, "the summary gives up")
    assert llm_api.steps("llm-sum")[-1]["step_index"] == down["step_index"]
    assert llm_api.steps("llm-sum")[-1]["summary"] == first
