"""SQL of re-embedding: the `embedding_next` column beside `embedding`, filled batch by batch,
indexed, then swapped into place (`services.reembed` runs the steps)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pgvector import HalfVector

from hindsight.db.pool import Connection
from hindsight.db.schema import EMBEDDING_INDEX, embedding_index_sql

NEXT_INDEX = EMBEDDING_INDEX + "_next"


async def count(conn: Connection) -> int:
    cur = await conn.execute("SELECT count(*) AS n FROM long_term_memory")
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def prepare_column(conn: Connection, width: int) -> datetime:
    """`embedding_next` of `width` dimensions, kept (and its filled rows) from an interrupted
    run towards the same width; the database's time, from which changes are caught up."""
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
    row = await cur.fetchone()
    assert row is not None
    started: datetime = row["t"]
    return started


async def unfilled(
    conn: Connection, after: tuple[str, uuid.UUID] | None, limit: int
) -> list[dict[str, Any]]:
    """The next rows without a new vector, in (namespace, id) order after `after`."""
    cur = await conn.execute(
        "SELECT namespace, id, mem_key, mem_value FROM long_term_memory "
        "WHERE embedding_next IS NULL "
        "AND (%s::text IS NULL OR (namespace, id) > (%s, %s::uuid)) "
        "ORDER BY namespace, id LIMIT %s",
        (*after[:1], *after, limit) if after else (None, None, None, limit),
    )
    return await cur.fetchall()


async def fill(conn: Connection, rows: list[dict[str, Any]], vectors: list[Any]) -> None:
    await conn.execute(
        "UPDATE long_term_memory m SET embedding_next = x.v "
        "FROM unnest(%s::text[], %s::uuid[], %s::halfvec[]) AS x(ns, id, v) "
        "WHERE m.namespace = x.ns AND m.id = x.id",
        ([r["namespace"] for r in rows], [r["id"] for r in rows], [HalfVector(v) for v in vectors]),
    )


async def build_index(conn: Connection) -> None:
    # an interrupted CONCURRENTLY build leaves an invalid index behind: build afresh
    await conn.execute(f"DROP INDEX IF EXISTS {NEXT_INDEX}")
    await conn.execute(embedding_index_sql("embedding_next", NEXT_INDEX, concurrently=True))


async def hold_writes_and_changed(conn: Connection, since: datetime) -> list[dict[str, Any]]:
    """In the swap's transaction: writes wait from here to the commit (reads go on); the rows
    written since `since` or never filled."""
    await conn.execute("LOCK TABLE long_term_memory IN SHARE ROW EXCLUSIVE MODE")
    cur = await conn.execute(
        "SELECT namespace, id, mem_key, mem_value FROM long_term_memory "
        "WHERE embedding_next IS NULL OR updated_at >= %s",
        (since,),
    )
    return await cur.fetchall()


async def swap(conn: Connection, model: str, width: int) -> None:
    """The new column and index in place of the old, and the model recorded."""
    await conn.execute(f"DROP INDEX {EMBEDDING_INDEX}")
    await conn.execute("ALTER TABLE long_term_memory DROP COLUMN embedding")
    await conn.execute("ALTER TABLE long_term_memory RENAME COLUMN embedding_next TO embedding")
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
        (model, str(width)),
    )
