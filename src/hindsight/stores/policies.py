"""SQL for namespace policies: the fields a namespace set, as a JSON document."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection


async def get(conn: Connection, namespace: str) -> dict[str, Any] | None:
    cur = await conn.execute(
        "SELECT policy FROM namespace_policy WHERE namespace = %s", (namespace,)
    )
    row = await cur.fetchone()
    return None if row is None else dict(row["policy"])


async def version(conn: Connection) -> str | None:
    """The policies' version (migration 0022), moved by every change the service makes to
    them, in the changing transaction. None if the row is missing (then nothing is cached)."""
    cur = await conn.execute("SELECT value FROM hindsight_meta WHERE name = 'policy_version'")
    row = await cur.fetchone()
    return None if row is None else str(row["value"])


async def bump_version(conn: Connection) -> None:
    """Call in the transaction that changes a policy: other processes then drop theirs."""
    await conn.execute(
        "UPDATE hindsight_meta SET value = (value::bigint + 1)::text WHERE name = 'policy_version'"
    )


async def put(conn: Connection, namespace: str, policy: dict[str, Any], *, actor: str) -> None:
    async with conn.transaction():
        await conn.execute(
            "INSERT INTO namespace_policy (namespace, policy, updated_by) VALUES (%s, %s, %s) "
            # the proposed row's default, now(): Citus takes no now() in DO UPDATE SET
            "ON CONFLICT (namespace) DO UPDATE SET policy = excluded.policy, "
            "updated_by = excluded.updated_by, updated_at = excluded.updated_at",
            (namespace, Jsonb(policy), actor),
        )
        await bump_version(conn)
