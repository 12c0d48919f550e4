"""Erasure you can prove: after a delete or a namespace erase, the data is nowhere."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import redis

from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer
from tests.test_consolidation import end


@pytest.fixture(scope="module")
def stack(module_db: str, redis_url: str, brain: FakeOpenAI) -> Iterator[ThreadServer]:
    """A service whose embeddings (with their cache) and LLM are remote."""
    settings = make_settings(
        embedding_base_url=brain.url,
        embedding_model="fake-embed",
        embedding_dimensions=48,
        llm_base_url=brain.url,
        llm_model="fake-chat",
    )
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


def found_in_tables(url: str, needle: str) -> dict[str, int]:
    """Every text, JSON and text-array column of every table, searched for `needle`."""
    hits: dict[str, int] = {}
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND (data_type IN ('text', 'jsonb', 'json', "
            "'character varying') OR (data_type = 'ARRAY' AND udt_name = '_text'))"
        ).fetchall()
        assert len(columns) > 20
        for table, column in columns:
            row = conn.execute(
                f'SELECT count(*) FROM "{table}" WHERE "{column}"::text LIKE %s',
                (f"%{needle}%",),
            ).fetchone()
            if row and row[0]:
                hits[f"{table}.{column}"] = row[0]
    return hits


def rows_of(url: str, namespace: str) -> dict[str, int]:
    """Rows of the namespace in every table that has a namespace column."""
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND column_name = 'namespace'"
        ).fetchall()
        assert len(tables) > 10
        counts = {
            table: conn.execute(
                f'SELECT count(*) FROM "{table}" WHERE namespace = %s', (namespace,)
            ).fetchone()[0]  # type: ignore[index]
            for (table,) in tables
        }
    return {t: n for t, n in counts.items() if n}


def found_in_redis(url: str, needle: str) -> list[str]:
    client = redis.Redis.from_url(url)
    hits = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key).decode()
        if kind == "string":
            values: list[Any] = [client.get(key)]
        elif kind == "list":
            values = client.lrange(key, 0, -1)
        elif kind == "zset":
            values = client.zrange(key, 0, -1)
        elif kind == "hash":
            values = list(client.hgetall(key).values())
        else:
            values = []
        if needle.encode() in key or any(needle.encode() in (v or b"") for v in values):
            hits.append(key.decode())
    client.close()
    return hits


def cached(url: str, text: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM embedding_cache WHERE content_hash = %s",
            (hashlib.sha256(text.encode()).digest(),),
        ).fetchone()
    return bool(row and row[0])


def test_delete_leaves_a_tombstone_and_no_value(stack: ThreadServer, module_db: str) -> None:
    canary = f"canary-{uuid.uuid4().hex[:12]}"
    api = Api.at(stack.url, "t-" + uuid.uuid4().hex[:12])
    (m,) = api.observe({"key": "user.boat", "value": f"old {canary}"})
    api.observe({"key": "user.boat", "value": f"new {canary}"})  # the old value is in history
    api.observe({"key": "user.car", "value": "a green van"})
    assert api.recall("boat")["results"][0]["value"] == f"new {canary}"
    assert cached(module_db, f"user.boat: new {canary}")
    # another namespace holds the car's exact text: the shared cache entry goes with the
    # erased memory, and that namespace's memory keeps working from its own vector
    other = Api.at(stack.url, api.ns + "-b")
    other.observe({"key": "user.car", "value": "a green van"})
    (car,) = [
        x
        for x in api.client.get(f"{api.base}/memories").json()["memories"]
        if x["key"] == "user.car"
    ]

    assert api.client.delete(f"{api.base}/memories/{m['id']}").status_code == 204
    assert api.client.delete(f"{api.base}/memories/{car['id']}").status_code == 204

    history = api.history(m["id"])
    assert [h["change"] for h in history] == ["created", "superseded", "deleted"]
    assert all(h["old_value"] is None and h["new_value"] is None for h in history)
    tombstone = history[-1]
    assert tombstone["key"] == "user.boat" and tombstone["actor"] == "bootstrap-admin"
    assert tombstone["changed_at"]
    assert found_in_tables(module_db, canary) == {}
    assert not cached(module_db, f"user.boat: new {canary}")
    assert not cached(module_db, f"user.boat: old {canary}")
    assert not cached(module_db, "user.car: a green van")
    assert other.recall("green van")["results"][0]["key"] == "user.car"
    # the recall is still on record, without the value
    logged = api.client.get(f"{api.base}/recalls/{api.recall('boat')['recall_id']}")
    assert logged.status_code == 200


def test_a_deleted_memorys_source_goes_with_it(stack: ThreadServer, module_db: str) -> None:
    """A source label can name a person or a conversation: the tombstone keeps the id, key,
    type, time and actor only, and the history before it loses the source too."""
    canary = f"canary-{uuid.uuid4().hex[:12]}"
    api = Api.at(stack.url, "t-" + uuid.uuid4().hex[:12])
    (m,) = api.observe({"key": "user.boat", "value": "a yawl", "source": f"chat {canary}"})
    api.observe({"key": "user.boat", "value": "a ketch", "source": f"mail {canary}"})
    api.recall("boat")
    assert found_in_tables(module_db, canary) != {}
    assert api.client.delete(f"{api.base}/memories/{m['id']}").status_code == 204
    history = api.history(m["id"])
    assert [h["change"] for h in history] == ["created", "superseded", "deleted"]
    assert all(h["source"] is None for h in history), history
    assert found_in_tables(module_db, canary) == {}


def test_a_canary_through_every_path_is_nowhere_after_erase(
    stack: ThreadServer, module_db: str, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    canary = f"canary{uuid.uuid4().hex[:12]}"
    api = Api.at(stack.url, "t-" + uuid.uuid4().hex[:12])
    keep = Api.at(stack.url, api.ns + "-keep")
    keep.observe({"key": "user.city", "value": "Oslo"})

    # observe and supersede
    api.observe({"key": "user.code", "value": f"first {canary}"})
    api.observe({"key": "user.code", "value": f"second {canary}"})
    # working memory: steps and a summary
    api.append("s1", f"looked at {canary} closely")
    r = api.client.patch(f"{api.base}/sessions/s1/steps/0", json={"summary": f"saw {canary}"})
    assert r.status_code == 200, r.text
    # recall: the query and the logged results, and feedback on what it returned
    recalled = api.recall(f"what is {canary}")
    r = api.client.post(
        f"{api.base}/recalls/{recalled['recall_id']}/feedback",
        json={"used": [recalled["results"][0]["id"]]},
    )
    assert r.status_code == 200, r.text
    # the namespace's own policy
    r = api.client.put(f"{api.base}/policy", json={"capacity": {"max_active_memories": 500}})
    assert r.status_code == 200, r.text
    # extraction (the fake LLM turns "my X is Y" into user.X = Y)
    r = api.client.post(
        f"{api.base}/memories:extract",
        json={"messages": [{"role": "user", "content": f"My pet is {canary}"}]},
    )
    assert r.status_code == 200 and r.json()["memories"], r.text
    # consolidation: a memory, and a dropped candidate whose value the job result lists
    api.append("s2", f"my boat is {canary}")
    api.append("s2", f"trivia: {canary} floats")
    job = end(api, "s2")
    assert job["status"] == "succeeded", job
    assert canary in str(job["result"])

    before = found_in_tables(module_db, canary)
    assert {
        "long_term_memory.mem_value",
        "memory_history.old_value",
        "recall_log.query",
        "recall_log.results",
        "working_memory.content",
        "working_memory.summary",
        "consolidation_jobs.result",
    } <= set(before), before
    assert found_in_redis(redis_url, canary)

    r = api.client.delete(api.base + "-never-used")
    assert r.status_code == 200 and r.json()["total"] == 0, r.text

    r = api.client.delete(api.base)
    assert r.status_code == 200, r.text
    receipt = r.json()
    assert receipt["namespace"] == api.ns
    pg = receipt["postgres"]
    # created + superseded (user.code), created (user.pet, user.boat)
    assert pg["long_term_memory"] == 3 and pg["memory_history"] == 4
    assert pg["working_memory"] == 3 and pg["working_sessions"] == 2
    assert pg["recall_log"] >= 1 and pg["consolidation_jobs"] >= 1
    assert pg["embedding_cache"] >= 1 and receipt["redis"]["keys"] >= 1

    assert found_in_tables(module_db, canary) == {}
    assert rows_of(module_db, api.ns) == {}
    assert found_in_redis(redis_url, canary) == []
    assert not [r.getMessage() for r in caplog.records if canary in r.getMessage()]
    assert any("erased namespace" in r.getMessage() for r in caplog.records)
    # the namespace is empty, its neighbour untouched
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []
    assert keep.recall("city")["results"][0]["value"] == "Oslo"


def test_erase_from_the_cli(server: ThreadServer, migrated: str, redis_url: str, api: Api) -> None:
    from tests.support.cli import hindsight

    api.observe({"key": "user.city", "value": "Oslo"})
    api.append("s", "a step")
    out = hindsight(
        "erase", "--namespace", api.ns, "--yes", database_url=migrated, redis_url=redis_url
    )
    assert out.returncode == 0, out.stderr
    receipt = json.loads(out.stdout)
    assert receipt["postgres"]["long_term_memory"] == 1
    assert receipt["postgres"]["working_memory"] == 1
    assert receipt["redis"]["configured"] is True
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []
    assert api.steps("s") == []
