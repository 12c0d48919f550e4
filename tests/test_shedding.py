"""Past its capacity a worker refuses at once (503 overloaded, Retry-After) instead of making
every request wait. The capacity here is one request in flight, held by a write that waits on
a table lock an operator's transaction holds (work on this machine: it keeps its slot). A
queue that drains (a burst) is waited on in arrival order; once a request has waited out the
queue wait (overload), newcomers are refused within milliseconds and the newest waiter is
served first, until the queue is next empty. A
request waiting on a remote endpoint (here a slow LLM) lends its slot out meanwhile."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import psycopg
import pytest

from hindsight.client import Hindsight
from tests.conftest import ADMIN_KEY, make_settings
from tests.support import fake_brain
from tests.support.fake_openai import FakeOpenAI
from tests.support.poll import wait_until
from tests.support.scrape import value
from tests.support.servers import ThreadServer

CHAT = "chat"  # FakeOpenAI.in_flight names paths without /v1/ and /completions
CONVERSATION = [{"role": "user", "content": "I moved to Bergen last week."}]


@pytest.fixture
def slow_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.brain = fake_brain.answer
        yield fake


def one_slot(db: str, redis_url: str, llm: FakeOpenAI | None = None, **queue: int) -> ThreadServer:
    providers: dict[str, Any] = (
        {"llm_base_url": llm.url, "llm_model": "fake-chat", "llm_api_key": "sk-llm"} if llm else {}
    )
    return ThreadServer(make_settings(max_in_flight=1, **providers, **queue), db, redis_url)


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60)


@contextmanager
def slot_held(db: str, url: str, ns: str) -> Iterator[Future[httpx.Response]]:
    """A write that holds the one slot: it waits on a lock an open transaction holds on the
    memory table, until the block ends. Yields the write's response to come."""
    with (
        psycopg.connect(db) as blocker,
        psycopg.connect(db, autocommit=True) as watcher,
        client(url) as writer,
        ThreadPoolExecutor(1) as pool,
    ):
        blocker.execute("LOCK TABLE long_term_memory IN EXCLUSIVE MODE")
        write = pool.submit(
            writer.post, f"/v1/namespaces/{ns}/memories", json={"key": "k", "value": "held"}
        )
        wait_until(
            lambda: (
                watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'"
                ).fetchone()
                == (1,)
            ),
            "the write to wait on the lock",
        )
        try:
            yield write
        finally:
            blocker.rollback()
            write.result(timeout=60)


def _queued(c: httpx.Client) -> float:
    return value(c.get("/metrics").text, "hindsight_queued_requests")


def _congest(c: httpx.Client, pool: ThreadPoolExecutor, path: str) -> Future[httpx.Response]:
    """With the slot held and a queue wait of 4 s: one request waits and is refused at 4 s,
    while a second, sent 1.5 s later, still waits (long enough for a machine busy with other
    tests to queue both). Returns the second's answer."""
    first = pool.submit(c.get, path)
    wait_until(lambda: _queued(c) == 1, "the first request to wait for the slot")
    since = time.monotonic()
    wait_until(lambda: time.monotonic() - since > 1.5, "part of the queue wait to pass")
    second = pool.submit(c.get, path)
    wait_until(lambda: _queued(c) == 2, "the second request to wait too")
    assert first.result(timeout=60).status_code == 503
    return second


def test_a_request_past_capacity_is_refused_at_once(fresh_db: str, redis_url: str, ns: str) -> None:
    with (
        one_slot(fresh_db, redis_url, queue_wait_ms=200) as srv,
        client(srv.url) as other,
        slot_held(fresh_db, srv.url, ns) as write,
    ):
        before = value(other.get("/metrics").text, "hindsight_shed_requests_total")
        started = time.monotonic()
        r = other.get(f"/v1/namespaces/{ns}/memories")
        waited = time.monotonic() - started
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "overloaded"
        assert "HINDSIGHT_MAX_IN_FLIGHT" in r.json()["error"]["message"]
        assert r.headers["retry-after"] == "1"
        assert waited < 2.0  # the queue's wait (0.2 s), not the held request's
        # probes and metrics are never held back
        assert other.get("/healthz").status_code == 200
        assert value(other.get("/metrics").text, "hindsight_shed_requests_total") == before + 1
    # the request holding the slot was served, not refused; the slot is free again
    assert write.result().status_code in (200, 201), write.result().text
    with one_slot(fresh_db, redis_url) as srv, client(srv.url) as later:
        assert later.get(f"/v1/namespaces/{ns}/memories").status_code == 200


def test_past_a_refusal_new_requests_are_refused_within_milliseconds(
    fresh_db: str, redis_url: str, ns: str
) -> None:
    """A request that waited its 4 s and gave up shows overload: while the queue is not
    empty, a newcomer waits 20 ms, not 4 s."""
    path = f"/v1/namespaces/{ns}/memories"
    with (
        one_slot(fresh_db, redis_url, queue_wait_ms=4000, queue_congested_wait_ms=20) as srv,
        client(srv.url) as waiters,
        client(srv.url) as late,
        ThreadPoolExecutor(2) as pool,
    ):
        with slot_held(fresh_db, srv.url, ns):
            second = _congest(waiters, pool, path)
            started = time.monotonic()
            r = late.get(path)
            refused_in = time.monotonic() - started
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "overloaded"
            assert r.headers["retry-after"] == "1"
            assert refused_in < 0.5  # the congested wait (20 ms), not the queue wait's 4 s
            assert _queued(late) == 1, "the second waiter is still in the queue"
            assert second.result(timeout=60).status_code == 503  # its own 4 s ran out
        # the queue emptied and the slot came free: served again
        assert late.get(path).status_code == 200


def test_under_overload_the_newest_waiter_is_served_first(
    fresh_db: str, redis_url: str, ns: str
) -> None:
    """Past a refusal, two waiters and a slot coming free: it goes to the one who came last,
    who can still be answered fast, while the older is the next to give up anyway. Each
    stores a memory, whose id (a UUIDv7, in the order the worker made them) tells who went
    first."""
    path = f"/v1/namespaces/{ns}/memories"

    def store(c: httpx.Client, key: str) -> str:
        r = c.post(path, json={"key": key, "value": "waited"})
        assert r.status_code in (200, 201), r.text
        return str(r.json()["id"])

    # Long waits, so two cores busy with other tests' work still leave each request time to
    # queue before the first is refused (2.5 s) and the newer time to finish before the
    # older gives up (1.5 s); 1 s waits left 0.5 s each, and a full suite's load missed one.
    waits = {"queue_wait_ms": 4000, "queue_congested_wait_ms": 4000}
    with (
        one_slot(fresh_db, redis_url, **waits) as srv,
        client(srv.url) as refused,
        client(srv.url) as old,
        client(srv.url) as new,
        ThreadPoolExecutor(3) as pool,
    ):
        with slot_held(fresh_db, srv.url, ns):
            first = pool.submit(refused.get, path)
            wait_until(lambda: _queued(new) == 1, "a request to wait for the slot")
            since = time.monotonic()
            wait_until(lambda: time.monotonic() - since > 1.5, "part of the queue wait to pass")
            older = pool.submit(store, old, "older")
            wait_until(lambda: _queued(new) == 2, "the older request to wait")
            newer = pool.submit(store, new, "newer")
            wait_until(lambda: _queued(new) == 3, "the newer request to wait")
            assert first.result(timeout=60).status_code == 503  # and the queue is congested
        # the slot comes free 1.5 s before the older waiter would give up
        assert newer.result(timeout=60) < older.result(timeout=60)


def test_a_request_waiting_on_the_llm_lends_its_slot(
    fresh_db: str, redis_url: str, slow_llm: FakeOpenAI, ns: str
) -> None:
    """One slot, and an extraction waiting 3 s on the LLM: other requests are served
    meanwhile, and the extraction gets a slot back to finish."""
    slow_llm.delay_next(3.0)
    with (
        one_slot(fresh_db, redis_url, slow_llm, queue_wait_ms=200) as srv,
        client(srv.url) as busy,
        client(srv.url) as other,
        ThreadPoolExecutor(1) as pool,
    ):
        base = f"/v1/namespaces/{ns}"
        extraction = pool.submit(
            busy.post, f"{base}/memories:extract", json={"messages": CONVERSATION}
        )
        wait_until(
            lambda: slow_llm.in_flight.get(CHAT, 0) >= 1, "the extraction to wait on the LLM"
        )
        for _ in range(3):
            r = other.get(f"{base}/memories")
            assert r.status_code == 200, r.text
        assert slow_llm.in_flight.get(CHAT, 0) == 1  # answered while the LLM still thinks
        done = extraction.result(timeout=60)
        assert done.status_code == 200, done.text


def test_a_write_waiting_on_the_embedding_endpoint_lends_its_slot(
    fresh_db: str, redis_url: str, ns: str
) -> None:
    """One slot, and a write whose embedding takes 3 s at a remote endpoint: reads are
    served meanwhile, and the write gets a slot back to store what it embedded."""
    base = f"/v1/namespaces/{ns}"
    with FakeOpenAI(dimensions=48) as embedder:
        settings = make_settings(
            max_in_flight=1,
            queue_wait_ms=200,
            embedding_base_url=embedder.url,
            embedding_model="fake-embed",
            embedding_dimensions=48,
        )
        with (
            ThreadServer(settings, fresh_db, redis_url) as srv,
            client(srv.url) as writer,
            client(srv.url) as reader,
            ThreadPoolExecutor(1) as pool,
        ):
            embedder.delay_next(3.0)
            write = pool.submit(
                writer.post, f"{base}/memories", json={"key": "user.tea", "value": "oolong"}
            )
            wait_until(
                lambda: embedder.in_flight.get("embeddings", 0) >= 1,
                "the write to wait on the embedding endpoint",
            )
            for _ in range(3):
                r = reader.get(f"{base}/memories")
                assert r.status_code == 200, r.text
            assert embedder.in_flight.get("embeddings", 0) == 1  # still embedding
            assert write.result(timeout=60).status_code in (200, 201)
            assert [m["key"] for m in reader.get(f"{base}/memories").json()["memories"]] == [
                "user.tea"
            ]


def test_the_sdk_retries_a_request_that_was_shed(fresh_db: str, redis_url: str, ns: str) -> None:
    """503 overloaded is transient: the SDK waits Retry-After and asks again."""
    with (
        one_slot(fresh_db, redis_url, queue_wait_ms=200) as srv,
        client(srv.url) as watcher,
        ThreadPoolExecutor(1) as pool,
    ):
        with slot_held(fresh_db, srv.url, ns):
            before = value(watcher.get("/metrics").text, "hindsight_shed_requests_total")
            sdk = Hindsight(srv.url, ADMIN_KEY)
            stored = pool.submit(sdk.recall, ns, "where do I live")
            wait_until(
                lambda: (
                    value(watcher.get("/metrics").text, "hindsight_shed_requests_total") > before
                ),
                "the SDK's first try to be refused",
            )
        assert stored.result(timeout=60) is not None
        sdk.close()
