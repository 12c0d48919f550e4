"""Key roles over REST: reader < writer < curator < admin, and 403s that name the role."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from hindsight.db import migrate
from hindsight.db.pool import open_pool
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.services.auth import KeyService
from hindsight.services.roles import Role
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer


def make_key(url: str, role: Role, namespaces: list[str] | None) -> str:
    async def go() -> str:
        pool = await open_pool(make_settings(), url)
        try:
            key, _ = await KeyService(pool).create(
                f"{role.value}-{uuid.uuid4().hex[:8]}", namespaces=namespaces, role=role
            )
        finally:
            await pool.close()
        return key

    return asyncio.run(go())


@pytest.fixture
def as_role(server: ThreadServer, migrated: str, ns: str) -> Iterator[dict[Role, Api]]:
    apis = {
        role: Api.at(server.url, ns, make_key(migrated, role, None if role is Role.ADMIN else [ns]))
        for role in Role
    }
    yield apis
    for a in apis.values():
        a.client.close()


def refused(r: httpx.Response, role: str) -> None:
    assert r.status_code == 403, r.text
    assert f"needs the {role} role" in r.json()["error"]["message"], r.text


def test_reader_reads_and_recalls_but_writes_nothing(as_role: dict[Role, Api]) -> None:
    admin, reader = as_role[Role.ADMIN], as_role[Role.READER]
    (m,) = admin.observe({"key": "user.city", "value": "Oslo"})
    assert reader.client.get(f"{reader.base}/memories").status_code == 200
    assert reader.get(m["id"])["value"] == "Oslo"
    assert reader.history(m["id"])
    assert reader.recall("city")["results"]
    r = reader.client.post(f"{reader.base}/memories", json={"key": "user.city", "value": "Rome"})
    refused(r, "writer")
    refused(reader.client.delete(f"{reader.base}/memories/{m['id']}"), "writer")
    refused(reader.client.post(f"{reader.base}/sessions/s/steps", json={"content": "x"}), "writer")
    assert reader.client.get(f"{reader.base}/sessions/s/steps").status_code == 200
    assert admin.get(m["id"])["value"] == "Oslo"
    me = reader.client.get("/v1/whoami").json()
    assert me["role"] == "reader" and me["is_admin"] is False


def test_writer_observes_but_only_a_curator_vouches(as_role: dict[Role, Api]) -> None:
    writer, curator = as_role[Role.WRITER], as_role[Role.CURATOR]
    (m,) = writer.observe({"key": "user.city", "value": "Oslo", "confidence": 0.3})
    assert m["outcome"] == "created"
    for extra, needs in (
        ({"verified": True}, "verified"),
        ({"permanent": True}, "permanent"),
        ({"confidence": 0.99}, "confidence above"),
    ):
        r = writer.client.post(
            f"{writer.base}/memories:batch",
            json={
                "memories": [
                    {"key": "user.pet", "value": "cat"},
                    {"key": "b", "value": "v", **extra},
                ]
            },
        )
        refused(r, "curator")
        assert (
            needs in r.json()["error"]["message"] and "memories[1]" in r.json()["error"]["message"]
        )
        r = writer.client.patch(f"{writer.base}/memories/{m['id']}", json=extra)
        refused(r, "curator")
    # nothing of the refused batches was stored, nothing of the refused edits applied
    keys = [x["key"] for x in writer.client.get(f"{writer.base}/memories").json()["memories"]]
    assert keys == ["user.city"]
    assert writer.get(m["id"])["verified"] is False
    # a writer still edits plain fields, and lowers confidence
    r = writer.client.patch(f"{writer.base}/memories/{m['id']}", json={"confidence": 0.2})
    assert r.status_code == 200, r.text

    r = curator.client.patch(
        f"{curator.base}/memories/{m['id']}", json={"verified": True, "confidence": 0.95}
    )
    assert r.status_code == 200 and r.json()["verified"] is True, r.text
    (p,) = curator.observe({"key": "user.name", "value": "Ada", "permanent": True})
    assert curator.get(p["id"])["permanent"] is True
    # namespace-wide operations are an admin's
    refused(curator.client.delete(curator.base), "admin")
    refused(curator.client.get(f"{curator.base}:export"), "admin")
    assert curator.get(p["id"])["value"] == "Ada"


def test_the_policy_is_a_curators_and_feedback_and_popping_steps_a_writers(
    as_role: dict[Role, Api],
) -> None:
    reader, writer, curator = as_role[Role.READER], as_role[Role.WRITER], as_role[Role.CURATOR]
    harsh = {"capacity": {"max_active_memories": 1}}
    assert reader.client.get(f"{reader.base}/policy").status_code == 200
    refused(reader.client.put(f"{reader.base}/policy", json=harsh), "curator")
    refused(writer.client.put(f"{writer.base}/policy", json=harsh), "curator")
    r = reader.client.get(f"{reader.base}/policy").json()
    assert r["capacity"]["max_active_memories"] != 1  # nothing changed
    r = curator.client.put(f"{curator.base}/policy", json=harsh)
    assert r.status_code == 200 and r.json()["capacity"]["max_active_memories"] == 1, r.text

    writer.append("s", "first step")
    refused(reader.client.delete(f"{reader.base}/sessions/s/steps:last"), "writer")
    assert [s["content"] for s in reader.steps("s")] == ["first step"]
    r = writer.client.delete(f"{writer.base}/sessions/s/steps:last")
    assert r.status_code == 200 and r.json()["content"] == "first step", r.text

    writer.observe({"key": "user.city", "value": "Oslo"})
    hit = reader.recall("city")
    feedback = {"used": [hit["results"][0]["id"]]}
    url = f"/recalls/{hit['recall_id']}/feedback"
    refused(reader.client.post(reader.base + url, json=feedback), "writer")
    assert writer.client.post(writer.base + url, json=feedback).status_code == 200


def test_scope_still_applies_whatever_the_role(as_role: dict[Role, Api]) -> None:
    curator = as_role[Role.CURATOR]
    r = curator.client.get(f"{curator.base}-other/memories")
    assert r.status_code == 403 and "may not use namespace" in r.json()["error"]["message"]


def test_keys_create_needs_a_scope_and_takes_a_role(
    server: ThreadServer, migrated: str, ns: str
) -> None:
    name = f"cur-{ns}"
    none = hindsight("keys", "create", name, "--role", "curator", database_url=migrated)
    assert none.returncode != 0 and "--all-namespaces" in none.stderr
    made = hindsight(
        "keys", "create", name, "--role", "curator", "--namespace", ns, database_url=migrated
    )
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    me = httpx.get(f"{server.url}/v1/whoami", headers={"Authorization": f"Bearer {key}"}).json()
    assert me["role"] == "curator" and me["namespaces"] == [ns]
    listed = hindsight("keys", "list", database_url=migrated)
    assert any(name in line and "curator" in line for line in listed.stdout.splitlines())
    bad = hindsight(
        "keys", "create", "y", "--role", "boss", "--all-namespaces", database_url=migrated
    )
    assert bad.returncode != 0 and "boss" in bad.stderr


def test_existing_keys_keep_what_they_could_do(empty_db: str) -> None:
    config = migrate.alembic_config(
        empty_db, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
    )
    migrate.upgrade(config, "0004")
    with psycopg.connect(empty_db, autocommit=True) as conn:
        for name, namespaces, admin in (
            ("root", None, True),
            ("agent", ["a"], False),
            ("unscoped", None, False),
        ):
            conn.execute(
                "INSERT INTO api_keys (id, name, key_hash, key_prefix, namespaces, is_admin) "
                "VALUES (%s, %s, %s, 'hs_', %s, %s)",
                (uuid.uuid4(), name, name.encode(), namespaces, admin),
            )
        migrate.upgrade(config)
        rows = conn.execute("SELECT name, role, namespaces FROM api_keys ORDER BY name").fetchall()
        assert rows == [
            ("agent", "writer", ["a"]),
            ("root", "admin", None),
            ("unscoped", "writer", None),
        ]
        migrate.downgrade(config, "0004")
        rows = conn.execute("SELECT name, is_admin FROM api_keys ORDER BY name").fetchall()
        assert rows == [("agent", False), ("root", True), ("unscoped", False)]
