"""Importance on direct writes: a built-in estimate when the client rates nothing, the
policy's gate below which such a write is stored cold or dropped, and min_importance as a
recall and list filter."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hindsight.text.filler import first_sentence_summary, is_filler
from hindsight.text.importance import estimate_importance
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer
from tests.test_mcp import call, over_http


def post(api: Api, **memory: Any) -> tuple[int, dict[str, Any]]:
    r = api.client.post(f"{api.base}/memories", json=memory)
    assert r.status_code in (200, 201), r.text
    body: dict[str, Any] = r.json()
    return r.status_code, body


def test_filler_in_english_chinese_and_japanese() -> None:
    for text in (
        "thanks!",
        "ok",
        "Hi there.",
        "你好",
        "谢谢！",
        "好的，谢谢。",
        "ありがとうございます。",
        "こんにちは",
        "了解です",
        "おはようございます！",
    ):
        assert is_filler(text), text
        assert estimate_importance(text) < 0.2, text
    for text in (
        "allergic to penicillin",
        "对青霉素过敏",
        "ペニシリンにアレルギーがある",
        "blue",
        "b",
        "5",
    ):
        assert estimate_importance(text) == 0.5, text


def test_the_fallback_summary_ends_at_a_chinese_or_japanese_full_stop() -> None:
    assert (
        first_sentence_summary("我先打开了配置文件。然后修正了错别字。") == "我先打开了配置文件。"
    )
    assert first_sentence_summary("設定を開いた！次に直した。") == "設定を開いた！"
    assert first_sentence_summary("Opened the file. Then fixed it.") == "Opened the file."


def test_a_direct_write_of_filler_is_stored_cold_and_a_rated_or_real_one_is_not(api: Api) -> None:
    code, thanks = post(api, key="chat.ack", value="thanks!")
    assert code == 201 and thanks["outcome"] == "stored_cold"
    assert "importance 0.1" in thanks["reason"]
    stored = api.get(thanks["id"])
    assert stored["status"] == "cold" and stored["importance"] == 0.1
    _, hello = post(api, key="chat.hello", value="你好")
    assert hello["outcome"] == "stored_cold"
    _, fact = post(api, key="user.allergy", value="allergic to penicillin")
    assert fact["outcome"] == "created" and api.get(fact["id"])["importance"] == 0.5
    # the client's own rating is its decision: stored as rated, active
    _, rated = post(api, key="chat.bye", value="bye", importance=0.1)
    assert rated["outcome"] == "created" and api.get(rated["id"])["status"] == "active"


def test_a_policy_can_drop_filler_instead(api: Api) -> None:
    r = api.client.put(
        f"{api.base}/policy",
        json={
            "lifecycle": {"write_below_importance": 0.3, "write_below_importance_action": "drop"}
        },
    )
    assert r.status_code == 200, r.text
    r = api.client.post(
        f"{api.base}/memories:batch",
        json={
            "memories": [{"key": "chat.ok", "value": "ok"}, {"key": "pet", "value": "has a cat"}]
        },
    )
    assert r.status_code == 201, r.text
    dropped, created = r.json()["results"]
    assert dropped["outcome"] == "dropped" and dropped["id"] is None and dropped["key"] == "chat.ok"
    assert created["outcome"] == "created"
    keys = [m["key"] for m in api.client.get(f"{api.base}/memories").json()["memories"]]
    assert keys == ["pet"]
    r = api.client.put(
        f"{api.base}/policy", json={"lifecycle": {"write_below_importance_action": "shred"}}
    )
    assert r.status_code == 422 and "write_below_importance_action" in r.text


def test_min_importance_filters_recall_and_list(api: Api, server: ThreadServer) -> None:
    api.observe(
        {"key": "user.allergy", "value": "allergic to penicillin", "importance": 0.9},
        {"key": "user.pill", "value": "took a penicillin pill once", "importance": 0.3},
    )
    hits = api.recall("penicillin", min_importance=0.5)["results"]
    assert [h["key"] for h in hits] == ["user.allergy"]
    assert len(api.recall("penicillin")["results"]) == 2
    listed = api.client.get(f"{api.base}/memories", params={"min_importance": 0.5}).json()
    assert [m["key"] for m in listed["memories"]] == ["user.allergy"]

    async def go() -> None:
        async with over_http(server.url) as client:
            out = await call(
                client, "recall", query="penicillin", min_importance=0.5, namespace=api.ns
            )
            assert [h["key"] for h in out["results"]] == ["user.allergy"]
            stored = await call(
                client, "observe", key="chat.thanks", value="谢谢", namespace=api.ns
            )
            assert stored["outcome"] == "stored_cold"

    asyncio.run(go())


def rating_requests(brain: FakeOpenAI) -> int:
    return sum(
        1
        for r in brain.requests
        if r["path"] == "chat" and "You rate memories" in r["body"]["messages"][0]["content"]
    )


def test_with_an_llm_direct_writes_get_its_rating_and_it_drives_the_gate(
    llm_api: Api, llm_server: ThreadServer, brain: FakeOpenAI
) -> None:
    asked = rating_requests(brain)
    # the built-in estimate would say 0.5 (not filler): the model says weather chat is 0.05
    _, walk = post(llm_api, key="chat.walk", value="The weather was lovely on my walk")
    assert walk["outcome"] == "stored_cold", walk
    assert (walk["importance"], walk["importance_by"]) == (0.05, "llm")
    assert "rated by the LLM" in walk["reason"]
    assert llm_api.get(walk["id"])["status"] == "cold"
    _, allergy = post(llm_api, key="user.allergy", value="allergic to penicillin")
    assert allergy["outcome"] == "created" and allergy["importance_by"] == "llm"
    assert llm_api.get(allergy["id"])["importance"] == 0.95
    assert rating_requests(brain) == asked + 2
    # the client's own rating is never sent to the model
    _, rated = post(llm_api, key="user.pet", value="has a cat", importance=0.4)
    assert (rated["importance"], rated["importance_by"]) == (0.4, "client")
    assert rating_requests(brain) == asked + 2

    # a batch is one request; under a dropping policy the model's low rating drops
    r = llm_api.client.put(
        f"{llm_api.base}/policy",
        json={"lifecycle": {"write_below_importance_action": "drop"}},
    )
    assert r.status_code == 200, r.text
    out = llm_api.observe(
        {"key": "chat.rain", "value": "What weather we are having"},
        {"key": "user.city", "value": "lives in Lisbon"},
    )
    assert [(o["outcome"], o["importance"]) for o in out] == [("dropped", 0.05), ("created", 0.6)]
    assert rating_requests(brain) == asked + 3

    async def over_mcp() -> None:
        async with over_http(llm_server.url) as client:
            stored = await call(
                client, "observe", key="user.sister", value="has a sister", namespace=llm_api.ns
            )
            assert (stored["importance"], stored["importance_by"]) == (0.6, "llm")

    asyncio.run(over_mcp())


@pytest.fixture(scope="module")
def hasty_server(module_db: str, redis_url: str, brain: FakeOpenAI) -> Iterator[ThreadServer]:
    """An LLM-backed server that waits at most a second for an importance rating."""
    settings = make_settings(
        llm_base_url=brain.url,
        llm_model="fake-chat",
        llm_api_key="sk-llm",
        write_importance_timeout_seconds=1.0,
    )
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


def test_when_the_llm_fails_or_is_slow_the_builtin_estimate_stands(
    hasty_server: ThreadServer, brain: FakeOpenAI, ns: str
) -> None:
    api = Api.at(hasty_server.url, ns)
    brain.fail_next(500, times=4)  # the first try and the client's three retries
    _, thanks = post(api, key="chat.ack", value="thanks!")
    assert (thanks["importance"], thanks["importance_by"]) == (0.1, "builtin_fallback")
    assert thanks["outcome"] == "stored_cold" and "the LLM failed" in thanks["reason"]
    brain.delay_next(5)
    started = time.monotonic()
    _, walk = post(api, key="chat.walk", value="The weather was lovely on my walk")
    assert time.monotonic() - started < 4
    assert walk["outcome"] == "created", walk
    assert (walk["importance"], walk["importance_by"]) == (0.5, "builtin_fallback")
    # and the LLM back: its rating again
    _, rain = post(api, key="chat.rain", value="What weather we are having")
    assert (rain["outcome"], rain["importance_by"]) == ("stored_cold", "llm")
    api.client.close()


def test_without_an_llm_the_outcome_names_the_builtin_estimate(api: Api) -> None:
    _, fact = post(api, key="user.city", value="lives in Lisbon")
    assert (fact["importance"], fact["importance_by"]) == (0.5, "builtin")
