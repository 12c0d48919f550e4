"""Keeps access counts and the recall log off recall's critical path without losing them.

Recall hands its results here and answers at once. A background task writes everything
gathered so far every `interval` (one UPDATE for all counts, one INSERT for all log
entries), with `synchronous_commit = off`: the commit does not wait for the disk, yet a
killed service loses nothing it has flushed — only a crash of PostgreSQL itself could drop
the last few hundred milliseconds. On shutdown everything pending is written before exit.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from hindsight.background import BackgroundLoop
from hindsight.db.pool import Connection
from hindsight.stores import lifecycle as lifecycle_store
from hindsight.stores import memories as memory_store
from hindsight.stores import recall_log
from hindsight.stores.recall_log import RecallEntry

log = logging.getLogger(__name__)


class AccessRecorder(BackgroundLoop):
    def __init__(self, pool: AsyncConnectionPool[Connection], *, interval: float) -> None:
        super().__init__("hindsight-access-recorder", self._run)
        self._pool = pool
        self._interval = interval
        self._counts: dict[tuple[str, uuid.UUID], tuple[int, datetime]] = {}
        self._entries: list[RecallEntry] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._flush_lock = asyncio.Lock()

    def record(self, entry: RecallEntry) -> None:
        for memory_id in entry.result_ids:
            key = (entry.namespace, memory_id)
            n, _ = self._counts.get(key, (0, entry.created_at))
            self._counts[key] = (n + 1, entry.created_at)
        self._entries.append(entry)
        self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._entries)

    async def _run(self) -> None:
        while not self._closing:
            await self._wake.wait()
            await asyncio.sleep(self._interval)  # gather what else arrives meanwhile
            self._wake.clear()
            try:
                await self.flush()
            except Exception:  # keep the data and try again on the next tick
                log.exception("writing access counts failed; will retry")
                await asyncio.sleep(min(5.0, self._interval * 20))
                self._wake.set()

    async def flush(self) -> None:
        async with self._flush_lock:
            if not self._entries and not self._counts:
                return
            counts, entries = self._counts, self._entries
            self._counts, self._entries = {}, []
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    await conn.execute("SET LOCAL synchronous_commit = off")
                    if counts:
                        await memory_store.record_access(conn, counts)
                        await lifecycle_store.warm(conn, list(counts))  # recalled: not cold
                    if entries:
                        await recall_log.insert_many(conn, entries)
            except BaseException:
                # put them back, merged with anything recorded meanwhile
                for key, (n, at) in counts.items():
                    m, later = self._counts.get(key, (0, at))
                    self._counts[key] = (n + m, max(at, later))
                self._entries[:0] = entries
                raise

    async def aclose(self) -> None:
        self._closing = True
        await super().aclose()
        for attempt in range(3):
            try:
                await self.flush()
                return
            except Exception:
                log.exception("final flush of access counts failed (attempt %d)", attempt + 1)
                await asyncio.sleep(0.5)
        log.error(
            "lost %d recall log entries and access counts for %d memories at shutdown",
            len(self._entries),
            len(self._counts),
        )
