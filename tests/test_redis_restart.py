"""A Redis killed with SIGKILL and restarted from an append-only file that lacks its last
writes: the hot copy it comes back with is contiguous but stale, and must never be served."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from hindsight.runtime.embedded_redis import RedisProcess
from hindsight.stores.hot_steps import HotSteps
from hindsight.stores.hot_steps_scripts import session_key
from tests.conftest import Api, make_settings
from tests.support.servers import ThreadServer


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


class AofSnapshot:
    """The server's append-only file as it is now, to bring back after a crash: what a
    crash that lost the last writes leaves behind, made deterministic."""

    def __init__(self, server: RedisProcess, into: Path) -> None:
        self.server = server
        self.into = into
        self.names = [p.name for p in server.directory.iterdir() if p.name.startswith("appendonly")]
        assert self.names, "no append-only file to snapshot"
        for name in self.names:
            src = server.directory / name
            if src.is_dir():
                shutil.copytree(src, into / name)
            else:
                shutil.copy2(src, into / name)

    def kill(self) -> None:
        """SIGKILL: no SHUTDOWN, no final flush."""
        assert self.server.process is not None
        self.server.process.kill()
        self.server.process.wait()

    def restore_and_start(self) -> None:
        for name in self.names:
            live = self.server.directory / name
            if live.is_dir():
                shutil.rmtree(live)
                shutil.copytree(self.into / name, live)
            else:
                shutil.copy2(self.into / name, live)
        self.server.start()

    def crash_and_restore(self) -> None:
        self.kill()
        self.restore_and_start()


def _step(index: int) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "step_index": index,
        "role": "user",
        "content": f"step {index}",
        "summary": None,
        "metadata": {},
        "idempotency_key": None,
        "created_at": now,
        "expires_at": now + timedelta(hours=1),
    }


def test_a_restart_with_no_failed_call_in_between_is_noticed(
    own_redis: RedisProcess, tmp_path: Path, migrated: str, ns: str
) -> None:
    """redis-py reconnects and retries by itself, so the service may see no error at all."""
    with ThreadServer(make_settings(), migrated, own_redis.url) as srv:
        api = Api.at(srv.url, ns)
        for i in range(3):
            api.append("s", f"step {i}")
        snapshot = AofSnapshot(own_redis, tmp_path)
        api.append("s", "step 3")
        snapshot.crash_and_restore()
        # the restarted Redis holds steps 0-2: contiguous, from the session's first step
        assert redis.Redis.from_url(own_redis.url).zcard(session_key(ns, "s")) == 3
        assert [s["content"] for s in api.steps("s", recent=10)] == [f"step {i}" for i in range(4)]


def test_a_restart_after_a_failed_call_is_noticed(
    own_redis: RedisProcess, tmp_path: Path, ns: str
) -> None:
    """A call that fails while Redis is down must not make the process forget which
    server it talked to (it used to clear the run id it compares against)."""

    async def scenario() -> None:
        hot = HotSteps(own_redis.url, keep=50, pause_seconds=0.05)
        try:
            for i in range(3):
                await hot.appended(ns, "s", _step(i))
            assert [s["step_index"] for s in await hot.recent(ns, "s", 10) or []] == [0, 1, 2]
            snapshot = AofSnapshot(own_redis, tmp_path)
            await hot.appended(ns, "s", _step(3))
            snapshot.kill()
            assert await hot.recent(ns, "s", 10) is None  # down: the caller uses Postgres
            snapshot.restore_and_start()
            stale = redis.Redis.from_url(own_redis.url)
            assert stale.zcard(session_key(ns, "s")) == 3
            # well past the breaker's pause, no read may return the three stale steps
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                got = await hot.recent(ns, "s", 10)
                assert got is None, [s["step_index"] for s in got]
                await asyncio.sleep(0.02)
            assert stale.exists(session_key(ns, "s")) == 0  # dropped, not just skipped
            # and the cache works again afterwards
            await hot.appended(ns, "s", _step(0))
            assert [s["step_index"] for s in await hot.recent(ns, "s", 10) or []] == [0]
        finally:
            await hot.aclose()

    asyncio.run(scenario())
