"""A new key whose memory is near-identical to an existing one reinforces it instead."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest

from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.services.memory import memory_text
from tests.conftest import Api, make_settings
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
            deadline = time.monotonic() + 30
            while not watch.execute(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'hindsight' "
                "AND wait_event_type = 'Lock'"
            ).fetchone():
                assert time.monotonic() < deadline, "the observe never met the delete's lock"
                time.sleep(0.02)
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
