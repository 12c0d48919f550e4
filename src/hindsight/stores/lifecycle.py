"""SQL for the lifecycle pass's own state: its lock, the namespaces it visits, each one's
cursor and counts (`namespace_lifecycle`), and when it last ran. The rules and their
batches are in `lifecycle_rules`; the moves outside the rules (capacity, demotion,
warming, expired keys) in `lifecycle_moves`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hindsight.db.pool import Connection, distributed

LIFECYCLE_LOCK = 7_361_582_014


async def namespaces(conn: Connection) -> list[str]:
    """Every namespace holding memories, by a skip scan of the (namespace, id) index. On
    Citus, which runs a recursive CTE only within one namespace, each shard lists its own
    (a DISTINCT that every shard runs at once)."""
    if distributed(conn):
        cur = await conn.execute(
            "SELECT DISTINCT namespace FROM long_term_memory "
            "UNION SELECT namespace FROM session_demotions"
        )
        return sorted(r["namespace"] for r in await cur.fetchall())
    cur = await conn.execute(
        """
        WITH RECURSIVE ns AS (
            (SELECT namespace FROM long_term_memory ORDER BY namespace LIMIT 1)
            UNION ALL
            SELECT (SELECT m.namespace FROM long_term_memory m WHERE m.namespace > ns.namespace
                    ORDER BY m.namespace LIMIT 1)
            FROM ns WHERE ns.namespace IS NOT NULL
        )
        SELECT namespace FROM ns WHERE namespace IS NOT NULL
        UNION
        SELECT namespace FROM session_demotions
        """
    )
    return sorted(r["namespace"] for r in await cur.fetchall())


async def state(conn: Connection, namespace: str) -> dict[str, Any] | None:
    cur = await conn.execute(
        "SELECT namespace, last_pass_at, low_confidence_pass_at, merge_cursor, active_count, "
        "capacity, capacity_archived FROM namespace_lifecycle WHERE namespace = %s",
        (namespace,),
    )
    return await cur.fetchone()


async def save_state(conn: Connection, namespace: str, **fields: Any) -> None:
    names = ["namespace", *fields]
    sets = ", ".join(f"{n} = excluded.{n}" for n in fields)
    await conn.execute(
        f"INSERT INTO namespace_lifecycle ({', '.join(names)}) "
        f"VALUES ({', '.join(['%s'] * len(names))}) "
        f"ON CONFLICT (namespace) DO UPDATE SET {sets}",
        (namespace, *fields.values()),
    )


async def count_active(conn: Connection, namespace: str, now: datetime) -> int:
    cur = await conn.execute(
        "SELECT count(*) AS n FROM long_term_memory m WHERE m.namespace = %s "
        "AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > %s)",
        (namespace, now),
    )
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def over_capacity(conn: Connection) -> list[dict[str, Any]]:
    """Namespaces the last pass found over their capacity."""
    cur = await conn.execute(
        "SELECT namespace, active_count, capacity, capacity_archived, last_pass_at "
        "FROM namespace_lifecycle WHERE active_count > capacity ORDER BY namespace LIMIT 100"
    )
    return await cur.fetchall()


async def tier_counts(conn: Connection, namespace: str) -> dict[str, int]:
    cur = await conn.execute(
        "SELECT CASE WHEN expires_at <= now() THEN 'expired' ELSE status END AS status, "
        "count(*) AS n FROM long_term_memory WHERE namespace = %s GROUP BY 1",
        (namespace,),
    )
    return {r["status"]: int(r["n"]) for r in await cur.fetchall()}


async def last_run(conn: Connection) -> datetime | None:
    cur = await conn.execute(
        "SELECT value::timestamptz AS at FROM hindsight_meta WHERE name = 'lifecycle_last_run'"
    )
    row = await cur.fetchone()
    return row["at"] if row else None


async def set_last_run(conn: Connection, at: datetime) -> None:
    await conn.execute(
        "INSERT INTO hindsight_meta (name, value) VALUES ('lifecycle_last_run', %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (at.isoformat(),),
    )


async def memory_counts(conn: Connection, namespace: str | None = None) -> dict[str, int]:
    """Memories per namespace (every status: each can still be expired or deleted), or of
    `namespace` only: the totals a pass's progress is shown against."""
    if namespace is None:
        cur = await conn.execute(
            "SELECT namespace, count(*) AS n FROM long_term_memory GROUP BY namespace"
        )
    else:
        cur = await conn.execute(
            "SELECT namespace, count(*) AS n FROM long_term_memory WHERE namespace = %s "
            "GROUP BY namespace",
            (namespace,),
        )
    return {r["namespace"]: int(r["n"]) for r in await cur.fetchall()}
