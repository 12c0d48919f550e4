"""Which server a read goes to: the streaming read replica, or the primary.

Recall's search statements, memory lists and history may read from a replica
(`HINDSIGHT_DATABASE_READ_URL`). A probe samples the primary's WAL position and the
replica's replay position every `probe_interval`; from the samples follows the latest time
up to which the replica is known to hold every commit (`caught_up_to`). A read goes to
the primary instead when

- this process wrote in the read's namespace at or after `caught_up_to`: the caller
  must see its own write (counted as `own_write`);
- the replica is further behind than `max_lag` (`lagging`);
- the replica does not answer, or is no standby (`down`); a read that fails on the
  replica is run again on the primary and counted the same way.

Every choice is counted in `hindsight_read_routes_total` (by target and reason) and each
probe publishes the lag in `hindsight_read_replica_lag_seconds`.

Writes made through another process are not tracked here: they reach this process's
readers within the replica's lag, as they would through any replica.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg
import psycopg_pool
from psycopg_pool import AsyncConnectionPool

from hindsight.background import BackgroundLoop
from hindsight.db.pool import Connection
from hindsight.observability import metrics
from hindsight.stores import replication

log = logging.getLogger(__name__)

T = TypeVar("T")
_MAX_SAMPLES = 10_000
Pool = AsyncConnectionPool[Connection]


class ReadRouter(BackgroundLoop):
    def __init__(
        self,
        primary: Pool,
        primary_search: Pool,
        replica: Pool | None = None,
        replica_search: Pool | None = None,
        *,
        max_lag: float = 5.0,
        probe_interval: float = 0.5,
    ) -> None:
        super().__init__("hindsight-read-replica-probe", self._run)
        self._primary = primary
        self._primary_search = primary_search
        self._replica = replica
        self._replica_search = replica_search
        self._max_lag = max_lag
        self._interval = probe_interval
        self._samples: collections.deque[tuple[float, int]] = collections.deque()
        self._caught_up_to: float | None = None  # monotonic; None: unknown or down
        self._writes: dict[str, float] = {}
        self.counts: collections.Counter[str] = collections.Counter()
        if replica is not None:
            self._publish_lag()  # unknown until the first probe: not a lag of 0

    @property
    def has_replica(self) -> bool:
        return self._replica is not None

    def counters(self) -> dict[str, int]:
        """Reads served by the replica (`replica`) and by the primary instead, by reason
        (`own_write`, `lagging`, `down`): this router's part of the metric's counts."""
        return {k: self.counts[k] for k in ("replica", "own_write", "lagging", "down")}

    @property
    def lag_seconds(self) -> float | None:
        """How far behind the replica is known to be at most; None when it is down."""
        if self._caught_up_to is None:
            return None
        return max(0.0, time.monotonic() - self._caught_up_to)

    def _publish_lag(self) -> None:
        lag = self.lag_seconds
        metrics.READ_REPLICA_LAG.set(math.nan if lag is None else lag)

    def _count(self, reason: str | None) -> None:
        """A read served by the replica (`reason` None) or by the primary, and why."""
        self.counts[reason or "replica"] += 1
        target = "primary" if reason else "replica"
        metrics.READ_ROUTES.labels(target, reason or "caught_up").inc()

    def wrote(self, namespace: str) -> None:
        """Record a committed write in `namespace`: its reads go to the primary until the
        replica has replayed it."""
        if self._replica is not None:
            self._writes[namespace] = time.monotonic()

    def _choose(self, namespace: str) -> str | None:
        """None: the replica may serve the read; else why the primary must."""
        caught_up = self._caught_up_to
        if caught_up is None:
            return "down"
        if time.monotonic() - caught_up > self._max_lag:
            return "lagging"
        written = self._writes.get(namespace)
        if written is not None and written >= caught_up:
            return "own_write"
        return None

    async def read(
        self, namespace: str, work: Callable[[Connection], Awaitable[T]], *, search: bool = False
    ) -> T:
        """Run the read `work` on the replica when it may serve it, else on the primary."""
        primary = self._primary_search if search else self._primary
        replica = self._replica_search if search else self._replica
        reason = "down" if replica is None else self._choose(namespace)
        if replica is not None and reason is None:
            try:
                async with replica.connection() as conn:
                    result = await work(conn)
                self._count(None)
                return result
            except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
                log.warning("read replica failed (%s); reading from the primary", exc)
                self._caught_up_to = None  # until the probe sees it again
                self._publish_lag()
                reason = "down"
        if replica is not None:
            self._count(reason)
        async with primary.connection() as conn:
            return await work(conn)

    async def _probe(self) -> None:
        assert self._replica is not None
        sampled_at = time.monotonic()  # before the query: its position covers this instant
        async with self._primary.connection() as conn:
            position = await replication.primary_position(conn)
        self._samples.append((sampled_at, position))
        async with self._replica.connection(timeout=max(1.0, self._interval * 2)) as conn:
            replayed = await replication.replayed_position(conn)
        if replayed is None:
            self._caught_up_to = None
            return
        # the newest sample the replica has replayed past: all commits before it are there
        caught_up = None
        for at, lsn in self._samples:
            if lsn > replayed:
                break
            caught_up = at
        if caught_up is None:
            # behind every sample still held, so older than the oldest: report a lag past
            # the bound (the replica answers, so it is lagging rather than down)
            caught_up = self._samples[0][0] - self._max_lag - 1
        self._caught_up_to = caught_up
        while len(self._samples) > 1 and self._samples[1][1] <= replayed:
            self._samples.popleft()  # keep the newest replayed sample and those after it
        while len(self._samples) > _MAX_SAMPLES:
            self._samples.popleft()
        if len(self._writes) > 1000:  # forget writes the replica has replayed
            self._writes = {ns: at for ns, at in self._writes.items() if at >= caught_up}

    async def _run(self) -> None:
        while True:
            try:
                await self._probe()
            except Exception as exc:  # down, restarting, unreachable: read the primary
                if self._caught_up_to is not None:
                    log.warning("read replica unavailable (%s); reading from the primary", exc)
                self._caught_up_to = None
            self._publish_lag()
            await asyncio.sleep(self._interval)

    def start(self) -> None:
        if self._replica is not None:
            super().start()

    async def aclose(self) -> None:
        """Stop probing and close the replica's pools (the primary's belong to the caller)."""
        await super().aclose()
        for pool in (self._replica, self._replica_search):
            if pool is not None:
                await pool.close()
