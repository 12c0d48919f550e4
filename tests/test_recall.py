"""Recall: relevance × confidence × log(access), explained, logged and counted."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from pgvector import HalfVector

from hindsight.db.pool import open_pool
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import query_terms, weighted_query_terms
from hindsight.retrieval.searched import searched
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter
from hindsight.text.conversation import Turn
from tests.conftest import Api, make_settings
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer


def test_every_result_explains_its_score(api: Api) -> None:
    api.observe(
        {"key": "user.pet", "value": "has a dog named Rex", "confidence": 0.9},
        {"key": "user.car", "value": "drives a red Volvo"},
        {"key": "user.food", "value": "loves sushi and ramen", "confidence": 0.3},
    )
    body = api.recall("what is the name of the user's dog?", k=3)
    assert body["recall_id"]
    results = body["results"]
    assert results[0]["key"] == "user.pet"
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    for r in results:
        c = r["components"]
        w = c["keyword_weight"]
        assert w == 0.7  # the built-in embedder's default
        assert c["relevance"] == pytest.approx(
            (1 - w) * max(c["similarity"], 0) + w * c["keyword"], abs=1e-5
        )
        assert c["access_boost"] == pytest.approx(
            min(1 + 0.1 * math.log1p(c["access_count"]), c["access_boost_max"])
        )
        assert c["specificity_factor"] == pytest.approx(c["specificity"], abs=1e-5)
        assert 0 < c["specificity"] <= 1
        assert r["score"] == pytest.approx(
            c["relevance"]
            * c["confidence"]
            * c["access_boost"]
            * c["specificity_factor"]
            * c["trust_factor"],
            rel=1e-5,
        )
        assert c["confidence"] == r["confidence"]


def test_higher_confidence_wins_at_equal_similarity(api: Api) -> None:
    low, high = api.observe(
        {"key": "note.1", "value": "the backup runs at midnight", "confidence": 0.4},
        {"key": "note.2", "value": "the backup runs at midnight", "confidence": 0.9},
    )
    results = api.recall("when does the backup run", k=2)["results"]
    a, b = results
    assert a["components"]["relevance"] == pytest.approx(b["components"]["relevance"], rel=0.02)
    assert [r["id"] for r in results] == [high["id"], low["id"]]


def test_more_accesses_win_at_equal_similarity_and_confidence(api: Api) -> None:
    popular, quiet = api.observe(
        {"key": "fact.1", "value": "the office wifi password is hunter2", "tags": ["p"]},
        {"key": "fact.2", "value": "the office wifi password is hunter2", "tags": ["q"]},
    )
    for _ in range(8):
        hits = api.recall("wifi password", k=1, tags=["p"])["results"]
        assert [h["id"] for h in hits] == [popular["id"]]
    wait_until(lambda: api.get(popular["id"])["access_count"] == 8, "8 accesses counted")
    results = api.recall("office wifi password", k=2)["results"]
    assert [r["id"] for r in results] == [popular["id"], quiet["id"]]
    top = results[0]["components"]
    assert top["access_count"] == 8
    # 1 + 0.1·ln 9 = 1.22, held to the ceiling: enough to pass an equally relevant twin
    assert top["access_boost"] == pytest.approx(min(1 + 0.1 * math.log(9), 1.05))
    assert top["access_boost_max"] == 1.05
    assert top["relevance"] == pytest.approx(results[1]["components"]["relevance"], rel=0.02)


def test_recall_raises_access_count_and_last_accessed(api: Api) -> None:
    (m,) = api.observe({"key": "k", "value": "the sky is blue"})
    assert api.get(m["id"])["last_accessed"] is None
    before = datetime.now(UTC)
    hits = api.recall("sky colour", k=5)["results"]
    assert hits[0]["components"]["access_count"] == 0  # what the score used
    wait_until(lambda: api.get(m["id"])["access_count"] == 1, "the access counted")
    last = datetime.fromisoformat(api.get(m["id"])["last_accessed"])
    assert last >= before.replace(microsecond=0)


def test_each_recall_is_logged_with_its_scores(api: Api) -> None:
    api.observe({"key": "lang", "value": "speaks Norwegian"})
    body = api.recall("which language", k=3, memory_types=["fact"])
    r = api.client.get(f"{api.base}/recalls/{body['recall_id']}")
    assert r.status_code == 200, r.text
    log = r.json()
    assert log["query"] == "which language" and log["k"] == 3
    assert log["filters"] == {"memory_types": ["fact"]}
    assert [x["id"] for x in log["results"]] == [x["id"] for x in body["results"]]
    assert (
        log["results"][0]["components"]["similarity"]
        == body["results"][0]["components"]["similarity"]
    )
    assert log["actor"] == "bootstrap-admin"
    other = api.client.get(f"/v1/namespaces/{api.ns}-other/recalls/{body['recall_id']}")
    assert other.status_code == 404


def test_keyword_arm_finds_rare_terms(api: Api) -> None:
    api.observe(
        *(
            {"key": f"filler.{i}", "value": f"ordinary note number {i} about work"}
            for i in range(40)
        )
    )
    api.observe({"key": "router", "value": "the Zyxel router sits in the hallway closet"})
    results = api.recall("zyxel", k=3)["results"]
    assert results[0]["key"] == "router"
    c = results[0]["components"]
    assert c["keyword"] > 0.9 and c["keyword_rank"] == 1
    assert all(r["components"]["keyword"] == 0 for r in results[1:])


def test_filters(api: Api) -> None:
    api.observe(
        {
            "key": "a",
            "value": "coffee in the morning",
            "memory_type": "preference",
            "tags": ["food", "morning"],
        },
        {"key": "b", "value": "coffee beans from Kenya", "tags": ["food"], "confidence": 0.9},
        {"key": "c", "value": "coffee machine is broken", "memory_type": "experience"},
    )
    cut = datetime.now(UTC)
    time.sleep(0.01)
    api.observe({"key": "d", "value": "coffee with oat milk", "memory_type": "preference"})

    def keys(**filters: object) -> set[str]:
        return {r["key"] for r in api.recall("coffee", k=10, **filters)["results"]}

    assert keys() == {"a", "b", "c", "d"}
    assert keys(memory_types=["preference"]) == {"a", "d"}
    assert keys(memory_types=["preference", "experience"]) == {"a", "c", "d"}
    assert keys(tags=["food", "morning"]) == {"a"}
    assert keys(tags_any=["morning", "nothing"]) == {"a"}
    assert keys(min_confidence=0.8) == {"b"}
    assert keys(created_after=cut.isoformat()) == {"d"}
    assert keys(created_before=cut.isoformat()) == {"a", "b", "c"}
    assert keys(min_relevance=0.99) == set()


def test_archived_and_deleted_memories_are_not_recalled(api: Api) -> None:
    a, b = api.observe(
        {"key": "x", "value": "purple elephant"}, {"key": "y", "value": "purple giraffe"}
    )
    api.client.patch(f"{api.base}/memories/{a['id']}", json={"status": "archived"})
    api.client.delete(f"{api.base}/memories/{b['id']}")
    assert api.recall("purple", k=5)["results"] == []


@pytest.fixture(scope="module", params=[3000, 10], ids=["postings", "common-words"])
def hnsw_server(
    migrated: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[ThreadServer]:
    """A server that never takes the exact path, so recall goes through the indexes: the
    keyword arm reads posting lists, or (budget 10) finds every word too common for them
    and reads the memories that hold the rarest ones together, at most 10."""
    settings = make_settings(exact_search_max_rows=0, keyword_postings_budget=request.param)
    with ThreadServer(settings, migrated, redis_url) as srv:
        yield srv


def test_hnsw_path_matches_exact_path(api: Api, hnsw_server: ThreadServer) -> None:
    topics = ["garden", "taxes", "guitar", "holiday", "kitchen", "football", "printer", "cat"]
    api.observe(
        *(
            {"key": f"{t}.{i}", "value": f"{t} note {i}: something about the {t} and item {i * 7}"}
            for t in topics
            for i in range(25)
        )
    )
    other = Api.at(hnsw_server.url, api.ns)
    for query in ("guitar strings", "the cat and the printer", "item 49"):
        exact = api.recall(query, k=5)["results"]
        approx = other.recall(query, k=5)["results"]
        assert [r["key"] for r in approx] == [r["key"] for r in exact], query
        # (scores differ: the first recall raised the access counts the second one sees)
        assert [r["components"]["relevance"] for r in approx] == pytest.approx(
            [r["components"]["relevance"] for r in exact]
        )
    filtered = other.recall("guitar", k=5, tags=["none"])["results"]
    assert filtered == []


@pytest.fixture(scope="module")
def postings_server(migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    """Large-namespace recall with the default postings budget."""
    with ThreadServer(make_settings(exact_search_max_rows=0), migrated, redis_url) as srv:
        yield srv


def test_a_rare_word_finds_its_memory_among_many_similar_ones(
    api: Api, postings_server: ThreadServer
) -> None:
    # Forty memories look like the query to the vector arm; only the keyword arm, which
    # weighs the rare word, can bring up the one that mentions it.
    api.observe(
        *({"key": f"ferry.{i}", "value": f"ferry timetable note {i}"} for i in range(40)),
        {"key": "trip", "value": "booked a trip to Zanzibar in May"},
    )
    other = Api.at(postings_server.url, api.ns)
    for client in (api, other):
        results = client.recall("zanzibar ferry timetable", k=5)["results"]
        hit = next((r for r in results if r["key"] == "trip"), None)
        assert hit is not None, [r["key"] for r in results]
        assert hit["components"]["keyword"] > 0.5


def test_common_words_find_the_memories_that_hold_them_together(api: Api, migrated: str) -> None:
    # Every word of the query is in more memories than the postings budget allows reading,
    # so the keyword arm of a large namespace reads the memories that hold its rarest words
    # together: those best match it, and there are few of them. At most the budget: the
    # rest of such a set would cost reads in proportion to the namespace.
    # Another namespace's memories holding the same words, written first, come first in
    # the posting lists: they must not take this namespace's share.
    Api(api.client, api.ns + "-other").observe(
        *({"key": f"o.{i}", "value": f"harbour lights far away {i}"} for i in range(30))
    )
    api.observe(
        *({"key": f"harbour.{i}", "value": f"harbour note {i}"} for i in range(25)),
        *({"key": f"lights.{i}", "value": f"lights note {i}"} for i in range(30)),
        *({"key": f"both.{i}", "value": f"harbour lights seen {i}"} for i in range(12)),
    )
    query = "the harbour lights"
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))

    async def keyword_arm(budget: int) -> list[str]:
        pool = await open_pool(make_settings(), migrated, search=True)
        try:
            search = search_store.Search(
                api.ns, vector, terms, counts, MemoryFilter(), 20, 0, budget
            )
            async with pool.connection() as conn:
                rows = await search_store.arm_candidates(conn, search, "keyword")
        finally:
            await pool.close()
        return [r["key"] for r in rows]

    found = asyncio.run(keyword_arm(10))
    assert len(found) == 10 and all(k.startswith("both.") for k in found), found
    # with a budget that holds both words' postings (37 and 42), they are read as usual:
    # the memories holding both, then the rarer word's
    found = sorted(asyncio.run(keyword_arm(100)), key=lambda k: not k.startswith("both."))
    assert [k.split(".")[0] for k in found] == ["both"] * 12 + ["harbour"] * 8, found


def test_a_conversation_reads_the_postings_its_latest_turn_weighs_most(
    api: Api, migrated: str
) -> None:
    # In a large namespace the keyword arm reads postings up to a budget. A conversation's
    # terms weigh by their turns, so it reads first the terms that weigh most for the
    # postings they cost: the word the user asks about now (12 memories), before a rarer
    # word an older assistant turn said in passing (10), when only one of them fits.
    api.observe(
        *({"key": f"violin.{i}", "value": f"violin recital {i}"} for i in range(10)),
        *({"key": f"cello.{i}", "value": f"cello practice {i}"} for i in range(12)),
        *({"key": f"misc.{i}", "value": f"weather report {i}"} for i in range(80)),
    )
    search = searched(
        "how is the cello coming along?",
        (Turn("user", "we talked about music"), Turn("assistant", "you once mentioned a violin")),
        True,
    )
    terms, counts = weighted_query_terms(search.parts)

    async def keyword_arm() -> list[str]:
        pool = await open_pool(make_settings(), migrated, search=True)
        try:
            arm = search_store.Search(
                api.ns, None, terms, counts, MemoryFilter(), 20, 0, 12, True, True
            )
            async with pool.connection() as conn:
                rows = await search_store.arm_candidates(conn, arm, "keyword")
        finally:
            await pool.close()
        return sorted(r["key"] for r in rows)

    assert asyncio.run(keyword_arm()) == sorted(f"cello.{i}" for i in range(12))


def test_validation_of_recall_input(api: Api) -> None:
    cases = [
        ({"query": ""}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "memory_types": ["gossip"]}, "memory_types[0]"),
        ({"query": "x", "min_confidence": 2}, "min_confidence"),
        ({"query": "x", "created_after": "2026-01-01T00:00:00"}, "created_after"),
        (
            {
                "query": "x",
                "created_after": "2026-02-01T00:00:00Z",
                "created_before": "2026-01-01T00:00:00Z",
            },
            "created_after",
        ),
        ({"query": "x", "colour": "red"}, "colour"),
    ]
    for body, field in cases:
        r = api.client.post(f"{api.base}/recall", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["message"].startswith(field), (body, r.json())


def test_two_hops_follow_the_best_hit(api: Api) -> None:
    api.observe(
        {"key": "user.sister", "value": "Alex's sister is Maria Lopez", "memory_type": "relation"},
        {"key": "person.maria_lopez.city", "value": "Maria Lopez lives in Lyon"},
        *(
            {"key": f"person.p{i}.city", "value": f"Person {i} lives in city number {i}"}
            for i in range(30)
        ),
    )
    question = "which city does my sister live in"
    one = [r["key"] for r in api.recall(question, k=3)["results"]]
    assert one[0] == "user.sister" and "person.maria_lopez.city" not in one
    two = api.recall(question, k=3, hops=2)["results"]
    assert [r["key"] for r in two[:2]] == ["user.sister", "person.maria_lopez.city"]
    second = two[1]["components"]
    assert second["hop"] == 2 and second["via"] == two[0]["id"]
    assert two[1]["score"] <= two[0]["score"] * 0.9 + 1e-9
    assert two[0]["components"]["hop"] is None


def test_a_small_namespace_beside_a_big_one_is_not_read_by_scanning_the_table(
    fresh_db: str, redis_url: str
) -> None:
    """The search pool plans recall's statements once, for any namespace. That plan must
    not read the whole table for a small namespace because the first namespaces it was
    used for were big (at 1M memories: 0.7 s instead of 1 ms)."""
    import asyncio

    import psycopg
    from pgvector import HalfVector

    from hindsight.db.pool import open_pool
    from hindsight.embeddings.builtin import BuiltinEmbedder
    from hindsight.retrieval.keywords import query_terms
    from hindsight.stores import search as search_store
    from hindsight.stores.filters import MemoryFilter

    settings = make_settings(exact_search_max_rows=200)
    with ThreadServer(settings, fresh_db, redis_url) as srv:
        Api.at(srv.url, "big").observe(
            *({"key": f"k{i}", "value": f"note {i} on the harbour crane"} for i in range(600))
        )
        with psycopg.connect(fresh_db, autocommit=True) as conn:
            conn.execute("ANALYZE long_term_memory")  # one namespace, as far as it knows
        Api.at(srv.url, "tiny").observe({"key": "k", "value": "the crane in the harbour"})

    def search(namespace: str) -> search_store.Search:
        terms, counts = query_terms("harbour crane")
        vector = HalfVector(BuiltinEmbedder().embed_one("harbour crane"))
        return search_store.Search(namespace, vector, terms, counts, MemoryFilter(), 20, 200, 3000)

    async def scans_of_tiny(arm: str) -> tuple[int, int]:
        pool = await open_pool(settings, fresh_db, search=True)
        try:
            async with pool.connection() as conn:
                for _ in range(8):  # prepared after 5, then planned once for all
                    assert await search_store.arm_candidates(conn, search("big"), arm)
                async with conn.transaction():
                    found = await search_store.arm_candidates(conn, search("tiny"), arm)
                    cur = await conn.execute(
                        "SELECT seq_scan FROM pg_stat_xact_user_tables "
                        "WHERE relname = 'long_term_memory'"
                    )
                    row = await cur.fetchone()
            return len(found), row["seq_scan"] if row else -1
        finally:
            await pool.close()

    for arm in ("vector", "keyword"):
        assert asyncio.run(scans_of_tiny(arm)) == (1, 0), arm


# --- the fusion options and observation window of docs/concepts.md, over REST ----------

COFFEE = (
    {"key": "drink.morning", "value": "coffee beans from Kenya, ground fresh every morning"},
    {"key": "drink.kenya", "value": "Kenya coffee beans are bright and fruity"},
    {"key": "drink.machine", "value": "the espresso machine needs descaling"},
    {"key": "drink.tea", "value": "green tea in the afternoon"},
    {"key": "trip.nairobi", "value": "flew to Nairobi in March"},
)


def test_rrf_fusion_ranks_by_each_arms_rank(api: Api) -> None:
    api.observe(*COFFEE)
    rrf_k = 60  # RankingConfig.rrf_k

    def rrf(c: dict[str, Any], w: float) -> float:
        total = 0.0
        if c["vector_rank"] is not None:
            total += (1 - w) / (rrf_k + c["vector_rank"])
        if c["keyword_rank"] is not None:
            total += w / (rrf_k + c["keyword_rank"])
        return total * (rrf_k + 1)  # first in both arms is 1

    for extra, w in [({}, 0.7), ({"keyword_weight": 0.4}, 0.4)]:
        results = api.recall("Kenya coffee beans", k=5, fusion="rrf", **extra)["results"]
        assert len(results) >= 3
        assert {r["components"]["fusion"] for r in results} == {"rrf"}
        for r in results:
            c = r["components"]
            assert c["relevance"] == pytest.approx(rrf(c, w), abs=2e-6), (w, r["key"], c)
            assert r["score"] == pytest.approx(
                c["relevance"]
                * c["confidence"]
                * c["access_boost"]
                * c["specificity_factor"]
                * c["trust_factor"],
                rel=1e-5,
            )
        # some result was found by one arm only, so the formula's missing-arm case ran
        assert any(r["components"]["keyword_rank"] is None for r in results), results
        # first in both arms is relevance 1, whatever the similarity
        top = next(r for r in results if r["key"] == "drink.kenya")
        assert (top["components"]["vector_rank"], top["components"]["keyword_rank"]) == (1, 1)
        assert top["components"]["relevance"] == pytest.approx(1.0)
    # without `fusion`, recall fuses linearly
    assert {r["components"]["fusion"] for r in api.recall("coffee")["results"]} == {"linear"}


def test_keyword_weight_sets_the_linear_mix(api: Api) -> None:
    api.observe(*COFFEE)
    for w in (0.0, 0.9, 1.0):
        results = api.recall("Kenya coffee beans", k=5, keyword_weight=w)["results"]
        assert results
        for r in results:
            c = r["components"]
            assert c["fusion"] == "linear"
            assert c["relevance"] == pytest.approx(
                (1 - w) * max(c["similarity"], 0) + w * c["keyword"], abs=2e-6
            ), (w, r["key"], c)
        if w == 1.0:  # keywords alone: what shares no term with the query is not relevant
            assert all(r["components"]["keyword"] > 0 for r in results)
    # the weight really is the one passed: 0.9 and the default 0.4 give different relevance
    # wherever similarity and keyword differ
    heavy = {
        r["key"]: r["components"]
        for r in api.recall("Kenya coffee beans", k=5, keyword_weight=0.9)["results"]
    }
    default = {r["key"]: r["components"] for r in api.recall("Kenya coffee beans", k=5)["results"]}
    differing = [
        key
        for key in heavy.keys() & default.keys()
        if abs(heavy[key]["keyword"] - max(heavy[key]["similarity"], 0)) > 0.05
    ]
    assert differing
    for key in differing:
        assert heavy[key]["relevance"] != pytest.approx(default[key]["relevance"], abs=1e-3)
    r = api.client.post(f"{api.base}/recall", json={"query": "x", "keyword_weight": 1.5})
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("keyword_weight")


def test_observed_window_filters_by_last_observation(api: Api, migrated: str) -> None:
    old, middle, new = api.observe(
        {"key": "note.old", "value": "parking note: level 1"},
        {"key": "note.middle", "value": "parking note: level 2"},
        {"key": "note.new", "value": "parking note: level 3"},
    )
    now = datetime.now(UTC)
    seen = {old["id"]: now - timedelta(hours=3), middle["id"]: now - timedelta(hours=2)}
    seen[new["id"]] = now - timedelta(hours=1)
    with psycopg.connect(migrated, autocommit=True) as conn:
        for memory_id, when in seen.items():
            conn.execute(
                "UPDATE long_term_memory SET last_observed = %s WHERE namespace = %s AND id = %s",
                (when, api.ns, memory_id),
            )

    def keys(**window: datetime) -> set[str]:
        body = {name: when.isoformat() for name, when in window.items()}
        return {r["key"] for r in api.recall("parking note", k=10, **body)["results"]}

    assert keys() == {"note.old", "note.middle", "note.new"}
    h = timedelta(hours=1)
    assert keys(observed_after=now - 2.5 * h) == {"note.middle", "note.new"}
    assert keys(observed_before=now - 2.5 * h) == {"note.old"}
    assert keys(observed_after=now - 2.5 * h, observed_before=now - 1.5 * h) == {"note.middle"}
    assert keys(observed_after=now - 0.5 * h) == set()
    # a re-observation moves a memory into a later window (one with a source that saw it:
    # this key just had it from recall, so without one it would be an echo)
    api.observe({"key": "note.old", "value": "parking note: level 1", "source": "user"})
    assert keys(observed_after=now - 0.5 * h) == {"note.old"}

    # an inverted window (or an empty one) is refused, naming the field
    for after, before in [(now, now - h), (now, now)]:
        r = api.client.post(
            f"{api.base}/recall",
            json={
                "query": "parking note",
                "observed_after": after.isoformat(),
                "observed_before": before.isoformat(),
            },
        )
        assert r.status_code == 422, r.text
        assert (
            r.json()["error"]["message"] == "observed_after: must be earlier than observed_before"
        )
    # a time without a zone is ambiguous
    r = api.client.post(
        f"{api.base}/recall", json={"query": "x", "observed_before": "2026-01-01T00:00:00"}
    )
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("observed_before")
