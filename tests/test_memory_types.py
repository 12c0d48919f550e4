"""Memory types from the LLM: extraction and consolidation keep `event` and `summary` as the
model names them (anything unknown is a fact), and the lifecycle demotes the events a
session produced once it has ended."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hindsight.llm.prompts import DISTILL_SYSTEM
from hindsight.services.distill import Candidate
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.lifecycle import days_from_now, run_pass
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer


@pytest.fixture(scope="module")
def llm_server(module_db: str, redis_url: str, brain: FakeOpenAI) -> Iterator[ThreadServer]:
    # a database of its own: other servers' job workers (without an LLM) must not take
    # these consolidation jobs
    settings = make_settings(
        llm_base_url=brain.url, llm_model="fake-chat", job_poll_interval_seconds=0.05
    )
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


def by_key(api: Api) -> dict[str, dict[str, Any]]:
    page = api.client.get(f"{api.base}/memories", params={"limit": 1000}).json()
    return {m["key"]: m for m in page["memories"]}


def test_candidates_keep_every_stored_type_and_make_the_unknown_a_fact() -> None:
    for memory_type in ("fact", "preference", "experience", "reflection", "relation"):
        assert Candidate(memory_type=memory_type).memory_type == memory_type
    assert Candidate(memory_type=" Event ").memory_type == "event"
    assert Candidate(memory_type="summary").memory_type == "summary"
    assert Candidate(memory_type="anecdote").memory_type == "fact"
    assert Candidate(memory_type=None).memory_type == "fact"


def test_the_prompt_says_when_to_use_event_and_summary() -> None:
    assert "event (something that happened or will happen at a particular time" in DISTILL_SYSTEM
    assert "summary (a short digest of a whole conversation or task" in DISTILL_SYSTEM
    assert "Use event, not fact, for anything tied to a date or time" in DISTILL_SYSTEM


def test_extraction_stores_events_and_summaries(llm_api: Api) -> None:
    messages = [
        {"role": "user", "content": "event trip.flight: the flight to Oslo on 3 May was cancelled"},
        {"role": "user", "content": "summary trip.overview: planned a trip to Oslo, rebooked"},
        {"role": "user", "content": "anecdote trip.joke: the pilot told a joke"},
    ]
    r = llm_api.client.post(f"{llm_api.base}/memories:extract", json={"messages": messages})
    assert r.status_code == 200, r.text
    stored = {m["key"]: llm_api.get(m["result"]["id"])["memory_type"] for m in r.json()["memories"]}
    assert stored == {"trip.flight": "event", "trip.overview": "summary", "trip.joke": "fact"}


def test_a_consolidated_sessions_events_are_demoted_after_it_ends(
    llm_api: Api, llm_server: ThreadServer
) -> None:
    llm_api.append("trip", "event trip.booking: booked the 9:02 train to Bergen for Friday")
    llm_api.append("trip", "summary trip.overview: booked a train to Bergen")
    r = llm_api.client.post(f"{llm_api.base}/sessions/trip:end")
    assert r.status_code == 200, r.text
    job_id = r.json()["consolidation"]["job_id"]
    job = wait_until(
        lambda: llm_api.client.get(f"{llm_api.base}/jobs/{job_id}").json(),
        "the job to finish",
        accept=lambda job: job["status"] in ("succeeded", "failed"),
    )
    assert job["status"] == "succeeded", job
    memories = by_key(llm_api)
    assert {k: m["memory_type"] for k, m in memories.items()} == {
        "trip.booking": "event",
        "trip.overview": "summary",
    }
    assert {m["source"] for m in memories.values()} == {"session:trip"}

    # after the demotion delay (an hour by default) the event loses importance, the
    # summary keeps it
    url = llm_server.core.database_url
    _, moves = run_pass(make_settings(), url, now=days_from_now(0.05), namespace=llm_api.ns)
    assert [m.key for m in moves if m.rule == "session_demotion"] == ["trip.booking"]
    after = by_key(llm_api)
    assert after["trip.booking"]["importance"] == pytest.approx(
        memories["trip.booking"]["importance"] * 0.5
    )
    assert after["trip.overview"]["importance"] == memories["trip.overview"]["importance"]


def test_every_list_of_memory_types_is_the_one_in_limits() -> None:
    """The typed Literals of the API and the SDK must be spelled out; they must still agree
    with the one list the schema, MCP and extraction use."""
    from typing import get_args, get_type_hints

    from hindsight import limits
    from hindsight.client import _options
    from hindsight.db import models
    from hindsight.wire.fields import MemoryType

    assert get_args(MemoryType) == limits.MEMORY_TYPES == models.MEMORY_TYPES
    sdk = get_args(get_type_hints(_options.MemoryFields)["memory_type"])
    assert sdk == limits.MEMORY_TYPES
