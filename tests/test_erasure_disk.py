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
from tests.support.poll import wait_until
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


def wait_until_gone(root: Path, needle: str, timeout: float) -> None:
    """Until no file under `root` holds `needle`; past `timeout`, fail naming the files."""
    wait_until(
        lambda: files_holding(root, needle),
        f"no file under {root} holds the canary",
        timeout,
        accept=lambda left: not left,
        interval=0.1,
    )


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
    # (a rewrite here could hide it: the new base file is RDB, which may compress strings)
    wait_until(lambda: files_holding(stack.root / "redis", canary), "the canary reaches the AOF")
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
    wait_until_gone(stack.root, canary, 60)
    took = time.monotonic() - started
    compacted = json.loads(out.stdout)["compacted"]
    assert compacted["postgres"]["wal_switched"] and compacted["redis"]["aof_rewritten"]
    # quoted in docs/security.md: erase call to canary gone, and the compaction's own share
    print(f"time to forget: {took:.2f}s (compaction {compacted['seconds']:.2f}s)")


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


def redis_dir_forgets(stack: Stack, needle: str) -> None:
    # Redis deletes the replaced AOF files in a background thread, just after the rewrite
    wait_until_gone(stack.root / "redis", needle, 10)


def settle_aof(url: str) -> None:
    """Rewrite the AOF now, so the canary sits in its base file, not only in the tail."""
    client = redis.Redis.from_url(url)
    try:
        before = int(client.info("persistence")["aof_rewrites"])
        client.execute_command("BGREWRITEAOF")
        wait_until(
            lambda: int(client.info("persistence")["aof_rewrites"]) > before,
            "the AOF rewrite finishes",
            30,
        )
    finally:
        client.close()


def test_an_erase_alone_takes_the_namespace_out_of_the_aof(stack: Stack) -> None:
    """No compaction: the erase itself rewrites the AOF before it answers."""
    canary = f"cnry{uuid.uuid4().hex[:12]}"
    api = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    api.client.post(
        f"{api.base}/sessions/s/steps",
        json={
            "content": f"a {canary}c",
            "metadata": {"k": f"{canary}m"},
            "idempotency_key": canary,
        },
    ).raise_for_status()
    settle_aof(stack.redis_url)
    assert files_holding(stack.root / "redis", canary)
    started = time.monotonic()
    r = api.client.delete(api.base)
    assert r.status_code == 200, r.text
    assert r.json()["redis"]["aof_rewritten"] is True
    redis_dir_forgets(stack, canary)
    print(f"AOF forgot in {time.monotonic() - started:.2f}s")


def test_a_session_delete_takes_its_steps_out_of_the_aof(stack: Stack) -> None:
    canary = f"cnry{uuid.uuid4().hex[:12]}"
    api = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    api.append("gone", f"secret step {canary}")
    api.append("kept", "an ordinary step")
    settle_aof(stack.redis_url)
    assert files_holding(stack.root / "redis", canary)
    r = api.client.delete(f"{api.base}/sessions/gone")
    assert r.status_code in (200, 204), r.text
    redis_dir_forgets(stack, canary)
    assert [s["content"] for s in api.steps("kept")] == ["an ordinary step"]


def test_an_erasure_is_recorded_without_values(stack: Stack) -> None:
    import psycopg

    api = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    api.observe({"key": "user.city", "value": "Oslo"})
    r = api.client.delete(api.base)
    assert r.status_code == 200, r.text
    with psycopg.connect(stack.pg) as conn:
        rows = conn.execute(
            "SELECT id, erased_namespace, actor, erased_at FROM namespace_erasures "
            "WHERE erased_namespace = %s",
            (api.ns,),
        ).fetchall()
        columns = [
            c
            for (c,) in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'namespace_erasures' ORDER BY ordinal_position"
            ).fetchall()
        ]
    assert columns == ["id", "erased_namespace", "erased_at", "actor"]
    ((record_id, ns, actor, _),) = rows
    assert (str(record_id), ns, actor) == (r.json()["id"], api.ns, "bootstrap-admin")


def test_an_older_export_is_not_restored_into_an_erased_namespace(
    stack: Stack, tmp_path: Path
) -> None:
    api = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    api.observe({"key": "user.city", "value": "Oslo"})
    out = hindsight("export", "--namespace", api.ns, database_url=stack.pg)
    assert out.returncode == 0, out.stderr
    dump = tmp_path / "old.jsonl"
    dump.write_text(out.stdout)
    assert api.client.delete(api.base).status_code == 200

    refused = hindsight("import", str(dump), database_url=stack.pg)
    assert refused.returncode != 0
    assert "erased" in refused.stderr and "--into-erased" in refused.stderr, refused.stderr
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []

    told = hindsight("import", str(dump), "--into-erased", database_url=stack.pg)
    assert told.returncode == 0, told.stderr
    assert [m["value"] for m in api.client.get(f"{api.base}/memories").json()["memories"]] == [
        "Oslo"
    ]
    # an export made after the erasure restores as usual
    other = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    other.observe({"key": "user.city", "value": "Bergen"})
    assert other.client.delete(other.base).status_code == 200
    other.observe({"key": "user.city", "value": "Tromsø"})
    out = hindsight("export", "--namespace", other.ns, database_url=stack.pg)
    assert other.client.delete(other.base).status_code == 200
    fresh = tmp_path / "new.jsonl"
    fresh.write_text(out.stdout)
    # erased again after this export: refused too
    assert hindsight("import", str(fresh), database_url=stack.pg).returncode != 0


def test_metrics_drop_an_erased_namespaces_series(stack: Stack) -> None:
    from hindsight.observability import metrics

    api = Api.at(stack.srv.url, "t-" + uuid.uuid4().hex[:12])
    api.observe({"key": "user.city", "value": "Oslo"})
    metrics.set_memory_counts([(api.ns, "active", 1), ("t-neighbour", "active", 2)])
    assert f'namespace="{api.ns}"' in metrics.exposition().decode()
    assert api.client.delete(api.base).status_code == 200
    body = api.client.get("/metrics").text
    assert f'namespace="{api.ns}"' not in body
    assert 'namespace="t-neighbour"' in body


def test_redis_files_left_readable_by_others_are_closed_at_start(tmp_path: Path) -> None:
    """A data directory written before modes were set (AOF 0644 in 0755) is fixed."""
    directory = tmp_path / "redis"
    (directory / "appendonlydir").mkdir(parents=True)
    directory.chmod(0o755)
    (directory / "appendonlydir").chmod(0o755)
    old = directory / "redis.log"
    old.write_text("from before\n")
    old.chmod(0o644)
    server = RedisProcess(directory)
    server.start()
    try:
        modes = {
            str(p.relative_to(directory)): stat.S_IMODE(p.stat().st_mode)
            for p in [directory, *directory.rglob("*")]
            if not p.is_socket()
        }
    finally:
        server.stop()
    assert all(not mode & 0o077 for mode in modes.values()), modes
    assert "appendonlydir/appendonly.aof.manifest" in modes
