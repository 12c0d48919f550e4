"""Re-embed every memory with the configured model, including a change of vector width.

The service keeps answering from the old vectors while this runs:
1. add a column `embedding_next` of the new width;
2. fill it batch by batch (the progress callback hears each batch);
3. build its HNSW index CONCURRENTLY, so writes are not blocked;
4. in one short transaction, holding writes off: re-embed what changed meanwhile, drop the
   old column and index, rename the new ones into place, record the model.
Interrupted, it resumes: rows already filled are skipped. Restart the service with the new
HINDSIGHT_EMBEDDING_* settings afterwards; it refuses to start while they disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.db.schema import index_build_session, stored_embedding
from hindsight.embeddings.base import Embedder
from hindsight.stores import reembed as store
from hindsight.text import memory_text


@dataclass(frozen=True)
class ReembedPlan:
    memories: int
    old_model: str
    old_dimensions: int
    new_model: str
    new_dimensions: int


async def plan(pool: AsyncConnectionPool[Connection], embedder: Embedder) -> ReembedPlan:
    async with pool.connection() as conn:
        old_model, old_dims = await stored_embedding(conn)
        memories = await store.count(conn)
    return ReembedPlan(memories, old_model, old_dims, embedder.name, embedder.dimensions)


async def _fill(conn: Connection, embedder: Embedder, rows: list[dict[str, Any]]) -> None:
    vectors = await embedder.embed([memory_text(r["mem_key"], r["mem_value"]) for r in rows])
    await store.fill(conn, rows, vectors)


async def run(
    pool: AsyncConnectionPool[Connection],
    embedder: Embedder,
    *,
    batch_size: int = 256,
    index_memory_mb: int = 1024,
    progress: Callable[[int], None] = lambda n: None,
) -> int:
    """Re-embed everything; the number of memories re-embedded. `index_memory_mb` caps the
    memory the new HNSW index's build may take."""
    width = int(embedder.dimensions)
    async with pool.connection() as conn:
        started = await store.prepare_column(conn, width)
    done = 0
    last = None
    while True:
        async with pool.connection() as conn, conn.transaction():
            rows = await store.unfilled(conn, last, batch_size)
            if not rows:
                break
            await _fill(conn, embedder, rows)
        last = (rows[-1]["namespace"], rows[-1]["id"])
        done += len(rows)
        progress(len(rows))
    async with pool.connection() as conn:
        async with index_build_session(conn, done, width, index_memory_mb):
            await store.build_index(conn)
        async with conn.transaction():
            changed = await store.hold_writes_and_changed(conn, started)
            for start in range(0, len(changed), batch_size):
                await _fill(conn, embedder, changed[start : start + batch_size])
            await store.swap(conn, embedder.name, width)
    return done + len(changed)
