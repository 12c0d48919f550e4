"""A new key whose memory is near-identical to an existing one reinforces it instead."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest

from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import document_vector, twin_term_groups
from hindsight.text import memory_text
from hindsight.text.twins import same_words
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.lifecycle import run_pass
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer

VALUE = "takes the 07:42 train from Lysaker to Oslo S every weekday morning"


def similarity(key_a: str, key_b: str) -> float:
    e = BuiltinEmbedder(384)
    return float(
        np.dot(e.embed_one(memory_text(key_a, VALUE)), e.embed_one(memory_text(key_b, VALUE)))
    )


@pytest.fixture(scope="module")
def dedup_server(migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    with ThreadServer(make_settings(dedup_threshold=0.9), migrated, redis_url) as srv:
        yield srv


@pytest.fixture
def dapi(dedup_server: ThreadServer, ns: str) -> Api:
    return Api.at(dedup_server.url, ns)


def test_near_identical_new_key_reinforces_the_existing_memory(dapi: Api) -> None:
    assert similarity("user.commute", "user.commutes") >= 0.9  # the premise
    (first,) = dapi.observe({"key": "user.commute", "value": VALUE})
    (twin,) = dapi.observe({"key": "user.commutes", "value": VALUE})
    assert twin["outcome"] == "reinforced"
    assert twin["id"] == first["id"] and twin["key"] == "user.commute"
    assert twin["requested_key"] == "user.commutes"
    assert twin["similarity"] == pytest.approx(
        similarity("user.commute", "user.commutes"), abs=0.01
    )
    assert twin["confidence"] == 0.6
    keys = [m["key"] for m in dapi.client.get(f"{dapi.base}/memories").json()["memories"]]
    assert keys == ["user.commute"]


def test_other_types_and_dissimilar_values_stay_apart(dapi: Api) -> None:
    dapi.observe({"key": "user.commute", "value": VALUE})
    (other_type,) = dapi.observe(
        {"key": "user.commutes", "value": VALUE, "memory_type": "experience"}
    )
    assert other_type["outcome"] == "created" and other_type["requested_key"] is None
    (different,) = dapi.observe({"key": "user.gym", "value": "goes climbing on Thursdays"})
    assert different["outcome"] == "created"


# 20 distinct words: a twin may lack one of them and still say the same in the same words
LONG = (
    "walks the old collie Biscuit along the fjord path past the bakery, ferry terminal, "
    "harbour lighthouse, fish market and chapel before breakfast on rainy Sundays with Astrid"
)


@pytest.fixture(scope="module")
def large_server(migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    """Every namespace searched as a large one: through the word groups' postings, then HNSW."""
    settings = make_settings(dedup_threshold=0.9, exact_search_max_rows=0)
    with ThreadServer(settings, migrated, redis_url) as srv:
        yield srv


def test_in_a_large_namespace_twins_in_the_same_words_still_fold(
    large_server: ThreadServer, ns: str
) -> None:
    api = Api.at(large_server.url, ns)
    short = LONG.replace(" lighthouse,", "")
    assert same_words(LONG, short)  # the premise: one word of twenty missing
    (first, long_first) = api.observe(
        {"key": "user.commute", "value": VALUE}, {"key": "user.walk", "value": short}
    )
    (twin,) = api.observe({"key": "user.commutes", "value": VALUE})
    assert (twin["outcome"], twin["id"], twin["requested_key"]) == (
        "reinforced",
        first["id"],
        "user.commutes",
    )
    (long_twin,) = api.observe({"key": "user.walks", "value": LONG})
    assert (long_twin["outcome"], long_twin["id"]) == ("reinforced", long_first["id"])
    (other_type,) = api.observe({"key": "user.commuting", "value": VALUE, "memory_type": "event"})
    assert other_type["outcome"] == "created"
    # near in the embedding, not in words (a word more than the twin allows): its own memory
    (apart,) = api.observe({"key": "user.commuted", "value": VALUE + " sometimes"})
    assert apart["outcome"] == "created"


def test_every_twin_in_the_same_words_holds_a_word_group_whole() -> None:
    """The postings filter never drops a claim that has a twin in the same words: whatever
    a twin lacks or adds within what `same_words` allows, one group of the claim's terms is
    among the twin's."""
    words = LONG.replace(",", "").split()
    variants = [LONG, LONG.replace(" lighthouse,", ""), LONG.replace("Astrid", "Astrid today")]
    variants += [" ".join(words[:i] + words[i + 1 :]) for i in range(len(words))]
    variants += [VALUE, VALUE.replace("every", "each"), "跑步对我来说太难了", "跑步对我来说太难"]
    for claim in variants:
        groups = twin_term_groups(claim)
        assert groups
        for twin in variants:
            if not same_words(claim, twin):
                continue
            _, terms = document_vector(memory_text("some.other.key", twin))
            assert any(set(g) <= set(terms) for g in groups), (claim, twin)
    assert twin_term_groups("the a of") is None  # no keyword tokens: no filter


def test_a_known_key_follows_the_usual_rules(dapi: Api) -> None:
    dapi.observe(
        {"key": "user.commute", "value": VALUE},
        {"key": "user.commutes", "value": "cycles to work", "memory_type": "experience"},
    )
    (again,) = dapi.observe(
        {"key": "user.commutes", "value": "cycles to work", "memory_type": "experience"}
    )
    assert again["key"] == "user.commutes" and again["requested_key"] is None


def test_below_the_threshold_keys_stay_apart(api: Api) -> None:
    # the default test server keeps the default 0.95: the same pair stays two memories
    assert similarity("user.commute", "user.commutes") < 0.95
    api.observe({"key": "user.commute", "value": VALUE})
    (second,) = api.observe({"key": "user.commutes", "value": VALUE})
    assert second["outcome"] == "created"


def test_a_twin_deleted_meanwhile_is_not_brought_back(
    dapi: Api, dedup_server: ThreadServer
) -> None:
    """The twin is found, then deleted by another client before the observe writes: the
    new memory goes in under its own key, and the deleted one stays deleted."""
    (first,) = dapi.observe({"key": "user.commute", "value": VALUE})
    result: list[dict[str, object]] = []
    with psycopg.connect(dedup_server.core.database_url) as deleter:
        deleter.execute("DELETE FROM long_term_memory WHERE id = %s", (first["id"],))
        observer = threading.Thread(
            target=lambda: result.extend(dapi.observe({"key": "user.commutes", "value": VALUE}))
        )
        observer.start()
        with psycopg.connect(dedup_server.core.database_url, autocommit=True) as watch:
            wait_until(
                lambda: watch.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = 'hindsight' "
                    "AND wait_event_type = 'Lock'"
                ).fetchone(),
                "the observe to meet the delete's lock",
                30,
            )
        deleter.commit()
        observer.join(30)
    [outcome] = result
    assert (outcome["key"], outcome["outcome"], outcome["requested_key"]) == (
        "user.commutes",
        "created",
        None,
    )
    keys = [m["key"] for m in dapi.client.get(f"{dapi.base}/memories").json()["memories"]]
    assert keys == ["user.commutes"]  # user.commute stays deleted


def blind_to_chinese(text: str) -> str:
    return re.sub(r"[\u4e00-\u9fff]", "", text)


TURNS = [  # Chinese dialogue turns: to a model blind to the script, one and the same
    ("turn.一", "[2023年1月6日] 黄婷：跑步对我来说太难了！"),
    ("turn.二", "[2023年1月6日] 周杰：我懂这周太疯狂了！"),
    ("turn.三", "[2023年1月6日] 黄婷：我们周六领养了一只柯基叫豆豆！"),
]


def test_a_twin_by_an_embedder_blind_to_the_words_is_not_folded(
    fresh_db: str, redis_url: str
) -> None:
    """Folding keeps the twin's value: a fold the embedder alone vouched for (an English
    model reading Chinese) would lose what was said. A twin must share most words too."""
    with FakeOpenAI(dimensions=48, sees=blind_to_chinese) as fake:
        settings = make_settings(
            embedding_base_url=fake.url, embedding_model="fake-embed", embedding_dimensions=48
        )
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "blind")
            for key, value in TURNS:
                (out,) = api.observe({"key": key, "value": value, "memory_type": "experience"})
                assert (out["key"], out["outcome"], out["requested_key"]) == (key, "created", None)
            stored = api.client.get(f"{api.base}/memories").json()["memories"]
            assert {m["key"]: m["value"] for m in stored} == dict(TURNS)
            # the same line from the other speaker shares 0.85 of its words: another turn
            other = Api.at(srv.url, "speakers")
            lines = [TURNS[2], ("turn.四", TURNS[2][1].replace("黄婷", "周杰"))]
            for key, value in lines:
                (out,) = other.observe({"key": key, "value": value, "memory_type": "experience"})
                assert (out["key"], out["outcome"]) == (key, "created")


def test_the_retroactive_merge_asks_for_the_same_words_too(fresh_db: str, redis_url: str) -> None:
    with FakeOpenAI(dimensions=48, sees=blind_to_chinese) as fake:
        settings = make_settings(
            embedding_base_url=fake.url, embedding_model="fake-embed", embedding_dimensions=48
        )
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "blind")
            # one batch: the write-time check compares with stored memories only
            api.observe(
                *[{"key": k, "value": v, "memory_type": "experience"} for k, v in TURNS],
                {"key": "turn.五", "value": TURNS[2][1], "memory_type": "experience"},
            )
            _, moves = run_pass(settings, fresh_db, namespace="blind")
            # to the model every pair is a twin (similarity 1); only the true pair may fold,
            # and every turn's words are still there
            assert {m.key for m in moves if m.rule == "merge"} <= {"turn.三", "turn.五"}
            stored = api.client.get(f"{api.base}/memories").json()["memories"]
            assert {m["value"] for m in stored} == {v for _, v in TURNS}
