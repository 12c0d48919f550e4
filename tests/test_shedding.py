"""Past its capacity a worker refuses at once (503 overloaded, Retry-After) instead of making
every request wait: the capacity here is one request in flight, held by an extraction whose
LLM answers slowly."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
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


@pytest.fixture
def one_slot(migrated: str, redis_url: str, slow_llm: FakeOpenAI) -> Iterator[ThreadServer]:
    settings = make_settings(
        llm_base_url=slow_llm.url,
        llm_model="fake-chat",
        llm_api_key="sk-llm",
        max_in_flight=1,
        queue_wait_ms=200,
    )
    with ThreadServer(settings, migrated, redis_url) as srv:
        yield srv


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60)


def test_a_request_past_capacity_is_refused_at_once(
    one_slot: ThreadServer, slow_llm: FakeOpenAI, ns: str
) -> None:
    base = f"/v1/namespaces/{ns}"
    slow_llm.delay_next(3.0)
    with client(one_slot.url) as busy, client(one_slot.url) as other, ThreadPoolExecutor(1) as pool:
        before = value(other.get("/metrics").text, "hindsight_shed_requests_total")
        held = pool.submit(busy.post, f"{base}/memories:extract", json={"messages": CONVERSATION})
        wait_until(
            lambda: slow_llm.in_flight.get(CHAT, 0) >= 1, "the extraction to wait on the LLM"
        )

        started = time.monotonic()
        r = other.get(f"{base}/memories")
        waited = time.monotonic() - started
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "overloaded"
        assert "HINDSIGHT_MAX_IN_FLIGHT" in r.json()["error"]["message"]
        assert r.headers["retry-after"] == "1"
        assert waited < 2.0  # the queue's wait (0.2 s), not the slow request's 3 s
        # probes and metrics are never held back
        assert other.get("/healthz").status_code == 200
        assert value(other.get("/metrics").text, "hindsight_shed_requests_total") == before + 1

        # the request holding the slot was served, not refused
        assert held.result(timeout=60).json().get("error", {}).get("code") != "overloaded"
    # the slot is free again
    with client(one_slot.url) as later:
        assert later.get(f"{base}/memories").status_code == 200


def test_the_sdk_retries_a_request_that_was_shed(
    one_slot: ThreadServer, slow_llm: FakeOpenAI, ns: str
) -> None:
    """503 overloaded is transient: the SDK waits Retry-After and asks again."""
    slow_llm.delay_next(1.5)
    with client(one_slot.url) as busy, ThreadPoolExecutor(1) as pool:
        base = f"/v1/namespaces/{ns}"
        held = pool.submit(busy.post, f"{base}/memories:extract", json={"messages": CONVERSATION})
        wait_until(
            lambda: slow_llm.in_flight.get(CHAT, 0) >= 1, "the extraction to wait on the LLM"
        )
        with Hindsight(one_slot.url, ADMIN_KEY) as sdk:
            stored = sdk.observe(ns, "user.tea", "oolong")
        assert stored.outcome in ("created", "reinforced")
        held.result(timeout=60)
