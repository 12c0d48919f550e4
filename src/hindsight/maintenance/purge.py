"""One maintenance pass, run by the service every few seconds and by
`hindsight maintenance purge`. An advisory lock makes replicas take turns."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict, dataclass

from psycopg_pool import AsyncConnectionPool

from hindsight.background import BackgroundLoop
from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.observability import metrics
from hindsight.services.lifecycle import LifecycleService
from hindsight.stores import maintenance as store, overview, specificity

# counting every namespace's memories reads the whole table: at most this often
GAUGE_REFRESH_SECONDS = 60.0

log = logging.getLogger(__name__)


@dataclass
class PurgeReport:
    ran: bool = False
    expired_steps: int = 0
    expired_sessions: int = 0
    recall_log_rows: int = 0
    keyword_rows_merged: int = 0
    specificities_kept: int = 0

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
            if settings.specificity_weight > 0 and settings.specificity_refresh_batch > 0:
                report.specificities_kept = await specificity.refresh(
                    conn, settings.specificity_refresh_batch
                )
        finally:
            await store.unlock(conn)
    return report


class MaintenanceLoop(BackgroundLoop):
    def __init__(
        self,
        pool: AsyncConnectionPool[Connection],
        settings: Settings,
        lifecycle: LifecycleService | None = None,
    ) -> None:
        super().__init__("hindsight-maintenance", self._run)
        self._pool = pool
        self._settings = settings
        self._lifecycle = lifecycle
        self._counted_at: float | None = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._settings.maintenance_interval_seconds)
            try:
                report = await run_once(self._pool, self._settings)
                if report.expired_steps or report.expired_sessions or report.recall_log_rows:
                    log.info("maintenance: %s", report.as_dict())
                if report.ran:  # one replica at a time publishes the gauges
                    await self._refresh_gauges()
            except Exception:
                log.exception("maintenance pass failed; will try again")
            if self._lifecycle is None:
                continue
            try:  # at most once per interval across all replicas
                passed = await self._lifecycle.run(
                    due_after_seconds=self._settings.lifecycle_interval_seconds
                )
                if passed.ran and passed.counts:
                    log.info("lifecycle: %s", passed.as_dict())
            except Exception:
                log.exception("lifecycle pass failed; will try again")

    async def _refresh_gauges(self) -> None:
        now = time.monotonic()
        async with self._pool.connection() as conn:
            metrics.set_job_counts(await overview.job_counts(conn))
            if self._counted_at is None or now - self._counted_at >= GAUGE_REFRESH_SECONDS:
                metrics.set_memory_counts(await overview.memory_counts(conn))
                self._counted_at = now
