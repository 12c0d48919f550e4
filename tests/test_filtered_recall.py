"""A filter that admits few memories of a large namespace: recall finds every one of them,
and the counts it decides by stay exact through every kind of write.

A large namespace (more than HINDSIGHT_EXACT_SEARCH_MAX_ROWS memories) is searched through
HNSW, where a filter is checked on the rows the walk meets; recall now counts what the
filter admits first and scores those rows exactly when they are few (stores/narrowing.py).
tests/test_plan_shape.py checks that no statement then reads rows in proportion to the
namespace; here, what a client sees.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from tests.conftest import Api, make_settings
from tests.support.copies import copies_drift
from tests.support.labels import label_drift
from tests.support.servers import ThreadServer

EXACT_MAX = 20  # namespaces above this go through HNSW
LONG_AGO = datetime(2001, 3, 1, tzinfo=UTC)
WORDS = [
    "river",
    "stone",
    "cloud",
    "lamp",
    "garden",
    "window",
    "paper",
    "engine",
    "violin",
    "harbor",
]


@pytest.fixture(scope="module")
def server(module_db: str, redis_url: str) -> Iterator[ThreadServer]:
    settings = make_settings(exact_search_max_rows=EXACT_MAX)
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


@pytest.fixture
def api(server: ThreadServer) -> Iterator[Api]:
    api = Api.at(server.url, "t-" + uuid.uuid4().hex[:16])
    yield api
    api.client.close()


def crowd(n: int) -> list[dict[str, Any]]:
    """Memories nobody filters for: facts tagged work or home."""
    return [
        {
            "key": f"crowd.{i}",
            "value": f"{WORDS[i % 10]} {WORDS[(i * 7) % 10]} note number {i} about the trip",
            "tags": ["work" if i % 2 else "home"],
        }
        for i in range(n)
    ]


def few() -> list[dict[str, Any]]:
    """Events of a trip in March 2001, each tagged trip (and half of them photo)."""
    return [
        {
            "key": f"trip.{i}",
            "value": f"day {i} of the journey, {WORDS[i]} and {WORDS[i + 1]}",
            "memory_type": "event",
            "tags": ["trip", "photo"] if i % 2 else ["trip"],
            "occurred_at": (LONG_AGO + timedelta(days=i)).isoformat(),
        }
        for i in range(6)
    ]


def observe_all(api: Api, memories: list[dict[str, Any]]) -> None:
    for start in range(0, len(memories), 100):
        api.observe(*memories[start : start + 100])


def patch(api: Api, key: str, change: dict[str, Any]) -> None:
    """Change the live memory under `key` through the API."""
    (memory,) = api.client.get(f"{api.base}/memories", params={"key": key}).json()["memories"]
    r = api.client.patch(f"{api.base}/memories/{memory['id']}", json=change)
    assert r.status_code == 200, r.text


def keys(body: dict[str, Any]) -> set[str]:
    return {hit["key"] for hit in body["results"]}


def test_a_filter_admitting_few_memories_of_a_large_namespace_finds_every_one(api: Api) -> None:
    observe_all(api, crowd(300) + few())
    trip = {f"trip.{i}" for i in range(6)}
    # a query the crowd matches better than the trip does, by words and by vector
    query = "note about the trip"
    assert keys(api.recall(query, k=10)) & trip == set()
    assert keys(api.recall(query, k=10, tags=["trip"])) == trip
    assert keys(api.recall(query, k=10, tags_any=["trip", "nothing-has-this"])) == trip
    assert keys(api.recall(query, k=10, memory_types=["event"])) == trip
    assert keys(api.recall(query, k=10, tags=["trip", "photo"])) == {"trip.1", "trip.3", "trip.5"}
    window = {
        "occurred_after": LONG_AGO.isoformat(),
        "occurred_before": (LONG_AGO + timedelta(days=30)).isoformat(),
    }
    assert keys(api.recall(query, k=10, **window)) == trip
    # the window with a filter of its own: both hold
    assert keys(api.recall(query, k=10, **window, tags=["photo"])) == {"trip.1", "trip.3", "trip.5"}
    # a filter that admits nothing answers nothing, and a created window that admits all
    # of them (more than the limit) still finds the crowd
    assert api.recall(query, k=10, memory_types=["summary"])["results"] == []
    everything = api.recall(query, k=10, created_after=LONG_AGO.isoformat(), tags=["work"])
    assert len(everything["results"]) == 10
    assert all(hit["key"].startswith("crowd.") for hit in everything["results"])


def test_a_high_min_confidence_in_a_large_namespace_finds_every_memory_it_admits(
    api: Api, module_db: str
) -> None:
    """min_confidence is counted from the counts per confidence bucket (migration 0037), or
    through memory_facets (0036, 0038) when they cannot tell, and the few it admits are read
    from there: a memory reinforced past the bound is found, one edited
    below it or archived is not (the copy follows each). That they are scored exactly, where
    the HNSW walk would miss some, tests/test_plan_shape.py checks."""
    sure = [
        {"key": f"sure.{i}", "value": f"{WORDS[i]} {WORDS[i + 1]} on the trip", "confidence": 0.95}
        for i in range(5)
    ]
    observe_all(api, crowd(300) + sure)
    query = "note about the trip"
    expected = {m["key"] for m in sure}
    assert keys(api.recall(query, k=10, min_confidence=0.9)) == expected
    # reinforced four times from 0.5, a crowd memory reaches 0.9
    for _ in range(4):
        api.observe(crowd(300)[7])
    assert keys(api.recall(query, k=10, min_confidence=0.9)) == expected | {"crowd.7"}
    patch(api, "sure.0", {"confidence": 0.6})
    patch(api, "sure.1", {"status": "archived"})
    left = expected - {"sure.0", "sure.1"} | {"crowd.7"}
    assert keys(api.recall(query, k=10, min_confidence=0.9)) == left
    assert keys(api.recall(query, k=10, min_confidence=0.9, tags=["work"])) == {"crowd.7"}
    # within the crowd's bucket (0.5-0.55), which the counts per bucket cannot split
    assert keys(api.recall(query, k=10, min_confidence=0.51)) == left | {"sure.0"}  # at 0.6
    assert copies_drift(module_db, api.ns) == []
    assert label_drift(module_db, api.ns) == []


def test_a_high_min_importance_or_a_narrow_observed_window_finds_every_memory_it_admits(
    api: Api, module_db: str
) -> None:
    """min_importance is counted from the counts per importance bucket, observed_* through
    memory_facets' index on the last observation (migration 0038), and the few either admits
    are read from there: the copy follows a patched importance, an archive and a
    reinforcement."""
    vital = [
        {"key": f"vital.{i}", "value": f"{WORDS[i]} {WORDS[i + 1]} on the trip", "importance": 0.95}
        for i in range(5)
    ]
    observe_all(api, crowd(300) + vital)
    query = "note about the trip"
    expected = {m["key"] for m in vital}
    assert keys(api.recall(query, k=10, min_importance=0.9)) == expected
    patch(api, "crowd.7", {"importance": 0.92})
    patch(api, "vital.0", {"importance": 0.6})
    patch(api, "vital.1", {"status": "archived"})
    left = expected - {"vital.0", "vital.1"} | {"crowd.7"}
    assert keys(api.recall(query, k=10, min_importance=0.9)) == left
    assert keys(api.recall(query, k=10, min_importance=0.9, tags=["work"])) == {"crowd.7"}
    # within the crowd's bucket (0.5-0.55), which the counts per bucket cannot split
    assert keys(api.recall(query, k=10, min_importance=0.51)) == left | {"vital.0"}

    # the memories observed since a moment: the two reinforced after it (neither recalled
    # before, which would make observing it again an echo, not an observation)
    since = datetime.now(UTC)
    outcomes = api.observe(crowd(300)[11], crowd(300)[12])
    assert [o["outcome"] for o in outcomes] == ["reinforced", "reinforced"]
    window = {"observed_after": since.isoformat()}
    assert keys(api.recall(query, k=10, **window)) == {"crowd.11", "crowd.12"}
    assert keys(api.recall(query, k=10, **window, tags=["home"])) == {"crowd.12"}
    before = {"observed_before": since.isoformat(), "tags": ["work"]}
    assert len(api.recall(query, k=10, **before)["results"]) == 10  # most of the crowd
    assert copies_drift(module_db, api.ns) == []
    assert label_drift(module_db, api.ns) == []


def test_label_counts_stay_exact_through_every_write(api: Api, module_db: str) -> None:
    def check() -> None:
        assert label_drift(module_db, api.ns) == []
        assert copies_drift(module_db, api.ns) == []

    created = api.observe(
        {"key": "a", "value": "alpha", "tags": ["x"]},
        {"key": "b", "value": "beta", "tags": ["x", "y"], "memory_type": "event"},
        {"key": "c", "value": "gamma"},
    )
    ids = {r["key"]: r["id"] for r in created}
    check()
    # reinforced with another tag (the tags merge), then superseded with a new value
    api.observe({"key": "a", "value": "alpha", "tags": ["z"]})
    api.observe({"key": "c", "value": "gamma two", "tags": ["x"]})
    check()
    r = api.client.patch(
        f"{api.base}/memories/{ids['b']}", json={"tags": ["y"], "memory_type": "fact"}
    )
    assert r.status_code == 200, r.text
    check()
    # a confidence or importance moved to another bucket (0.05 wide), to the top one and
    # within one
    for value in (0.93, 1.0, 0.5, 0.52):
        for facet in ("confidence", "importance"):
            r = api.client.patch(f"{api.base}/memories/{ids['c']}", json={facet: value})
            assert r.status_code == 200, r.text
            check()
    r = api.client.patch(f"{api.base}/memories/{ids['a']}", json={"status": "archived"})
    assert r.status_code == 200, r.text
    check()
    r = api.client.patch(f"{api.base}/memories/{ids['a']}", json={"status": "active"})
    assert r.status_code == 200, r.text
    check()
    assert api.client.delete(f"{api.base}/memories/{ids['b']}").status_code == 204
    check()
    assert api.client.delete(f"/v1/namespaces/{api.ns}").status_code in (200, 204)
    with psycopg.connect(module_db) as conn:
        left = conn.execute(
            "SELECT count(*) FROM keyword_stats WHERE namespace = %s", (api.ns,)
        ).fetchone()
    assert left == (0,)
