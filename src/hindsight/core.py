"""The running service's parts, wired together once: used by the HTTP app, MCP over
stdio and the CLI alike."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.db.pool import Connection, open_pool
from hindsight.db.schema import ensure_embedding_matches
from hindsight.embeddings import Embedder, create_embedder
from hindsight.errors import ConfigurationError
from hindsight.llm import LLM, create_llm
from hindsight.maintenance.purge import MaintenanceLoop
from hindsight.rerank import Reranker, create_reranker
from hindsight.services.access_recorder import AccessRecorder
from hindsight.services.auth import Authenticator, KeyService
from hindsight.services.consolidation import ConsolidationService, JobWorker
from hindsight.services.curation import Curation
from hindsight.services.distill import Distiller
from hindsight.services.embedding_cache import CachedEmbedder
from hindsight.services.erasure import ErasureService
from hindsight.services.export import ExportService
from hindsight.services.extraction import ExtractionService
from hindsight.services.feedback import FeedbackService
from hindsight.services.lifecycle import LifecycleService
from hindsight.services.memory_reads import MemoryReads
from hindsight.services.observe import Observer
from hindsight.services.policy import PolicyService
from hindsight.services.recall import RecallService
from hindsight.services.redaction import guard_embedder, guard_llm, guard_reranker
from hindsight.services.reflection import Reflection
from hindsight.services.search_indexes import IndexKeeper
from hindsight.services.sessions import SessionService
from hindsight.services.transactions import Writer
from hindsight.stores.hot_steps import HotSteps
from hindsight.stores.reads import ReadRouter

log = logging.getLogger(__name__)


@dataclass
class Hindsight:
    settings: Settings
    database_url: str
    pool: AsyncConnectionPool[Connection]
    search_pool: AsyncConnectionPool[Connection]
    reads: ReadRouter
    hot: HotSteps
    embedder: Embedder
    llm: LLM | None
    recorder: AccessRecorder
    maintenance: MaintenanceLoop | None
    indexes: IndexKeeper | None
    worker: JobWorker | None
    auth: Authenticator
    keys: KeyService
    observer: Observer
    curation: Curation
    memory_reads: MemoryReads
    recall: RecallService
    policies: PolicyService
    lifecycle: LifecycleService
    feedback: FeedbackService
    sessions: SessionService
    consolidation: ConsolidationService
    extraction: ExtractionService
    erasure: ErasureService
    exports: ExportService
    reranker: Reranker | None = None

    async def aclose(self) -> None:
        if self.worker is not None:
            await self.worker.aclose()
        if self.maintenance is not None:
            await self.maintenance.aclose()
        if self.indexes is not None:
            await self.indexes.aclose()
        await self.recorder.aclose()
        await self.erasure.aclose()
        if self.reranker is not None:
            await self.reranker.aclose()
        await self.consolidation.aclose()
        if self.llm is not None:
            await self.llm.aclose()
        await self.hot.aclose()
        await self.embedder.aclose()
        await self.reads.aclose()
        await self.search_pool.close()
        await self.pool.close()


async def start(
    settings: Settings,
    *,
    database_url: str,
    redis_url: str | None,
    background: bool = True,
) -> Hindsight:
    """Connect to both stores and check the schema; raise ConfigurationError with what
    to do when the schema is behind or was built for another embedding model."""
    head = migrate.head_revision()
    current = migrate.current_revision(database_url)
    if current != head:
        raise ConfigurationError(
            f"the database schema is at revision {current or 'none'} but this version needs "
            f"{head}: run `hindsight db upgrade` (or start with HINDSIGHT_AUTO_MIGRATE=true)"
        )
    # before anything connects: a reranker that cannot load stops start-up at once
    reranker = create_reranker(settings)
    if settings.rerank_provider != "local":  # text leaves the process: redact it first
        reranker = guard_reranker(settings, reranker)
    embedder: Embedder = await create_embedder(settings)
    pool = await open_pool(settings, database_url)
    try:
        async with pool.connection() as conn:
            await ensure_embedding_matches(conn, embedder.name, embedder.dimensions)
    except BaseException:
        await pool.close()
        await embedder.aclose()
        raise
    if not settings.uses_builtin_embedder and settings.embedding_cache:
        embedder = CachedEmbedder(embedder, pool)
    if not settings.uses_builtin_embedder:  # text leaves the process: redact it first
        embedder = guard_embedder(settings, embedder)
    search_pool = await open_pool(settings, database_url, name="hindsight-search", search=True)
    reads = await _read_router(settings, pool, search_pool)
    hot = HotSteps(
        redis_url,
        keep=settings.working_memory_cache_steps,
        cluster=settings.redis_mode == "cluster",
    )
    recorder = AccessRecorder(pool, interval=settings.access_flush_interval_ms / 1000)
    llm = guard_llm(settings, create_llm(settings))
    policies = PolicyService(settings, pool)
    writer = Writer(pool, reads)
    memory_reads = MemoryReads(pool, reads)
    observer = Observer(settings, embedder, writer, policies, recorder, llm)
    recall = RecallService(
        settings,
        pool,
        search_pool,
        embedder,
        recorder,
        policies=policies,
        reads=reads,
        reranker=reranker,
    )
    distiller = Distiller(llm, recall) if llm is not None else None
    consolidation = ConsolidationService(settings, pool, observer, hot, llm, distiller)
    lifecycle = LifecycleService(
        settings, pool, policies, reads=reads, reflection=Reflection(observer)
    )
    maintenance = MaintenanceLoop(pool, settings, lifecycle) if background else None
    indexes = IndexKeeper(pool, settings, embedder.dimensions) if background else None
    worker = JobWorker(consolidation, settings.job_poll_interval_seconds) if background else None
    reads.start()
    if background:
        recorder.start()
        assert maintenance is not None and worker is not None and indexes is not None
        maintenance.start()
        indexes.start()
        worker.start()
    bootstrap = settings.api_key.get_secret_value() if settings.api_key else None
    return Hindsight(
        settings=settings,
        database_url=database_url,
        pool=pool,
        search_pool=search_pool,
        reads=reads,
        hot=hot,
        embedder=embedder,
        llm=llm,
        recorder=recorder,
        maintenance=maintenance,
        indexes=indexes,
        worker=worker,
        auth=Authenticator(
            pool,
            bootstrap,
            per_key=settings.rate_limit_per_key,
            per_client=settings.rate_limit_per_client,
        ),
        keys=KeyService(pool),
        observer=observer,
        curation=Curation(settings, embedder, writer, memory_reads, policies, recorder),
        memory_reads=memory_reads,
        recall=recall,
        policies=policies,
        lifecycle=lifecycle,
        feedback=FeedbackService(pool, recorder),
        sessions=SessionService(settings, pool, hot, consolidation, policies),
        consolidation=consolidation,
        extraction=ExtractionService(settings, observer, llm, distiller),
        erasure=ErasureService(pool, hot, recorder, reads=reads),
        exports=ExportService(pool, embedder, policies),
        reranker=reranker,
    )


async def _read_router(
    settings: Settings,
    pool: AsyncConnectionPool[Connection],
    search_pool: AsyncConnectionPool[Connection],
) -> ReadRouter:
    """Reads through the replica at HINDSIGHT_DATABASE_READ_URL when set, else the primary.
    The replica's pools connect in the background: a replica down at start-up only sends
    reads to the primary until it answers."""
    url = settings.database_read_url
    if not url:
        return ReadRouter(pool, search_pool)
    replica = await open_pool(settings, url, name="hindsight-replica", wait=False, timeout=2.0)
    replica_search = await open_pool(
        settings, url, name="hindsight-replica-search", search=True, wait=False, timeout=2.0
    )
    return ReadRouter(
        pool,
        search_pool,
        replica,
        replica_search,
        max_lag=settings.read_replica_max_lag_seconds,
        probe_interval=settings.read_replica_probe_interval_seconds,
    )


async def migrate_for(settings: Settings, database_url: str) -> None:
    """`alembic upgrade head`, creating the schema for the configured embedding model."""
    embedder = await create_embedder(settings)
    try:
        config = migrate.alembic_config(
            database_url,
            embedding_name=embedder.name,
            embedding_dimensions=embedder.dimensions,
        )
    finally:
        await embedder.aclose()
    migrate.upgrade(config)
