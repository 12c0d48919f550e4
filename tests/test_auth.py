"""Every /v1 call needs a key; keys are stored hashed and scoped to namespaces."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from hindsight.db.pool import open_pool
from hindsight.errors import RateLimited, Unauthorized
from hindsight.services.auth import CACHE_SECONDS, Authenticator, KeyService, new_key
from hindsight.services.roles import Role
from tests.conftest import ADMIN_KEY, Api, make_settings
from tests.support.cli import hindsight
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer, free_port


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
    # the first request for the schema builds it: seconds on a busy machine
    assert httpx.get(f"{server.url}/openapi.json", timeout=30).status_code == 200


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
    wait_until(
        lambda: client.get(f"/v1/namespaces/{ns}/memories").status_code == 401,
        "a revoked key to be refused",
        10,
        interval=0.2,
    )

    again = hindsight("keys", "create", name, "--all-namespaces", database_url=migrated)
    assert again.returncode != 0 and "exists" in again.stderr
    bad = hindsight("keys", "create", "x", "--namespace", "no spaces", database_url=migrated)
    assert bad.returncode != 0 and "namespace" in bad.stderr


def test_an_admin_key_for_some_namespaces_is_refused(migrated: str, ns: str) -> None:
    """An admin key reaches every namespace: one 'for nsA' was printed as such and listed
    with nsA, yet reached them all. The combination is refused and no key is made."""
    name = f"admin-{ns}"
    made = hindsight("keys", "create", name, "--role", "admin", "--namespace", ns,
                     database_url=migrated)  # fmt: skip
    assert made.returncode != 0, made.stdout
    assert "admin" in made.stderr and "--all-namespaces" in made.stderr, made.stderr
    listed = hindsight("keys", "list", database_url=migrated)
    assert name not in listed.stdout
    made = hindsight("keys", "create", name, "--role", "admin", "--all-namespaces",
                     database_url=migrated)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "for every namespace" in made.stderr


def test_an_authorization_header_that_is_not_utf8_is_401(server: ThreadServer, ns: str) -> None:
    for path in (f"/v1/namespaces/{ns}/memories", "/mcp"):
        r = httpx.request(
            "GET" if path.startswith("/v1") else "POST",
            server.url + path,
            headers=[(b"Authorization", b"Bearer \xff\xfe\xfa")],
        )
        assert r.status_code == 401, (path, r.text)
        assert "malformed API key" in r.json()["error"]["message"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def authenticator(
    url: str, **options: Any
) -> AsyncIterator[tuple[Authenticator, Clock, KeyService]]:
    clock = Clock()
    pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=4), url)
    try:
        yield Authenticator(pool, ADMIN_KEY, clock=clock, **options), clock, KeyService(pool)
    finally:
        await pool.close()


def test_a_token_that_cannot_be_a_key_is_refused_without_a_database_lookup() -> None:
    """With PostgreSQL unreachable, only a well-formed key needs it (503); anything else is
    refused at once (401) — it never queues for a connection."""

    async def go() -> None:
        nowhere = f"postgresql://nobody@127.0.0.1:{free_port()}/none"
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(nowhere, open=False, timeout=0.5)
        await pool.open(wait=False)
        auth = Authenticator(pool, ADMIN_KEY)
        for header in ("Bearer nope", "Bearer " + "x" * 600, "Bearer hs_short", "Bearer a b"):
            with pytest.raises(Unauthorized):
                await auth.authenticate(header)
        assert (await auth.authenticate(f"Bearer {ADMIN_KEY}")).is_admin
        with pytest.raises(PoolTimeout):  # a real key's lookup does reach for the database
            await auth.authenticate("Bearer " + new_key())
        await pool.close(timeout=0)

    asyncio.run(go())


def test_a_flood_of_unknown_keys_does_not_evict_the_keys_in_use(migrated: str) -> None:
    async def go() -> None:
        async with authenticator(migrated) as (auth, clock, keys):
            key, _ = await keys.create(
                f"flood-{uuid.uuid4().hex[:8]}", namespaces=None, role=Role.WRITER
            )
            key_name = (await auth.authenticate(f"Bearer {key}")).name
            # revoked in the database: only a fresh lookup would notice
            await keys.revoke(key_name)
            unknown = [new_key() for _ in range(12_000)]
            for start in range(0, len(unknown), 100):
                results = await asyncio.gather(
                    *(auth.authenticate(f"Bearer {t}") for t in unknown[start : start + 100]),
                    return_exceptions=True,
                )
                assert all(isinstance(r, Unauthorized) for r in results)
            assert (await auth.authenticate(f"Bearer {key}")).name == key_name  # still cached
            clock.now += CACHE_SECONDS + 1
            with pytest.raises(Unauthorized, match="revoked"):
                await auth.authenticate(f"Bearer {key}")

    asyncio.run(go())


def test_rate_limits_per_key_and_per_client_address(migrated: str) -> None:
    async def go() -> None:
        async with authenticator(migrated, per_key=2, per_client=3) as (auth, clock, _):
            bearer = f"Bearer {ADMIN_KEY}"
            await auth.authenticate(bearer, "10.0.0.1")
            await auth.authenticate(bearer, "10.0.0.2")
            with pytest.raises(RateLimited, match="with this API key") as limited:
                await auth.authenticate(bearer, "10.0.0.3")
            assert limited.value.retry_after == 1
            clock.now += 0.5  # one more request's worth
            await auth.authenticate(bearer, "10.0.0.3")
            # an address is limited before its key is even looked at
            for _ in range(3):
                with pytest.raises(Unauthorized):
                    await auth.authenticate("Bearer wrong", "10.0.0.9")
            with pytest.raises(RateLimited, match="from this address"):
                await auth.authenticate("Bearer wrong", "10.0.0.9")
            await auth.authenticate(bearer)  # the app's calls to itself are not limited

    asyncio.run(go())


def test_metrics_are_rate_limited_like_every_other_route(migrated: str, redis_url: str) -> None:
    """/metrics was never counted: a leaked key (or anyone, where it is public) could scrape
    it in a loop."""
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    settings = make_settings(rate_limit_per_key=0.1, rate_limit_per_client=0)
    with ThreadServer(settings, migrated, redis_url) as srv:
        assert httpx.get(f"{srv.url}/metrics", headers=headers).status_code == 200
        r = httpx.get(f"{srv.url}/metrics", headers=headers)
        assert r.status_code == 429, r.text
    public = make_settings(metrics_public=True, rate_limit_per_key=0, rate_limit_per_client=0.1)
    with ThreadServer(public, migrated, redis_url) as srv:
        assert httpx.get(f"{srv.url}/metrics").status_code == 200
        r = httpx.get(f"{srv.url}/metrics")
        assert r.status_code == 429, r.text
        assert r.headers["Retry-After"] == "10"


def test_over_the_limit_is_429_with_retry_after(migrated: str, redis_url: str, ns: str) -> None:
    settings = make_settings(rate_limit_per_key=0.1, rate_limit_per_client=0)
    with ThreadServer(settings, migrated, redis_url) as srv:
        headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
        first = httpx.get(f"{srv.url}/v1/namespaces/{ns}/memories", headers=headers)
        assert first.status_code == 200, first.text
        r = httpx.get(f"{srv.url}/v1/namespaces/{ns}/memories", headers=headers)
        assert r.status_code == 429, r.text
        assert r.headers["Retry-After"] == "10" and r.json()["error"]["code"] == "rate_limited"
        r = httpx.post(f"{srv.url}/mcp", headers=headers, json={})
        assert r.status_code == 429 and r.headers["Retry-After"] == "10"
