"""What `hindsight doctor` asks the stores: extension versions, index state, Redis
persistence settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from hindsight.db.pool import Connection


async def schema_revision(conn: Connection) -> str | None:
    """The Alembic revision the database is at (None: never migrated)."""
    cur = await conn.execute("SELECT version_num FROM alembic_version")
    row = await cur.fetchone()
    return str(row["version_num"]) if row else None


async def pgvector_version(conn: Connection) -> str | None:
    cur = await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    row = await cur.fetchone()
    return str(row["extversion"]) if row else None


async def indexes(conn: Connection, names: Sequence[str]) -> dict[str, bool]:
    """For each index that exists: whether it is valid (an interrupted concurrent build
    leaves an invalid one, which queries ignore)."""
    cur = await conn.execute(
        "SELECT c.relname AS name, i.indisvalid AS valid FROM pg_class c "
        "JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ANY(%s)",
        (list(names),),
    )
    return {r["name"]: bool(r["valid"]) for r in await cur.fetchall()}


async def has_memories(conn: Connection) -> bool:
    cur = await conn.execute("SELECT EXISTS (SELECT 1 FROM long_term_memory) AS any")
    row = await cur.fetchone()
    return bool(row and row["any"])


async def redis_persistence(url: str) -> dict[str, Any]:
    """`appendonly` and `appendfsync` of the server at `url` ({} when CONFIG is refused,
    as managed services do); raises when it cannot be reached."""
    client = aioredis.Redis.from_url(url, socket_timeout=3, socket_connect_timeout=3)
    try:
        await client.ping()
        try:
            found = await client.config_get("append*")
        except ResponseError:
            return {}
        return {_text(k): _text(v) for k, v in found.items()}
    finally:
        await client.aclose()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
