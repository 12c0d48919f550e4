"""Erasure you can prove: a deleted memory, or a whole namespace, leaves no value behind.

Deleting a memory leaves a tombstone in its history (id, key, time, actor) and nothing of
its values: the trigger clears its history; here its values leave the recall log's stored
results and job results, and its embedding-cache entries go when no active memory
still holds the same text. Erasing a namespace deletes every row of it from every table
and every Redis key, and returns a receipt with the count per store.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from hindsight import limits
from hindsight.db.pool import Connection
from hindsight.ids import uuid7
from hindsight.observability import metrics
from hindsight.services.access_recorder import AccessRecorder
from hindsight.stores import erasure as store
from hindsight.stores.hot_steps import HotSteps
from hindsight.stores.reads import ReadRouter
from hindsight.text import memory_text

log = logging.getLogger(__name__)


def _hash(text: str) -> bytes:
    # as the embedding cache keys its entries
    return hashlib.sha256(text.encode("utf-8")).digest()


async def erase_traces(
    conn: Connection,
    namespace: str,
    deleted: Sequence[dict[str, Any]],
    texts: Sequence[tuple[str, str]],
) -> None:
    """After deleting memories (rows with id, key, value) in this transaction: clear
    their values from the recall log and job results, and drop cache entries of `texts`
    (every key/value they had) that no active memory holds any more."""
    if not deleted:
        return
    ids = [r["id"] for r in deleted]
    await store.scrub_recall_log(conn, namespace, ids)
    values = sorted({v for _, v in texts} | {r["value"] for r in deleted})
    await store.scrub_job_results(conn, namespace, values)
    # The cache is keyed by content alone, so another namespace may share an entry; it is
    # dropped all the same (that memory keeps its own vector; a later write recomputes
    # the entry). Asking every namespace whether it still holds the text would read the
    # whole table on every delete, and cross namespaces.
    everything = sorted(set(texts) | {(r["key"], r["value"]) for r in deleted})
    await store.drop_cached_embeddings(conn, [_hash(memory_text(k, v)) for k, v in everything])


class ErasureService:
    def __init__(
        self,
        pool: AsyncConnectionPool[Connection],
        hot: HotSteps,
        recorder: AccessRecorder,
        reads: ReadRouter | None = None,
    ) -> None:
        self._pool = pool
        self._hot = hot
        self._recorder = recorder
        self._reads = reads or ReadRouter(pool, pool)
        self._vacuuming: asyncio.Task[None] | None = None
        self._vacuum_again = False

    async def erase_namespace(self, namespace: str, *, actor: str) -> dict[str, Any]:
        """Delete everything of `namespace`; the receipt counts what went, per store."""
        # recalls still buffered in this process would be logged after the erase
        await self._recorder.flush()
        redis_keys = await self._hot.forget_namespace(namespace)
        try:
            async with self._pool.connection() as conn, conn.transaction():
                texts, queries = await store.namespace_texts(conn, namespace)
                tables = await store.erase_namespace(conn, namespace, actor=actor)
                hashes = [_hash(memory_text(k, v)) for k, v in texts]
                hashes += [_hash(q[: limits.QUERY_MAX_CHARS * 3]) for q in queries]
                tables["embedding_cache"] = await store.drop_cached_embeddings(conn, hashes)
                record_id = uuid7()
                await store.record_erasure(conn, record_id, namespace, actor)
        finally:
            # this process's reads must not find the erased rows on a lagging replica; also
            # after a failure, as the commit may have landed
            self._reads.wrote(namespace)
        # a step appended while Postgres was erased may have reached Redis: sweep again
        redis_keys += await self._hot.forget_namespace(namespace)
        metrics.forget_namespace(namespace)
        # the UNLINKs are in the append-only file, and so is every write before them
        aof_rewritten = await self._hot.rewrite_aof() if redis_keys else None
        self._vacuum_soon()
        receipt = {
            "namespace": namespace,
            "erased_at": datetime.now(UTC).isoformat(),
            "actor": actor,
            "id": str(record_id),
            "postgres": tables,
            "redis": {
                "keys": redis_keys,
                "configured": self._hot.configured,
                "aof_rewritten": aof_rewritten,
            },
            "total": sum(tables.values()) + redis_keys,
        }
        log.info("erased namespace %s: %s", namespace, receipt["postgres"])
        return receipt

    def _vacuum_soon(self) -> None:
        """A plain VACUUM of the touched tables, after the answer: it takes no lock that
        blocks reads or writes, but on a large table (the HNSW index above all) it takes
        long enough that the caller should not wait for it. It frees the dead rows' space
        for reuse; their bytes stay in the files until `compact` (or reuse)."""
        self._vacuum_again = True
        if self._vacuuming is None or self._vacuuming.done():
            self._vacuuming = asyncio.create_task(self._vacuum())

    async def _vacuum(self) -> None:
        # A running VACUUM may have passed a table before this erasure deleted its rows,
        # so one more pass follows when an erasure came in meanwhile.
        while self._vacuum_again:
            self._vacuum_again = False
            try:
                async with self._pool.connection() as conn:
                    await store.vacuum(conn, full=False)
            except Exception as exc:  # housekeeping: autovacuum gets there too
                log.warning("VACUUM after an erasure failed: %s", exc)
                return

    async def aclose(self) -> None:
        """Stop a VACUUM still running: autovacuum gets to the dead rows in its own time,
        and a command such as `hindsight erase` should not wait minutes for it."""
        if self._vacuuming is not None and not self._vacuuming.done():
            self._vacuuming.cancel()
            await asyncio.gather(self._vacuuming, return_exceptions=True)

    async def compact(self) -> dict[str, Any]:
        """Take erased rows off the disk: VACUUM FULL of every table an erasure touches,
        then let go of the WAL that still holds them, and rewrite Redis's append-only file.
        Each table is locked (ACCESS EXCLUSIVE) while it is rewritten; see the README's
        "Erasure on disk" for when to run it."""
        started = time.monotonic()
        await self.aclose()  # VACUUM FULL does what a plain VACUUM would, and more
        async with self._pool.connection() as conn:
            await store.vacuum(conn, full=True)
            try:
                await store.drop_old_wal(conn)
                wal = True
            except psycopg.errors.InsufficientPrivilege as exc:
                # CHECKPOINT and pg_switch_wal() need a superuser or a grant (README)
                log.warning("cannot let go of old WAL: %s", exc)
                wal = False
        aof = await self._hot.rewrite_aof()
        return {
            "postgres": {"vacuum_full": True, "wal_switched": wal},
            "redis": {"aof_rewritten": aof},
            "seconds": round(time.monotonic() - started, 3),
        }
