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

from pgvector import HalfVector
from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.db.schema import (
    EMBEDDING_INDEX,
    embedding_index_sql,
    index_build_session,
    stored_embedding,
)
from hindsight.embeddings.base import Embedder
from hindsight.services.memory import memory_text

NEXT_INDEX = EMBEDDING_INDEX + "_next"


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
        cur = await conn.execute("SELECT count(*) AS n FROM long_term_memory")
        row = await cur.fetchone()
    return ReembedPlan(
        int(row["n"]) if row else 0, old_model, old_dims, embedder.name, embedder.dimensions
    )


async def _fill(conn: Connection, embedder: Embedder, rows: list[dict[str, Any]]) -> None:
    vectors = await embedder.embed([memory_text(r["mem_key"], r["mem_value"]) for r in rows])
    await conn.execute(
        "UPDATE long_term_memory m SET embedding_next = x.v "
        "FROM unnest(%s::text[], %s::uuid[], %s::halfvec[]) AS x(ns, id, v) "
        "WHERE m.namespace = x.ns AND m.id = x.id",
        ([r["namespace"] for r in rows], [r["id"] for r in rows], [HalfVector(v) for v in vectors]),
    )


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
        cur = await conn.execute(
            "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute "
            "WHERE attrelid = 'long_term_memory'::regclass AND attname = 'embedding_next' "
            "AND NOT attisdropped"
        )
        existing = await cur.fetchone()
        if existing is not None and existing["type"] != f"halfvec({width})":
            # left by an interrupted run towards another width: start that column over
            await conn.execute(f"DROP INDEX IF EXISTS {NEXT_INDEX}")
            await conn.execute("ALTER TABLE long_term_memory DROP COLUMN embedding_next")
            existing = None
        if existing is None:
            await conn.execute(
                f"ALTER TABLE long_term_memory ADD COLUMN embedding_next halfvec({width})"
            )
        cur = await conn.execute("SELECT now() AS t")
        started = (await cur.fetchone() or {})["t"]
    done = 0
    last: tuple[str, Any] | None = None
    while True:
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT namespace, id, mem_key, mem_value FROM long_term_memory "
                "WHERE embedding_next IS NULL "
                "AND (%s::text IS NULL OR (namespace, id) > (%s, %s::uuid)) "
                "ORDER BY namespace, id LIMIT %s",
                (*last[:1], *last, batch_size) if last else (None, None, None, batch_size),
            )
            rows = await cur.fetchall()
            if not rows:
                break
            await _fill(conn, embedder, rows)
        last = (rows[-1]["namespace"], rows[-1]["id"])
        done += len(rows)
        progress(len(rows))
    async with pool.connection() as conn:
        # an interrupted CONCURRENTLY build leaves an invalid index behind: build afresh
        await conn.execute(f"DROP INDEX IF EXISTS {NEXT_INDEX}")
        async with index_build_session(conn, done, width, index_memory_mb):
            await conn.execute(embedding_index_sql("embedding_next", NEXT_INDEX, concurrently=True))
        async with conn.transaction():
            # writes wait from here to the commit; reads go on
            await conn.execute("LOCK TABLE long_term_memory IN SHARE ROW EXCLUSIVE MODE")
            cur = await conn.execute(
                "SELECT namespace, id, mem_key, mem_value FROM long_term_memory "
                "WHERE embedding_next IS NULL OR updated_at >= %s",
                (started,),
            )
            changed = await cur.fetchall()
            for start in range(0, len(changed), batch_size):
                await _fill(conn, embedder, changed[start : start + batch_size])
            await conn.execute(f"DROP INDEX {EMBEDDING_INDEX}")
            await conn.execute("ALTER TABLE long_term_memory DROP COLUMN embedding")
            await conn.execute(
                "ALTER TABLE long_term_memory RENAME COLUMN embedding_next TO embedding"
            )
            await conn.execute("ALTER TABLE long_term_memory ALTER COLUMN embedding SET NOT NULL")
            await conn.execute(f"ALTER INDEX {NEXT_INDEX} RENAME TO {EMBEDDING_INDEX}")
            await conn.execute(
                "COMMENT ON COLUMN long_term_memory.embedding IS 'Unit vector of key and value "
                "from the embedding model recorded in hindsight_meta (half precision).'"
            )
            await conn.execute(
                "INSERT INTO hindsight_meta (name, value) VALUES ('embedding_model', %s), "
                "('embedding_dimensions', %s) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (embedder.name, str(width)),
            )
    return done + len(changed)
