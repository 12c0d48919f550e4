"""Importance on direct writes: a built-in estimate when the client rates nothing, the
policy's gate below which such a write is stored cold or dropped, and min_importance as a
recall and list filter."""

from __future__ import annotations

import asyncio
from typing import Any

from hindsight.text.filler import first_sentence_summary, is_filler
from hindsight.text.importance import estimate_importance
from tests.conftest import Api
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
