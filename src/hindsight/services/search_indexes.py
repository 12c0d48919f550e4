"""The search indexes a bulk import drops: built again without blocking writes, and
noticed missing (an import killed with -9 leaves them dropped) at start-up and at every
maintenance interval, so recall does not stay on exact search for good.

Recall answers meanwhile (by exact search, slower on a large table); `/readyz` says which
indexes are missing or being built.
"""

from __future__ import annotations

import asyncio
import logging

from psycopg_pool import AsyncConnectionPool

from hindsight.background import BackgroundLoop
from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.db.schema import SEARCH_INDEXES, index_build_session
from hindsight.stores import search_indexes as store

log = logging.getLogger(__name__)


async def build_missing(conn: Connection, dimensions: int, cap_mb: int) -> list[str]:
    """Build every search index that is missing or invalid, concurrently; the ones built.
    The caller holds the index lock, so an invalid index here is a leftover of a build that
    died, not one in progress."""
    present = await store.present(conn)
    todo = [name for name in SEARCH_INDEXES if present.get(name) is not True]
    if not todo:
        return []
    rows = await store.table_rows(conn, analyze=True)
    async with index_build_session(conn, rows, dimensions, cap_mb):
        for name in todo:
            if name in present:
                await store.drop(conn, name, concurrently=True)
            await store.build(conn, name)
    return todo


class IndexKeeper(BackgroundLoop):
    def __init__(
        self, pool: AsyncConnectionPool[Connection], settings: Settings, dimensions: int
    ) -> None:
        super().__init__("hindsight-index-keeper", self._run)
        self._pool = pool
        self._settings = settings
        self._dimensions = dimensions
        self.state = "not checked yet"  # for /readyz

    async def _run(self) -> None:
        while True:
            try:
                await self.check()
            except Exception:
                log.exception("checking the search indexes failed; will try again")
            await asyncio.sleep(self._settings.maintenance_interval_seconds)

    async def check(self) -> None:
        async with self._pool.connection() as conn:
            present = await store.present(conn)
            missing = [n for n in SEARCH_INDEXES if present.get(n) is not True]
            if not missing:
                self.state = "ok"
                return
            self.state = "missing: " + ", ".join(missing)
            if not await store.try_lock(conn):
                return  # an import (which builds them when done) or another replica has it
            try:
                self.state = "rebuilding: " + ", ".join(missing)
                log.warning(
                    "search indexes %s are missing (an import was interrupted?); building "
                    "them concurrently, recall uses exact search meanwhile",
                    ", ".join(missing),
                )
                try:
                    await build_missing(
                        conn, self._dimensions, self._settings.index_build_memory_mb
                    )
                except BaseException:
                    self.state = "missing: " + ", ".join(missing)
                    raise
                self.state = "ok"
                log.info("search indexes rebuilt")
            finally:
                await store.unlock(conn)
