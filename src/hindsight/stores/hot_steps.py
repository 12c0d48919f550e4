"""Redis: the hot copy of each session's newest steps.

One sorted set per session (`hs:wm:{namespace:session}`, a Redis Cluster hash tag), scored
by step index, holding the newest steps as JSON and expiring with the session. Postgres has
every step; this copy is trusted only when it is provably complete for the read:
contiguous indexes, and either as many steps as asked for or the session's first step.
Anything else — a gap, a cold key, Redis down — and the read goes to Postgres.

Redis trouble never fails a request. After an error, Redis is skipped for a short pause
(a circuit breaker, so an outage does not add a timeout to every call). Sessions whose
write was lost are remembered and their keys deleted once Redis answers again, so a stale
copy is never served by this process; and if Redis restarts (its run id changes), every
cached session is dropped, since the append-only file may lack its last second of writes.
The last run id seen is kept through errors (only a separate "check" flag is raised), and
every new connection compares it too: redis-py reconnects and retries on its own, so a quick
restart may surface no error at all.

The keys, the step JSON and the Lua scripts live in `hot_steps_scripts`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from hindsight.errors import Unavailable
from hindsight.observability import metrics
from hindsight.stores.hot_steps_scripts import (
    _APPEND,
    _FILL,
    _POP,
    _PREFIX,
    _READ,
    _REPLACE,
    TOMBSTONE_MS,
    _decode,
    _encode,
    _expiry_ms,
    expiry_key,
    session_key,
    tombstone_key,
)

log = logging.getLogger(__name__)


def _run_id_in(info: bytes | str) -> str:
    text = info.decode() if isinstance(info, bytes) else info
    for line in text.splitlines():
        if line.startswith("run_id:"):
            return line.split(":", 1)[1].strip()
    return ""


def connect(url: str, *, cluster: bool, on_connect: Any = None) -> aioredis.Redis | RedisCluster:
    """A client for one server, or for a Redis Cluster reached through any of its nodes.

    Every key of a session shares the `{namespace:session}` hash tag, so each script and
    transaction touches one slot. The cluster client follows MOVED/ASK redirections and
    re-reads the topology after a failover; its retries are few and short, because a
    request waiting on Redis is slower than the same request answered from Postgres.
    """
    if cluster:
        return RedisCluster.from_url(
            url,
            socket_timeout=0.5,
            socket_connect_timeout=0.5,
            max_connections=64,
            retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), retries=2),
        )
    # a standalone server's restart is also seen on every new connection (`on_connect`):
    # redis-py reconnects and retries on its own, so a quick restart may raise nothing
    return aioredis.Redis.from_url(
        url,
        socket_timeout=0.5,
        socket_connect_timeout=0.5,
        max_connections=64,
        redis_connect_func=on_connect,
    )


class HotSteps:
    def __init__(
        self, url: str | None, *, keep: int, pause_seconds: float = 2.0, cluster: bool = False
    ) -> None:
        self._client = (
            connect(url, cluster=cluster, on_connect=None if cluster else self._connected)
            if url
            else None
        )
        self._keep = keep
        self._pause = pause_seconds
        self._skip_until = 0.0
        self._stale: set[str] = set()  # sessions whose cached copy may miss a write
        self._run_id: str | None = None  # the last one seen; kept through errors
        self._check = True  # compare the run id and settle lost writes before the next use
        self._restarts = 0  # restarts noticed by a new connection, to void reads in flight
        self._recovering = asyncio.Lock()
        self._append = self._client.register_script(_APPEND) if self._client else None
        self._replace = self._client.register_script(_REPLACE) if self._client else None
        self._fill = self._client.register_script(_FILL) if self._client else None
        self._read = self._client.register_script(_READ) if self._client else None
        self._pop = self._client.register_script(_POP) if self._client else None

    @property
    def configured(self) -> bool:
        return self._client is not None

    async def _usable(self) -> bool:
        """Whether to talk to Redis now; settles lost writes and restarts first."""
        if self._client is None or time.monotonic() < self._skip_until:
            return False
        if self._stale or self._check:
            if self._recovering.locked():
                return False  # another call is settling it; Postgres meanwhile
            async with self._recovering:
                try:
                    await self._recover()
                except (RedisError, OSError) as exc:
                    self._fail("recover", exc)
                    return False
        return True

    async def _connected(self, conn: Any) -> None:
        """Every new connection: the usual handshake, then a look at the server's run id."""
        await conn.on_connect()
        await conn.send_command("INFO", "server")
        run_id = _run_id_in(await conn.read_response())
        if self._run_id is not None and run_id != self._run_id:
            self._check = True
            self._restarts += 1

    async def _recover(self) -> None:
        assert self._client is not None
        self._check = False  # a restart noticed while this runs raises it again
        run_id = await self._server_run_id()
        if self._run_id is not None and run_id != self._run_id:
            log.warning("Redis restarted (run id changed); dropping every cached session")
            try:
                await self._drop_all()
            except BaseException:
                self._check = True
                raise
        self._run_id = run_id
        while self._stale:
            key = next(iter(self._stale))
            await self._client.unlink(key)
            self._stale.discard(key)

    async def _server_run_id(self) -> str:
        """Changes when the server restarts; in a cluster, when any master is replaced
        (a failover promotes a replica that may lack the last writes its master took)."""
        assert self._client is not None
        if isinstance(self._client, RedisCluster):
            infos = await self._client.info("server", target_nodes=RedisCluster.PRIMARIES)
            return ",".join(sorted(str(info.get("run_id", "")) for info in infos.values()))
        info = await self._client.info("server")
        return str(info.get("run_id", ""))

    async def _drop_all(self) -> None:
        assert self._client is not None
        async for key in self._client.scan_iter(match=_PREFIX + "*", count=1000):
            await self._client.unlink(key)

    def _fail(self, what: str, exc: BaseException, key: str | None = None) -> None:
        metrics.STORE_ERRORS.labels("redis", what).inc()
        if key is not None:
            self._stale.add(key)
        if time.monotonic() >= self._skip_until:
            log.warning("Redis %s failed (%s); serving working memory from Postgres", what, exc)
        self._skip_until = time.monotonic() + self._pause
        self._check = True  # compare the run id once it answers again

    async def appended(self, namespace: str, session_id: str, step: dict[str, Any]) -> None:
        key = session_key(namespace, session_id)
        if not await self._usable():
            if self._client is not None:
                self._stale.add(key)
            return
        assert self._append is not None
        try:
            await self._append(
                keys=[key, tombstone_key(namespace, session_id), expiry_key(namespace, session_id)],
                args=[
                    step["step_index"],
                    _encode(step),
                    _expiry_ms(step),
                    step["expires_at"].isoformat(),
                    self._keep,
                ],
            )
        except (RedisError, OSError) as exc:
            self._fail("append", exc, key)

    async def recent(self, namespace: str, session_id: str, n: int) -> list[dict[str, Any]] | None:
        """The newest `n` steps if the cache provably has them, else None."""
        key = session_key(namespace, session_id)
        if not await self._usable() or key in self._stale:  # settles lost writes first
            return None
        assert self._read is not None
        restarts = self._restarts
        try:
            raw = await self._read(keys=[key, expiry_key(namespace, session_id)], args=[n])
        except (RedisError, OSError) as exc:
            self._fail("read", exc)
            return None
        if self._restarts != restarts:
            return None  # answered by a restarted Redis before its sessions were dropped
        if not raw:
            return None
        expires_at = datetime.fromisoformat(raw[0].decode())
        members = raw[1::2]
        indexes = [int(float(score)) for score in raw[2::2]]
        contiguous = indexes[-1] - indexes[0] + 1 == len(indexes)
        if not contiguous or (len(indexes) < n and indexes[0] != 0):
            return None
        return [_decode(member, expires_at) for member in members]

    async def fill(self, namespace: str, session_id: str, steps: list[dict[str, Any]]) -> None:
        """Warm the cache with steps read from Postgres (ascending, contiguous)."""
        if not steps:
            return
        key = session_key(namespace, session_id)
        if not await self._usable() or key in self._stale:  # settles lost writes first
            return
        assert self._fill is not None
        args: list[Any] = [_expiry_ms(steps[-1]), self._keep, steps[-1]["expires_at"].isoformat()]
        for step in steps[-self._keep :]:
            args.extend([step["step_index"], _encode(step)])
        try:
            await self._fill(
                keys=[key, tombstone_key(namespace, session_id), expiry_key(namespace, session_id)],
                args=args,
            )
        except (RedisError, OSError) as exc:
            self._fail("fill", exc, key)

    async def replaced(self, namespace: str, session_id: str, step: dict[str, Any]) -> None:
        key = session_key(namespace, session_id)
        if not await self._usable():
            if self._client is not None:
                self._stale.add(key)
            return
        assert self._replace is not None
        try:
            await self._replace(keys=[key], args=[step["step_index"], _encode(step)])
        except (RedisError, OSError) as exc:
            self._fail("update", exc, key)

    async def popped(self, namespace: str, session_id: str, step: dict[str, Any]) -> None:
        key = session_key(namespace, session_id)
        if not await self._usable():
            if self._client is not None:
                self._stale.add(key)
            return
        assert self._pop is not None
        try:
            await self._pop(
                keys=[key, tombstone_key(namespace, session_id)],
                args=[step["step_index"], _encode(step), TOMBSTONE_MS],
            )
        except (RedisError, OSError) as exc:
            self._fail("pop", exc, key)

    async def forget(self, namespace: str, session_id: str) -> None:
        key = session_key(namespace, session_id)
        if not await self._usable():
            if self._client is not None:
                self._stale.add(key)
            return
        assert self._client is not None
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.set(tombstone_key(namespace, session_id), 1, px=TOMBSTONE_MS)
                # as one command: a cluster pipeline's own unlink() is not queued
                pipe.execute_command("UNLINK", key, expiry_key(namespace, session_id))
                await pipe.execute()
        except (RedisError, OSError) as exc:
            self._fail("delete", exc, key)

    async def forget_namespace(self, namespace: str) -> int:
        """Unlink every key of the namespace (erasure); how many there were. Raises
        Unavailable when Redis does not answer, so an erasure is never half-reported."""
        if self._client is None:
            return 0
        pattern = f"{_PREFIX}{{{namespace}:*"
        gone = 0
        try:
            async for key in self._client.scan_iter(match=pattern, count=1000):
                gone += int(await self._client.unlink(key))
        except (RedisError, OSError) as exc:
            raise Unavailable(f"Redis is unreachable: {exc}; erase again", retry_after=2) from exc
        return gone

    async def rewrite_aof(self, timeout: float = 30.0) -> bool | None:
        """Rewrite the append-only file and wait for it: until then the erased keys' writes
        and UNLINKs stay on disk in the file's history. True once done; False when it did
        not finish in `timeout` or failed; None when there is nothing this can rewrite (no
        Redis, no AOF, or a cluster, whose nodes rewrite on their own schedule)."""
        if self._client is None or isinstance(self._client, RedisCluster):
            return None
        if not await self._usable():
            return False  # down: its file is rewritten by the next erase or session delete
        try:
            info = await self._client.info("persistence")
            if not int(info.get("aof_enabled", 0)):
                return None
            done_before = int(info.get("aof_rewrites", -1))
            # A rewrite already running may have forked before the erase: its file can
            # still hold the keys. Redis then refuses a second one ("already in
            # progress"), so ours is asked for again once that one has ended.
            asked = await self._ask_rewrite()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                info = await self._client.info("persistence")
                idle = not int(info["aof_rewrite_in_progress"]) and not int(
                    info["aof_rewrite_scheduled"]
                )
                if idle and not asked:
                    asked = await self._ask_rewrite()
                    done_before = int(info.get("aof_rewrites", -1))
                    await asyncio.sleep(0.02)
                    continue
                # `aof_rewrites` (Redis 7) tells ours from one that had ended before
                ours = done_before < 0 or int(info.get("aof_rewrites", 0)) > done_before
                if idle and ours:
                    return info.get("aof_last_bgrewrite_status") == "ok"
                await asyncio.sleep(0.02)
        except (RedisError, OSError) as exc:
            log.warning("Redis AOF rewrite after an erasure failed: %s", exc)
            return False
        log.warning("Redis AOF rewrite after an erasure still running after %.0fs", timeout)
        return False

    async def _ask_rewrite(self) -> bool:
        """BGREWRITEAOF; False when Redis refused it because one is running."""
        assert self._client is not None
        try:
            await self._client.bgrewriteaof()
        except RedisError as exc:
            if "in progress" not in str(exc):
                raise
            return False
        return True

    async def ping(self) -> bool:
        if self._client is None:
            return False
        try:
            return bool(await self._client.ping())
        except (RedisError, OSError):
            return False

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
