"""Erasure you can prove: a deleted memory, or a whole namespace, leaves no value behind.

Deleting a memory leaves a tombstone in its history (id, key, time, actor) and nothing of
its values: the trigger clears its history; here its values leave the recall log's stored
results and job results, and its embedding-cache entries go when no active memory
still holds the same text. Erasing a namespace deletes every row of it from every table
and every Redis key, and returns a receipt with the count per store.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight import limits
from hindsight.db.pool import Connection
from hindsight.ids import uuid7
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
        finally:
            # this process's reads must not find the erased rows on a lagging replica; also
            # after a failure, as the commit may have landed
            self._reads.wrote(namespace)
        # a step appended while Postgres was erased may have reached Redis: sweep again
        redis_keys += await self._hot.forget_namespace(namespace)
        receipt = {
            "namespace": namespace,
            "erased_at": datetime.now(UTC).isoformat(),
            "actor": actor,
            "id": str(uuid7()),
            "postgres": tables,
            "redis": {"keys": redis_keys, "configured": self._hot.configured},
            "total": sum(tables.values()) + redis_keys,
        }
        log.info("erased namespace %s: %s", namespace, receipt["postgres"])
        return receipt
