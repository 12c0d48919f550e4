"""LangGraph's store on Hindsight: inside compiled graphs (sync and async), and against the
behaviours LangGraph documents for `BaseStore`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, TTLConfig

from hindsight.client import Hindsight
from hindsight.integrations.langgraph import HindsightStore
from hindsight.wire.memories import MemoryOut
from tests.conftest import ADMIN_KEY
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer


@pytest.fixture
def store(server: ThreadServer, ns: str) -> Iterator[HindsightStore]:
    with HindsightStore(server.url, api_key=ADMIN_KEY, namespace=ns) as s:
        yield s


# --- inside a graph -----------------------------------------------------------------------


class State(TypedDict, total=False):
    message: str
    answer: str


@dataclass
class Context:
    user_id: str


def remember(state: State, runtime: Runtime[Context]) -> State:
    """Keeps what the user says about themselves ("I like X" / "I live in X")."""
    assert runtime.store is not None
    text = state["message"]
    for marker, field in (("I like ", "likes"), ("I live in ", "home")):
        if text.startswith(marker):
            runtime.store.put(
                ("users", runtime.context.user_id, "facts"),
                field,
                {"text": text, field: text[len(marker) :]},
            )
    return {}


def respond(state: State, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    hits = runtime.store.search(
        ("users", runtime.context.user_id, "facts"), query=state["message"], limit=1
    )
    return {"answer": hits[0].value["text"] if hits else "I know nothing about you yet"}


async def arespond(state: State, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    hits = await runtime.store.asearch(
        ("users", runtime.context.user_id, "facts"), query=state["message"], limit=1
    )
    return {"answer": hits[0].value["text"] if hits else "I know nothing about you yet"}


def build(store: HindsightStore, *, use_async: bool = False) -> object:
    graph = StateGraph(State, context_schema=Context)
    graph.add_node("remember", remember)
    graph.add_node("respond", arespond if use_async else respond)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "respond")
    graph.add_edge("respond", END)
    return graph.compile(store=store)


def test_a_graph_remembers_a_user_across_runs_and_store_instances(
    server: ThreadServer, ns: str
) -> None:
    with HindsightStore(server.url, api_key=ADMIN_KEY, namespace=ns) as first:
        app = build(first)
        app.invoke({"message": "I live in Oslo"}, context=Context("alice"))  # type: ignore[attr-defined]
        app.invoke({"message": "I like sailing"}, context=Context("alice"))  # type: ignore[attr-defined]
    # a new store object: nothing is held in the process, it all comes back from Hindsight
    with HindsightStore(server.url, api_key=ADMIN_KEY, namespace=ns) as second:
        app = build(second)
        out = app.invoke({"message": "which city do I live in"}, context=Context("alice"))  # type: ignore[attr-defined]
        assert out["answer"] == "I live in Oslo"
        out = app.invoke({"message": "what do I like doing"}, context=Context("bob"))  # type: ignore[attr-defined]
        assert out["answer"] == "I know nothing about you yet"
        item = second.get(("users", "alice", "facts"), "likes")
        assert item is not None and item.value == {"text": "I like sailing", "likes": "sailing"}


def test_an_async_graph_reads_and_writes_through_abatch(server: ThreadServer, ns: str) -> None:
    async def run() -> str:
        store = HindsightStore(server.url, api_key=ADMIN_KEY, namespace=ns)
        try:
            await store.aput(("users", "carol", "facts"), "home", {"text": "I live in Lima"})
            app = build(store, use_async=True)
            out = await app.ainvoke({"message": "where do I live"}, context=Context("carol"))  # type: ignore[attr-defined]
            return str(out["answer"])
        finally:
            await store.aclose()

    assert asyncio.run(run()) == "I live in Lima"


# --- BaseStore behaviours -----------------------------------------------------------------


def test_put_get_delete_and_missing_keys(store: HindsightStore) -> None:
    value = {"text": "prefers window seats", "nested": {"n": [1, 2, {"deep": True}]}, "x": None}
    store.put(("prefs", "alice"), "seat", value)
    item = store.get(("prefs", "alice"), "seat")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (("prefs", "alice"), "seat", value)
    assert item.created_at <= item.updated_at

    assert store.get(("prefs", "alice"), "missing") is None
    assert store.get(("prefs", "bob"), "seat") is None
    store.delete(("prefs", "alice"), "seat")
    assert store.get(("prefs", "alice"), "seat") is None
    store.delete(("prefs", "alice"), "seat")  # deleting what is gone is not an error


def test_a_new_value_replaces_the_item_and_the_old_one_stays_in_history(
    store: HindsightStore, server: ThreadServer, ns: str
) -> None:
    store.put(("prefs", "alice"), "drink", {"drink": "tea"})
    store.put(("prefs", "alice"), "drink", {"drink": "coffee"})
    item = store.get(("prefs", "alice"), "drink")
    assert item is not None and item.value == {"drink": "coffee"}
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        (memory,) = hs.list_memories(ns, key="prefs.alice/drink").memories
        history = hs.history(ns, str(memory.id))
    assert [h.change for h in history] == ["created", "superseded"]
    assert '"tea"' in (history[0].value or "")


def test_equal_values_under_different_keys_stay_separate_items(store: HindsightStore) -> None:
    same = {"food": "pizza", "note": "likes pizza with extra cheese on Fridays"}
    store.put(("users", "a"), "food", same)
    store.put(("users", "b"), "food", same)
    store.put(("users", "a"), "food-again", same)
    assert len(store.search(("users",))) == 3


def test_batch_runs_ops_in_order_and_answers_each(store: HindsightStore) -> None:
    ns = ("docs",)
    results = store.batch(
        [
            PutOp(ns, "a", {"n": 1}),
            PutOp(ns, "b", {"n": 2}),
            GetOp(ns, "a"),
            PutOp(ns, "a", None),
            GetOp(ns, "a"),
            GetOp(ns, "b"),
        ]
    )
    assert results[:2] == [None, None]
    assert results[2] is not None and results[2].value == {"n": 1}  # type: ignore[union-attr]
    assert results[3] is None and results[4] is None
    assert results[5] is not None and results[5].value == {"n": 2}  # type: ignore[union-attr]


def test_search_by_prefix_with_filters_limit_and_offset(store: HindsightStore) -> None:
    for user, food, rating in (("a", "pizza", 5), ("b", "sushi", 3), ("c", "pizza", 2)):
        store.put(("users", user, "prefs"), "food", {"food": food, "rating": rating})
    store.put(("teams", "x"), "food", {"food": "pizza", "rating": 4})

    everything = store.search(("users",))
    assert [i.namespace[1] for i in everything] == ["a", "b", "c"]
    assert all(i.score is None for i in everything)
    assert len(store.search(())) == 4
    pizza = store.search(("users",), filter={"food": "pizza"})
    assert [i.namespace[1] for i in pizza] == ["a", "c"]
    assert [i.namespace[1] for i in store.search(("users",), filter={"rating": {"$gte": 3}})] == [
        "a",
        "b",
    ]
    assert [
        i.namespace[1] for i in store.search(("users",), filter={"food": {"$ne": "pizza"}})
    ] == ["b"]
    assert [i.namespace[1] for i in store.search(("users",), limit=1, offset=1)] == ["b"]
    assert store.search(("users",), offset=3) == []
    assert store.search(("users", "a", "prefs", "deeper")) == []
    assert store.search(("use",)) == []  # a prefix is whole labels, not characters


def test_search_with_a_query_ranks_by_recall(store: HindsightStore) -> None:
    store.put(("notes",), "1", {"text": "the user's cat is called Miso"})
    store.put(("notes",), "2", {"text": "flights to Oslo leave at 07:42"})
    store.put(("notes",), "3", {"text": "the user is allergic to peanuts"})
    store.put(("elsewhere",), "4", {"text": "a cat called Tom"})

    hits = store.search(("notes",), query="what is the name of the cat", limit=2)
    assert hits[0].key == "1" and len(hits) == 2
    assert hits[0].score is not None and hits[1].score is not None
    assert hits[0].score >= hits[1].score
    assert all(h.namespace == ("notes",) for h in hits)
    filtered = store.search(
        ("notes",), query="cat", filter={"text": "flights to Oslo leave at 07:42"}
    )
    assert [h.key for h in filtered] == ["2"]


def test_search_with_the_conversation_so_far(store: HindsightStore) -> None:
    """LangChain messages, chat dicts or pairs: the conversation finds what its last line
    alone does not name."""
    from langchain_core.messages import AIMessage, HumanMessage

    store.put(("notes",), "cat", {"text": "Miso the cat needs her pills at 8"})
    store.put(("notes",), "trip", {"text": "the user's flight to Oslo leaves at 07:42"})
    store.put(("elsewhere",), "x", {"text": "a cat called Tom"})
    last = "Who could do that while I am away?"
    assert [h.key for h in store.search(("notes",), query=last, limit=1)] != ["cat"]
    messages = [
        HumanMessage("Miso the cat needs her pills every evening"),
        AIMessage("Poor Miso! I hope she gets better soon."),
        HumanMessage(last),
    ]
    hits = store.search_conversation(("notes",), messages, limit=1)
    assert [h.key for h in hits] == ["cat"] and hits[0].namespace == ("notes",)
    pairs = [
        {"role": "user", "content": "Miso the cat needs her pills every evening"},
        ("assistant", [{"type": "text", "text": "Poor Miso!"}]),
    ]
    assert [h.key for h in store.search_conversation(("notes",), pairs, query=last)][:1] == ["cat"]
    assert asyncio.run(store.asearch_conversation(("notes",), messages, limit=1))[0].key == "cat"
    with pytest.raises(ValueError, match="no message with text"):
        store.search_conversation(("notes",), [{"role": "user", "content": ""}])


def test_list_namespaces_with_prefix_suffix_depth_and_paging(store: HindsightStore) -> None:
    for namespace in (
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
    ):
        store.put(namespace, "k", {"v": 1})

    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",), ("users",)]
    assert store.list_namespaces(prefix=("a",), limit=2, offset=1) == [
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
    ]
    assert store.list_namespaces(prefix=("nothing",)) == []


def test_labels_with_any_characters_map_back_exactly(store: HindsightStore) -> None:
    namespace = ("tenant/42", "100%", "ünïcode label", "lg:x")
    store.put(namespace, "key/with/slashes", {"ok": True})
    item = store.get(namespace, "key/with/slashes")
    assert item is not None and item.namespace == namespace and item.key == "key/with/slashes"
    assert store.list_namespaces(prefix=("tenant/42",)) == [namespace]
    assert [i.key for i in store.search(("tenant/42", "100%"))] == ["key/with/slashes"]


def test_memories_not_written_by_the_store_are_not_items(
    store: HindsightStore, server: ThreadServer, ns: str
) -> None:
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        hs.observe(ns, "user.city", "Oslo")
        hs.observe(ns, "notes/1", "not json", tags=["lg:"])
    store.put(("notes",), "1", {"text": "written by the store"})
    assert [(i.namespace, i.key) for i in store.search(())] == [(("notes",), "1")]
    assert store.list_namespaces() == [("notes",)]


def test_what_the_store_cannot_keep_is_refused_with_a_reason(store: HindsightStore) -> None:
    for ttl in (0, -1, float("inf"), 10**9):
        with pytest.raises(ValueError, match="ttl"):
            store.put(("a",), "k", {"v": 1}, ttl=ttl)
    with pytest.raises(ValueError, match="ttl"):
        HindsightStore("http://127.0.0.1:1", ttl_config={"default_ttl": 0})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", {"v": 1})])
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp((), "k", {"v": 1})])
    with pytest.raises(ValueError, match="at most 8000"):
        store.put(("a",), "big", {"text": "x" * 9000})
    with pytest.raises(ValueError, match="JSON"):
        store.put(("a",), "odd", {"when": object()})
    with pytest.raises(ValueError, match="at most 256"):
        store.put(("a",), "k" * 300, {"v": 1})
    assert store.search(("a",)) == []


# --- ttl: LangGraph's expiry, in minutes, is the memory's hard expiry ----------------------


def memory_of(server: ThreadServer, ns: str, key: str) -> MemoryOut:
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        (memory,) = hs.list_memories(ns, key=key).memories
    return memory


def seconds_left(memory: MemoryOut) -> float:
    assert memory.expires_at is not None
    return (memory.expires_at - datetime.now(UTC)).total_seconds()


def expire_soon(server: ThreadServer, ns: str, key: str, seconds: int = 8) -> None:
    """Move an item's expiry a few seconds from now, as if most of its ttl had passed: enough
    for the reads a test makes before it on a busy machine."""
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        hs.update(ns, str(memory_of(server, ns, key).id), ttl_seconds=seconds)


def test_an_item_put_with_a_ttl_is_gone_once_it_expires(
    store: HindsightStore, server: ThreadServer, ns: str
) -> None:
    assert store.supports_ttl
    store.put(("tmp",), "short", {"text": "the parcel arrives today"}, ttl=0.1)  # 6 s
    store.put(("tmp",), "kept", {"text": "the user's name is Ada"})
    assert 0 < seconds_left(memory_of(server, ns, "tmp/short")) <= 6
    assert memory_of(server, ns, "tmp/kept").expires_at is None
    # not refreshed while waiting: a read that refreshes would keep it alive
    assert store.get(("tmp",), "short", refresh_ttl=False) is not None
    wait_until(
        lambda: store.get(("tmp",), "short", refresh_ttl=False) is None, "the item expires", 30
    )

    assert [i.key for i in store.search(("tmp",))] == ["kept"]
    assert [h.key for h in store.search(("tmp",), query="when does the parcel arrive")] == ["kept"]
    store.put(("gone",), "x", {"v": 1}, ttl=0.01)
    wait_until(
        lambda: ("gone",) not in store.list_namespaces(), "its namespace is no longer listed", 30
    )
    assert store.list_namespaces() == [("tmp",)]
    # putting the key again starts a new item, with no trace of the expired one
    store.put(("tmp",), "short", {"text": "the parcel came"})
    item = store.get(("tmp",), "short")
    assert item is not None and item.value == {"text": "the parcel came"}
    assert memory_of(server, ns, "tmp/short").expires_at is None


def test_reading_with_refresh_ttl_pushes_the_expiry_to_now_plus_the_ttl(
    store: HindsightStore, server: ThreadServer, ns: str
) -> None:
    texts = {
        "get": "the user's cat is called Miso",
        "search": "flights to Oslo leave at 07:42",
        "recall": "the user is allergic to peanuts",
        "unread": "the office wifi password changed",
        "get-no-refresh": "the dentist appointment is on Tuesday",
    }
    for key, text in texts.items():
        store.put(("tmp",), key, {"text": text}, ttl=10)
    for key in texts:
        expire_soon(server, ns, f"tmp/{key}")

    assert store.get(("tmp",), "get") is not None  # refresh_ttl defaults to True
    assert [i.key for i in store.search(("tmp",), filter={"text": texts["search"]})] == ["search"]
    hits = store.search(("tmp",), query="what is the user allergic to", limit=1)
    assert [h.key for h in hits] == ["recall"]
    assert store.get(("tmp",), "get-no-refresh", refresh_ttl=False) is not None

    for key in ("get", "search", "recall"):
        assert 590 < seconds_left(memory_of(server, ns, f"tmp/{key}")) <= 600, key
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        history = hs.history(ns, str(memory_of(server, ns, "tmp/get").id))
    # created, moved near its end by this test, refreshed: a refresh is a write
    assert [h.change for h in history] == ["created", "updated", "updated"]
    # the items not refreshed lapse at the time they had; the refreshed ones outlive it
    wait_until(
        lambda: (
            store.get(("tmp",), "unread", refresh_ttl=False) is None
            and store.get(("tmp",), "get-no-refresh", refresh_ttl=False) is None
        ),
        "the unrefreshed items expire",
        30,
    )
    assert sorted(i.key for i in store.search(("tmp",), refresh_ttl=False)) == [
        "get",
        "recall",
        "search",
    ]


def test_a_put_replaces_the_expiry_as_it_replaces_the_value(
    store: HindsightStore, server: ThreadServer, ns: str
) -> None:
    store.put(("tmp",), "k", {"v": 1}, ttl=10)
    store.put(("tmp",), "k", {"v": 2})  # no ttl: the new item never expires
    memory = memory_of(server, ns, "tmp/k")
    assert memory.expires_at is None and memory.metadata == {"langgraph_ttl_minutes": None}
    assert store.get(("tmp",), "k") is not None  # nothing to refresh: it stays without expiry
    assert memory_of(server, ns, "tmp/k").expires_at is None

    store.put(("tmp",), "k", {"v": 2}, ttl=1)  # the same value, now with a ttl
    assert 50 < seconds_left(memory_of(server, ns, "tmp/k")) <= 60
    # in one batch the last put of a key decides, whichever way round
    store.batch([PutOp(("tmp",), "k", {"v": 3}), PutOp(("tmp",), "k", {"v": 4}, ttl=2)])
    assert 110 < seconds_left(memory_of(server, ns, "tmp/k")) <= 120
    store.batch([PutOp(("tmp",), "k", {"v": 5}, ttl=2), PutOp(("tmp",), "k", {"v": 6})])
    assert memory_of(server, ns, "tmp/k").expires_at is None


def test_ttl_config_sets_a_default_ttl_and_whether_reads_refresh(
    server: ThreadServer, ns: str
) -> None:
    config: TTLConfig = {"default_ttl": 0.05, "refresh_on_read": False}
    with HindsightStore(server.url, api_key=ADMIN_KEY, namespace=ns, ttl_config=config) as store:
        assert store.ttl_config == config
        store.put(("tmp",), "default", {"v": 1})
        assert 0 < seconds_left(memory_of(server, ns, "tmp/default")) <= 3
        asyncio.run(store.aput(("tmp",), "async", {"v": 2}))
        assert 0 < seconds_left(memory_of(server, ns, "tmp/async")) <= 3
        store.put(("tmp",), "never", {"v": 3}, ttl=None)  # None, given, is no expiry
        assert memory_of(server, ns, "tmp/never").expires_at is None
        store.put(("tmp",), "longer", {"v": 4}, ttl=10)

        expire_soon(server, ns, "tmp/longer")
        assert store.get(("tmp",), "longer") is not None  # refresh_on_read False: unchanged
        assert seconds_left(memory_of(server, ns, "tmp/longer")) <= 8
        assert asyncio.run(store.aget(("tmp",), "longer", refresh_ttl=True)) is not None
        assert seconds_left(memory_of(server, ns, "tmp/longer")) > 590

        wait_until(
            lambda: [i.key for i in store.search(("tmp",))] == ["never", "longer"],
            "the items with the default ttl expire",
            30,
        )


def test_the_example_agent_remembers_across_runs(server: ThreadServer, ns: str) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "langgraph_memory.py"
    env = {**os.environ, "HINDSIGHT_URL": server.url, "HINDSIGHT_API_KEY": ADMIN_KEY,
           "HINDSIGHT_NAMESPACE": ns}  # fmt: skip

    def run(user: str, message: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, str(example), user, message],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    assert run("alice", "Where do I live?") == ["I don't know that yet.", "0 facts about alice: "]
    assert run("alice", "I live in Oslo") == ["Noted: home = Oslo.", "1 facts about alice: home"]
    assert run("alice", "I like sailing") == [
        "Noted: likes = sailing.",
        "2 facts about alice: home, likes",
    ]
    reply, facts = run("alice", "Where do I live?")
    assert reply.startswith('From memory: "I live in Oslo" (score ') and facts.endswith(
        "home, likes"
    )
    assert run("bob", "Where do I live?")[0] == "I don't know that yet."
