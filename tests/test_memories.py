"""Long-term memory over REST: observe, reinforce, supersede, read, list, edit, delete."""

from __future__ import annotations

import threading

import httpx
import psycopg
import pytest

from tests.conftest import Api


def test_observe_creates_then_reinforces_with_exact_confidence(api: Api) -> None:
    (first,) = api.observe({"key": "user.color", "value": "blue"}, expect=201)
    assert first["outcome"] == "created"
    assert first["confidence"] == 0.5
    assert first["observation_count"] == 1
    for expected in (0.6, 0.7, 0.8, 0.9, 1.0, 1.0):
        (again,) = api.observe({"key": "user.color", "value": "blue"}, expect=200)
        assert again["outcome"] == "reinforced"
        assert again["id"] == first["id"]
        assert again["confidence"] == expected  # exact decimals, capped at 1.0
    assert api.get(first["id"])["observation_count"] == 7


def test_new_value_supersedes_and_history_keeps_the_old_one(api: Api) -> None:
    (a,) = api.observe({"key": "user.city", "value": "Paris", "source": "chat-1"})
    api.observe({"key": "user.city", "value": "Paris"})
    (b,) = api.observe({"key": "user.city", "value": "Berlin", "source": "chat-2"})
    assert b["outcome"] == "superseded"
    assert b["id"] == a["id"]
    assert b["confidence"] == 0.5 and b["observation_count"] == 1
    memory = api.get(a["id"])
    assert memory["value"] == "Berlin" and memory["source"] == "chat-2"

    history = api.history(a["id"])
    assert [h["change"] for h in history] == ["created", "reinforced", "superseded"]
    assert [h["value"] for h in history] == ["Paris", "Paris", "Berlin"]
    assert [h["confidence"] for h in history] == [0.5, 0.6, 0.5]
    assert history[2]["old_value"] == "Paris" and history[2]["old_confidence"] == 0.6
    assert all(h["actor"] == "bootstrap-admin" for h in history)


def test_batch_answers_in_order_and_applies_repeated_keys_in_sequence(api: Api) -> None:
    results = api.observe(
        {"key": "b", "value": "1"},
        {"key": "a", "value": "x"},
        {"key": "b", "value": "1"},
        {"key": "b", "value": "2"},
        {"key": "a", "value": "x"},
    )
    assert [(r["key"], r["outcome"]) for r in results] == [
        ("b", "created"),
        ("a", "created"),
        ("b", "reinforced"),
        ("b", "superseded"),
        ("a", "reinforced"),
    ]
    assert results[2]["confidence"] == 0.6
    assert results[4]["observation_count"] == 2


def test_initial_confidence_and_fields_are_kept(api: Api) -> None:
    (r,) = api.observe(
        {
            "key": "k",
            "value": "v",
            "memory_type": "preference",
            "confidence": 0.8,
            "importance": 0.9,
            "tags": ["b", "a", "a"],
            "metadata": {"x": 1},
            "verified": True,
        }
    )
    m = api.get(r["id"])
    assert m["confidence"] == 0.8 and m["importance"] == 0.9
    assert m["memory_type"] == "preference" and m["tags"] == ["a", "b"]
    assert m["metadata"] == {"x": 1} and m["verified"] is True and m["status"] == "active"
    # a re-observation merges tags and metadata and ignores its own initial confidence
    (again,) = api.observe(
        {"key": "k", "value": "v", "tags": ["c"], "metadata": {"y": 2}, "confidence": 0.1}
    )
    assert again["confidence"] == 0.9
    m = api.get(r["id"])
    assert m["tags"] == ["a", "b", "c"] and m["metadata"] == {"x": 1, "y": 2}


def test_cursor_visits_every_memory_exactly_once_while_others_write(api: Api) -> None:
    api.observe(*({"key": f"k{i:03d}", "value": f"value {i}"} for i in range(120)))
    seen: list[str] = []
    cursor = None
    writer_done = threading.Event()

    def writer() -> None:
        client = httpx.Client(base_url=str(api.client.base_url), headers=api.client.headers)
        for i in range(30):
            client.post(
                f"{api.base}/memories:batch",
                json={
                    "memories": [
                        {"key": f"late{i}", "value": "x"},
                        {"key": f"k{i:03d}", "value": f"value {i}"},
                    ]
                },
            )
        client.close()
        writer_done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    while True:
        params = {"limit": 7, **({"cursor": cursor} if cursor else {})}
        page = api.client.get(f"{api.base}/memories", params=params).json()
        seen.extend(m["key"] for m in page["memories"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    thread.join()
    assert len(seen) == len(set(seen)), "a memory was visited twice"
    assert {f"k{i:03d}" for i in range(120)} <= set(seen)


def test_list_filters(api: Api) -> None:
    api.observe(
        {"key": "p1", "value": "likes tea", "memory_type": "preference", "tags": ["drink"]},
        {"key": "f1", "value": "lives in Oslo", "tags": ["place"]},
        {"key": "f2", "value": "born 1990", "confidence": 0.9},
    )

    def keys(**params: object) -> set[str]:
        r = api.client.get(f"{api.base}/memories", params=params)
        assert r.status_code == 200, r.text
        return {m["key"] for m in r.json()["memories"]}

    assert keys(memory_type="preference") == {"p1"}
    assert keys(tag="place") == {"f1"}
    assert keys(min_confidence=0.8) == {"f2"}
    assert keys(key_prefix="f") == {"f1", "f2"}
    assert keys(key="f2") == {"f2"}


def test_patch_updates_and_is_recorded(api: Api) -> None:
    (r,) = api.observe({"key": "job", "value": "baker"})
    resp = api.client.patch(
        f"{api.base}/memories/{r['id']}", json={"value": "chef", "tags": ["work"]}
    )
    assert resp.status_code == 200, resp.text
    m = resp.json()
    assert m["value"] == "chef" and m["tags"] == ["work"] and m["confidence"] == 0.5
    resp = api.client.patch(
        f"{api.base}/memories/{r['id']}", json={"confidence": 0.95, "status": "archived"}
    )
    assert resp.json()["status"] == "archived"
    changes = [h["change"] for h in api.history(r["id"])]
    assert changes == ["created", "updated", "archived"]
    # archived memories are not listed by default, but can be asked for
    listed = api.client.get(f"{api.base}/memories").json()["memories"]
    assert r["id"] not in {m["id"] for m in listed}
    listed = api.client.get(f"{api.base}/memories", params={"status": "archived"}).json()
    assert [m["id"] for m in listed["memories"]] == [r["id"]]
    # a new observation of the key starts a new active memory beside the archived one
    (fresh,) = api.observe({"key": "job", "value": "chef"})
    assert fresh["outcome"] == "created" and fresh["id"] != r["id"]


def test_patch_refuses_empty_and_conflicting_edits(api: Api) -> None:
    a, _ = api.observe({"key": "a", "value": "1"}, {"key": "b", "value": "2"})
    resp = api.client.patch(f"{api.base}/memories/{a['id']}", json={})
    assert resp.status_code == 422 and "nothing to change" in resp.json()["error"]["message"]
    resp = api.client.patch(f"{api.base}/memories/{a['id']}", json={"key": "b"})
    assert resp.status_code == 422 and "already has" in resp.json()["error"]["message"]
    assert api.get(a["id"])["key"] == "a"


def test_delete_leaves_a_tombstone_without_the_value(api: Api) -> None:
    (r,) = api.observe({"key": "tmp", "value": "gone soon"})
    assert api.client.delete(f"{api.base}/memories/{r['id']}").status_code == 204
    assert api.client.get(f"{api.base}/memories/{r['id']}").status_code == 404
    assert api.client.delete(f"{api.base}/memories/{r['id']}").status_code == 404
    history = api.history(r["id"])
    assert [h["change"] for h in history] == ["created", "deleted"]
    assert [h["value"] for h in history] == [None, None]
    assert history[-1]["key"] == "tmp" and history[-1]["actor"]


def test_nothing_crosses_namespaces(client: httpx.Client, ns: str) -> None:
    a, b = Api(client, ns + "-a"), Api(client, ns + "-b")
    (ra,) = a.observe({"key": "secret", "value": "a's secret"})
    assert client.get(f"{b.base}/memories/{ra['id']}").status_code == 404
    assert client.get(f"{b.base}/memories/{ra['id']}/history").status_code == 404
    assert client.delete(f"{b.base}/memories/{ra['id']}").status_code == 404
    assert all(h["id"] != ra["id"] for h in b.recall("secret")["results"])
    (rb,) = b.observe({"key": "secret", "value": "b's secret"})
    assert rb["outcome"] == "created" and rb["id"] != ra["id"]


@pytest.mark.parametrize("path", ["memories/not-a-uuid", "memories/not-a-uuid/history"])
def test_bad_ids_are_422(api: Api, path: str) -> None:
    r = api.client.get(f"{api.base}/{path}")
    assert r.status_code == 422
    assert "memory_id" in r.json()["error"]["message"]


def test_patch_back_to_active_restores_an_archived_memory(api: Api) -> None:
    (m,) = api.observe({"key": "user.pet", "value": "a cat named Tom"})

    def recalled() -> list[str]:
        return [r["id"] for r in api.recall("cat named Tom", k=5)["results"]]

    assert recalled() == [m["id"]]
    archived = api.client.patch(f"{api.base}/memories/{m['id']}", json={"status": "archived"})
    assert archived.status_code == 200 and archived.json()["status"] == "archived"
    assert recalled() == []
    restored = api.client.patch(f"{api.base}/memories/{m['id']}", json={"status": "active"})
    assert restored.status_code == 200, restored.text
    assert restored.json()["status"] == "active"
    assert (restored.json()["value"], restored.json()["confidence"]) == ("a cat named Tom", 0.5)
    # recalled and listed again, as the same memory
    assert recalled() == [m["id"]]
    listed = api.client.get(f"{api.base}/memories").json()["memories"]
    assert [x["id"] for x in listed] == [m["id"]]
    history = api.history(m["id"])
    assert [h["change"] for h in history] == ["created", "archived", "restored"]
    assert history[-1]["value"] == "a cat named Tom"
    assert history[-1]["actor"] == history[0]["actor"] == "bootstrap-admin"


def test_restoring_beside_a_newer_active_memory_of_the_key_is_refused(api: Api) -> None:
    (m,) = api.observe({"key": "user.pet", "value": "a cat named Tom"})
    api.client.patch(f"{api.base}/memories/{m['id']}", json={"status": "archived"})
    (newer,) = api.observe({"key": "user.pet", "value": "a dog named Rex"})
    assert newer["outcome"] == "created" and newer["id"] != m["id"]
    r = api.client.patch(f"{api.base}/memories/{m['id']}", json={"status": "active"})
    assert r.status_code == 422, r.text
    message = r.json()["error"]["message"]
    assert "already has key 'user.pet'" in message and "archive it first" in message, message
    assert api.get(m["id"])["status"] == "archived"


def test_changes_made_in_psql_are_in_the_history(api: Api, migrated: str) -> None:
    (m,) = api.observe({"key": "user.city", "value": "Oslo"})
    with psycopg.connect(migrated, autocommit=True) as conn:
        (db_user,) = conn.execute("SELECT session_user::text").fetchone() or ("",)
        conn.execute(
            "UPDATE long_term_memory SET mem_value = 'Bergen' WHERE namespace = %s AND id = %s",
            (api.ns, m["id"]),
        )
        history = api.history(m["id"])
        assert [h["change"] for h in history] == ["created", "superseded"]
        edit = history[-1]
        assert (edit["old_value"], edit["new_value"], edit["value"]) == ("Oslo", "Bergen", "Bergen")
        # no service in between: the trigger records the database user as the actor
        assert edit["actor"] == db_user and db_user != history[0]["actor"]
        assert api.get(m["id"])["value"] == "Bergen"

        conn.execute(
            "DELETE FROM long_term_memory WHERE namespace = %s AND id = %s", (api.ns, m["id"])
        )
    assert api.client.get(f"{api.base}/memories/{m['id']}").status_code == 404
    history = api.history(m["id"])
    assert [h["change"] for h in history] == ["created", "superseded", "deleted"]
    tombstone = history[-1]
    assert tombstone["key"] == "user.city" and tombstone["actor"] == db_user
    # a deletion is an erasure, however it is made: no entry keeps the values
    assert all(h["value"] is None and h["old_value"] is None for h in history), history
    assert all(h["new_value"] is None for h in history), history
