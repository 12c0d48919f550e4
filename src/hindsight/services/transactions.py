"""The write transaction every change to memories goes through: one transaction on the
primary, retried after a deadlock, after which this process reads the namespace from the
primary until a read replica has replayed it. Observing and curation share one `Writer`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.errors import Unavailable
from hindsight.stores.reads import ReadRouter

# the name these lines were logged under before the memory service was split: log queries
# keep matching them
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


class Writer:
    def __init__(self, pool: AsyncConnectionPool[Connection], reads: ReadRouter) -> None:
        self._pool = pool
        self._reads = reads

    async def write(self, namespace: str, work: Callable[[Connection], Awaitable[T]]) -> T:
        """`work` in one transaction on the primary; later reads of the namespace by this
        process go to the primary until a read replica has replayed it."""
        try:
            return await with_retry(self._pool, work)
        finally:
            self._reads.wrote(namespace)  # also after a failure: the commit may have landed
