"""The copies of each memory's columns that recall reads: memory_keywords, the keyword arm's
postings (migration 0035), and memory_facets, the indexes of min_confidence, min_importance
and observed_* (0036, 0038). Each
follows its memory through every write, and recall over them finds what it found over the
memories' own rows."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from hindsight.services.roles import Role
from tests.conftest import Api, make_settings
from tests.support.copies import copies, copies_drift
from tests.support.servers import ThreadServer
from tests.test_roles import make_key


@pytest.fixture
def writer(server: ThreadServer, migrated: str, ns: str) -> Iterator[Api]:
    api = Api.at(server.url, ns, make_key(migrated, Role.WRITER, [ns]))
    yield api
    api.client.close()


def copy_version(url: str, memory_id: str, table: str = "memory_keywords") -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT xmin::text FROM {table} WHERE id = %s", (memory_id,)).fetchone()
    assert row is not None
    return str(row[0])


def test_the_copy_follows_a_memory_through_every_state(
    api: Api, writer: Api, migrated: str
) -> None:
    def check(n: int) -> None:
        assert copies_drift(migrated, api.ns) == []
        assert copies(migrated, api.ns) == n
        assert copies(migrated, api.ns, "memory_facets") == n

    city, otp = api.observe(
        {"key": "user.city", "value": "Alex lives in Perth", "tags": ["home"]},
        {"key": "otp", "value": "one-time code 4411", "ttl_seconds": 3600},
    )
    check(2)
    # a reinforcement changes no column of the keyword copy, which is not written again;
    # it raises the confidence and moves the last observation, whose copy follows
    before = copy_version(migrated, city["id"])
    facets = copy_version(migrated, city["id"], "memory_facets")
    assert api.observe({"key": "user.city", "value": "Alex lives in Perth"})[0]["id"] == city["id"]
    assert copy_version(migrated, city["id"]) == before
    assert copy_version(migrated, city["id"], "memory_facets") != facets
    check(2)
    # new tags change none of the facets: that copy is not written again
    facets = copy_version(migrated, city["id"], "memory_facets")
    r = api.client.patch(f"{api.base}/memories/{city['id']}", json={"tags": ["home", "au"]})
    assert r.status_code == 200, r.text
    assert copy_version(migrated, city["id"], "memory_facets") == facets
    api.observe({"key": "user.city", "value": "Alex moved to Hobart in May"})  # superseded
    check(2)
    for change in (
        {"memory_type": "event"},
        {"confidence": 0.9},
        {"importance": 0.8},
        {"status": "archived"},
        {"status": "active"},
    ):
        r = api.client.patch(f"{api.base}/memories/{city['id']}", json=change)
        assert r.status_code == 200, r.text
        check(2)
    # a contradiction a writer may not settle sends both to review; a curator approves one
    (old,) = api.observe(
        {"key": "user.language", "value": "The user uses Python", "source": "user"}
    )
    (new,) = writer.observe(
        {"key": "user.main_language", "value": "The user mostly uses Go now", "source": "agent"}
    )
    assert new["outcome"] == "quarantined", new
    check(4)
    assert api.client.post(f"{api.base}/memories/{old['id']}:approve").status_code == 200
    check(4)
    assert api.client.delete(f"{api.base}/memories/{otp['id']}").status_code == 204
    check(3)
    assert api.client.delete(f"/v1/namespaces/{api.ns}").status_code in (200, 204)
    check(0)


@pytest.fixture(scope="module")
def large(module_db: str, redis_url: str) -> Iterator[ThreadServer]:
    """A namespace above the exact-search limit: the keyword arm reads posting lists."""
    with ThreadServer(make_settings(exact_search_max_rows=20), module_db, redis_url) as srv:
        Api.at(srv.url, "large").observe(
            *(
                {
                    "key": f"note.{i}",
                    "value": f"note {i} about the garden shed and the river path",
                    "tags": ["odd"] if i % 2 else ["even"],
                }
                for i in range(60)
            ),
            {"key": "boat", "value": "the kayak is stored behind the quokka sculpture"},
        )
        yield srv


def test_recall_of_a_large_namespace_finds_rare_words_through_the_copy(
    large: ThreadServer, module_db: str
) -> None:
    api = Api.at(large.url, "large")
    assert copies_drift(module_db, "large") == []

    def top(**filters: object) -> list[str]:
        return [h["key"] for h in api.recall("where is the quokka", k=3, **filters)["results"]]

    assert top()[0] == "boat"
    assert top(memory_types=["fact"])[0] == "boat"  # read from the copy alone
    assert top(min_importance=0.3)[0] == "boat"  # read from the memories' rows too
    assert "boat" not in top(min_importance=0.9)
    # the postings are probed best first until enough pass: one far down the ranking that
    # passes is still found: a filter each of whose conditions admits too many to narrow
    # by (more than 20: the odd notes, and min_importance 0.9 over the even ones too)
    for i in [7, *range(0, 60, 2)]:
        (note,) = api.client.get(f"{api.base}/memories", params={"key": f"note.{i}"}).json()[
            "memories"
        ]
        r = api.client.patch(f"{api.base}/memories/{note['id']}", json={"importance": 0.95})
        assert r.status_code == 200, r.text
    hits = api.recall("the quokka by the garden shed", k=3, min_importance=0.9, tags=["odd"])[
        "results"
    ]
    assert [h["key"] for h in hits] == ["note.7"]
    assert hits[0]["components"]["keyword_rank"] == 1
    assert "boat" not in top(tags=["odd"])
    (boat,) = api.client.get(f"{api.base}/memories", params={"key": "boat"}).json()["memories"]
    r = api.client.patch(f"{api.base}/memories/{boat['id']}", json={"tags": ["odd"]})
    assert r.status_code == 200, r.text
    assert top(tags=["odd"])[0] == "boat"  # the copy follows the tags
    r = api.client.patch(f"{api.base}/memories/{boat['id']}", json={"status": "archived"})
    assert r.status_code == 200, r.text
    assert "boat" not in top() and "boat" not in top(tags=["odd"])
    r = api.client.patch(f"{api.base}/memories/{boat['id']}", json={"status": "active"})
    assert r.status_code == 200, r.text
    assert top()[0] == "boat"
