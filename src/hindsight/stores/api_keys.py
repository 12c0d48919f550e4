"""SQL for API keys (stored as SHA-256 hashes only)."""

from __future__ import annotations

import uuid
from typing import Any

from hindsight.db.pool import Connection


async def find_by_hash(conn: Connection, key_hash: bytes) -> dict[str, Any] | None:
    cur = await conn.execute(
        "SELECT id, name, namespaces, role, revoked_at FROM api_keys WHERE key_hash = %s",
        (key_hash,),
    )
    return await cur.fetchone()


async def touch(conn: Connection, key_id: uuid.UUID) -> None:
    await conn.execute(
        "UPDATE api_keys SET last_used_at = now() WHERE id = %s "
        "AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
        (key_id,),
    )


async def create(
    conn: Connection,
    *,
    key_id: uuid.UUID,
    name: str,
    key_hash: bytes,
    key_prefix: str,
    namespaces: list[str] | None,
    role: str,
) -> dict[str, Any]:
    cur = await conn.execute(
        "INSERT INTO api_keys (id, name, key_hash, key_prefix, namespaces, role) "
        "VALUES (%s, %s, %s, %s, %s, %s) "
        "RETURNING id, name, key_prefix, namespaces, role, created_at",
        (key_id, name, key_hash, key_prefix, namespaces, role),
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def list_all(conn: Connection) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT id, name, key_prefix, namespaces, role, created_at, revoked_at, "
        "last_used_at FROM api_keys ORDER BY created_at"
    )
    return await cur.fetchall()


async def revoke(conn: Connection, name_or_id: str) -> dict[str, Any] | None:
    try:
        key_id: uuid.UUID | None = uuid.UUID(name_or_id)
    except ValueError:
        key_id = None
    cur = await conn.execute(
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) "
        "WHERE name = %s OR id = %s RETURNING id, name, revoked_at",
        (name_or_id, key_id),
    )
    return await cur.fetchone()


async def count_active(conn: Connection) -> int:
    cur = await conn.execute("SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL")
    row = await cur.fetchone()
    return int(row["n"]) if row else 0
