"""One maintenance pass, run by the service every few seconds and by
`hindsight maintenance purge`. An advisory lock makes replicas take turns."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict, dataclass

from psycopg_pool import AsyncConnectionPool

from hindsight.background import BackgroundLoop
from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.stores import maintenance as store

log = logging.getLogger(__name__)


@dataclass
class PurgeReport:
    ran: bool = False
    expired_steps: int = 0
    expired_sessions: int = 0
    recall_log_rows: int = 0
    keyword_rows_merged: int = 0

    def as_dict(self) -> dict[str, int | bool]:
        return asdict(self)


async def run_once(pool: AsyncConnectionPool[Connection], settings: Settings) -> PurgeReport:
    """Each batch and each step commits on its own, so no lock is held for the whole pass
    and what is done stays done if a later step fails."""
    report = PurgeReport()
    async with pool.connection() as conn:
        if not await store.try_lock(conn):
            return report  # another replica is at it
        try:
            report.ran = True
            while True:
                async with conn.transaction():
                    n = await store.purge_expired_steps(conn)
                report.expired_steps += n
                if n < 10_000:
                    break
            async with conn.transaction():
                report.expired_sessions = await store.purge_expired_sessions(conn)
            if settings.recall_log_retention_days > 0:
                async with conn.transaction():
                    report.recall_log_rows = await store.purge_recall_log(
                        conn, settings.recall_log_retention_days
                    )
            async with conn.transaction():
                report.keyword_rows_merged = await store.compact_keyword_stats(conn)
        finally:
            await store.unlock(conn)
    return report


class MaintenanceLoop(BackgroundLoop):
    def __init__(self, pool: AsyncConnectionPool[Connection], settings: Settings) -> None:
        super().__init__("hindsight-maintenance", self._run)
        self._pool = pool
        self._settings = settings

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._settings.maintenance_interval_seconds)
            try:
                report = await run_once(self._pool, self._settings)
                if report.expired_steps or report.expired_sessions or report.recall_log_rows:
                    log.info("maintenance: %s", report.as_dict())
            except Exception:
                log.exception("maintenance pass failed; will try again")
