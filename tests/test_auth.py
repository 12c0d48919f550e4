"""Every /v1 call needs a key; keys are stored hashed and scoped to namespaces."""

from __future__ import annotations

import time

import httpx
import psycopg

from tests.conftest import Api
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer


def test_missing_or_wrong_key_is_401(server: ThreadServer, ns: str) -> None:
    url = f"{server.url}/v1/namespaces/{ns}/memories"
    r = httpx.get(url)
    assert r.status_code == 401
    assert "Authorization" in r.json()["error"]["message"]
    assert httpx.get(url, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Basic abc"}).status_code == 401
    r = httpx.post(
        f"{server.url}/v1/namespaces/{ns}/memories:batch",
        json={"memories": [{"key": "k", "value": "v"}]},
    )
    assert r.status_code == 401
    # probes and docs stay open
    assert httpx.get(f"{server.url}/healthz").status_code == 200
    assert httpx.get(f"{server.url}/openapi.json").status_code == 200


def test_scoped_key_from_the_cli(server: ThreadServer, migrated: str, ns: str) -> None:
    name = f"agent-{ns}"
    made = hindsight("keys", "create", name, "--namespace", ns, database_url=migrated)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("hs_") and len(key) > 40

    with psycopg.connect(migrated) as conn:
        stored = conn.execute(
            "SELECT key_hash, key_prefix FROM api_keys WHERE name = %s", (name,)
        ).fetchone()
    assert stored is not None and key.encode() not in bytes(stored[0])
    assert stored[1] == key[:10]

    client = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"})
    mine = Api(client, ns)
    (m,) = mine.observe({"key": "k", "value": "v"})
    assert mine.history(m["id"])[0]["actor"] == name
    other = client.get(f"/v1/namespaces/{ns}-other/memories")
    assert other.status_code == 403 and ns in other.json()["error"]["message"]
    assert client.post(f"/v1/namespaces/{ns}-other/recall", json={"query": "k"}).status_code == 403

    listed = hindsight("keys", "list", database_url=migrated)
    assert name in listed.stdout and key not in listed.stdout

    revoked = hindsight("keys", "revoke", name, database_url=migrated)
    assert revoked.returncode == 0, revoked.stderr
    deadline = time.monotonic() + 10
    while client.get(f"/v1/namespaces/{ns}/memories").status_code != 401:
        assert time.monotonic() < deadline, "a revoked key kept working"
        time.sleep(0.2)

    again = hindsight("keys", "create", name, "--all-namespaces", database_url=migrated)
    assert again.returncode != 0 and "exists" in again.stderr
    bad = hindsight("keys", "create", "x", "--namespace", "no spaces", database_url=migrated)
    assert bad.returncode != 0 and "namespace" in bad.stderr
