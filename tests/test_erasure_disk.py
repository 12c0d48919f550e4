"""Erasure that reaches the disk: after an erase and the documented steps, no file under the
data directory holds the erased namespace's data.

The module starts a PostgreSQL and a Redis of its own, as `hindsight serve` would, so the
whole of their data directories can be searched and no other test's WAL or AOF gets in
the way.
"""

from __future__ import annotations

import json
import os
import stat
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import RedisProcess
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer


class Stack:
    def __init__(self, root: Path, pg: str, redis_url: str, srv: ThreadServer) -> None:
        self.root = root
        self.pg = pg
        self.redis_url = redis_url
        self.srv = srv


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("disk")
    with embedded_postgres(root / "data", owner=True) as pg:
        migrate.upgrade(
            migrate.alembic_config(
                pg, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
            )
        )
        server = RedisProcess(root / "data" / "redis")
        url = server.start()
        try:
            with ThreadServer(make_settings(), pg, url) as srv:
                yield Stack(root / "data", pg, url, srv)
        finally:
            server.stop()


def files_holding(root: Path, needle: str) -> list[str]:
    """`grep -a -r -l needle root`, in Python: every file whose bytes contain it."""
    found = []
    data = needle.encode()
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                if data in path.read_bytes():
                    found.append(str(path.relative_to(root)))
            except OSError:
                pass  # a file removed while walking
    return found


def wait_until_gone(root: Path, needle: str, deadline: float) -> list[str]:
    """Poll until no file holds `needle` or the deadline passes; what still holds it."""
    while True:
        left = files_holding(root, needle)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def write_everywhere(api: Api, canary: str) -> None:
    """The canary through every field a client can send."""
    api.observe(
        {
            "key": f"user.{canary}k",
            "value": f"my code is {canary}v",
            "tags": [f"{canary}t"],
            "metadata": {"note": f"{canary}m"},
            "source": f"chat {canary}s",
        }
    )
    api.observe({"key": "user.code", "value": f"first {canary}v2"})
    api.observe({"key": "user.code", "value": f"second {canary}v3"})  # history holds the first
    r = api.client.post(
        f"{api.base}/sessions/s1/steps",
        json={
            "content": f"looked at {canary}c",
            "metadata": {"tool": f"{canary}sm"},
            "idempotency_key": f"{canary}i",
        },
    )
    assert r.status_code in (200, 201), r.text
    api.append("s2", f"another step {canary}c2")
    api.recall(f"what is {canary}q")


def test_a_canary_is_on_no_disk_after_erase_and_compaction(stack: Stack) -> None:
    canary = f"cnry{uuid.uuid4().hex[:12]}"
    api = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    write_everywhere(api, canary)
    # the writes have reached the files (fsync every second; a checkpoint for the heap)
    r = redis.Redis.from_url(stack.redis_url)
    r.execute_command("BGREWRITEAOF")
    deadline = time.monotonic() + 30
    while int(r.info("persistence")["aof_rewrite_in_progress"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    r.close()
    import psycopg

    with psycopg.connect(stack.pg, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    before = files_holding(stack.root, canary)
    assert any(p.startswith("redis/") for p in before), before
    assert any(p.startswith("postgres/base/") for p in before), before

    started = time.monotonic()
    r2 = api.client.delete(api.base)
    assert r2.status_code == 200, r2.text
    out = hindsight("erase", "--compact", "--yes", database_url=stack.pg, redis_url=stack.redis_url)
    assert out.returncode == 0, out.stderr
    left = wait_until_gone(stack.root, canary, time.monotonic() + 60)
    took = time.monotonic() - started
    print(f"time to forget: {took:.2f}s")
    assert left == [], left
    print(json.dumps({"time_to_forget_seconds": round(took, 2)}))


def test_data_files_are_the_owners_alone(stack: Stack) -> None:
    bad = []
    for path in [stack.root, *stack.root.rglob("*")]:
        if path.is_symlink() or path.is_socket():
            continue
        mode = stat.S_IMODE(os.stat(path).st_mode)
        # as root, PostgreSQL runs as pgserver's own user, who must pass through the root
        passable = path == stack.root and (stack.root / "postgres").stat().st_uid != os.getuid()
        if mode & (0o066 if passable else 0o077):
            bad.append(f"{path.relative_to(stack.root)} {oct(mode)}")
    assert bad == [], "\n".join(bad)
