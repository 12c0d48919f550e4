"""What every part of the memory service shares: its collaborators, the write transaction
(retried after a deadlock, then marking the namespace as written for read routing), and the
read of one memory.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.errors import NotFound, Unavailable
from hindsight.services.access_recorder import AccessRecorder
from hindsight.services.policy import PolicyService
from hindsight.stores import memories as store
from hindsight.stores.reads import ReadRouter

# the name these lines were logged under before the service was split: log queries keep
# matching them
log = logging.getLogger("hindsight.services.memory")

T = TypeVar("T")


async def with_retry(
    pool: AsyncConnectionPool[Connection],
    work: Callable[[Connection], Awaitable[T]],
    *,
    attempts: int = 5,
) -> T:
    """Run `work` in one transaction, retrying only a deadlock or serialization failure
    (the transaction was rolled back whole, so a retry cannot double anything)."""
    for attempt in range(1, attempts + 1):
        try:
            async with pool.connection() as conn, conn.transaction():
                return await work(conn)
        except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure):
            if attempt == attempts:
                raise
            log.info("transaction retried after a deadlock (attempt %d)", attempt)
        except psycopg.OperationalError as exc:
            # psycopg's message names hosts, users and databases: the log gets it, not callers
            log.warning("PostgreSQL unreachable: %s", exc)
            raise Unavailable(
                "PostgreSQL is unreachable; try again shortly", retry_after=2
            ) from exc
    raise AssertionError("unreachable")


class MemoryCore:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        embedder: Embedder,
        recorder: AccessRecorder | None = None,
        reads: ReadRouter | None = None,
        policies: PolicyService | None = None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._embedder = embedder
        self._recorder = recorder
        self._reads = reads or ReadRouter(pool, pool)
        self._policies = policies or PolicyService(settings, pool)
        self.policies = self._policies  # the same rules for writes that skip this service

    async def _write(self, namespace: str, work: Callable[[Connection], Awaitable[T]]) -> T:
        """`work` in one transaction on the primary; later reads of the namespace by this
        process go to the primary until a read replica has replayed it."""
        try:
            return await with_retry(self._pool, work)
        finally:
            self._reads.wrote(namespace)  # also after a failure: the commit may have landed

    async def get(self, namespace: str, memory_id: uuid.UUID) -> dict[str, Any]:
        async with self._pool.connection() as conn:
            row = await store.get(conn, namespace, memory_id)
        if row is None:
            raise NotFound(f"no memory {memory_id} in namespace {namespace!r}")
        return row
