"""SQL for the lifecycle's moves outside the rules: capacity, session demotion, warming a
recalled memory, and deleting an expired one that is observed again.

The writes set the history trigger's actor and reason first (`stores.attribution`) and
clear them after, as the rules' batches do.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute, clear
from hindsight.stores.grouping import by_namespace
from hindsight.stores.lifecycle_rules import value_sql


async def delete_expired_keys(conn: Connection, namespace: str, keys: list[str]) -> int:
    """Delete the expired memories holding these keys, so that observing one starts over."""
    await attribute(conn, actor="expiry", reason="expires_at passed", change="expired")
    cur = await conn.execute(
        "DELETE FROM long_term_memory m WHERE m.namespace = %(ns)s AND m.mem_key = ANY(%(keys)s) "
        "AND m.live AND m.expires_at <= now()",
        {"ns": namespace, "keys": keys},
    )
    await clear(conn)  # set while scanning, even when nothing matched
    return cur.rowcount


async def warm(conn: Connection, keys: list[tuple[str, uuid.UUID]]) -> int:
    """Recalled cold memories, by (namespace, id), become active again."""
    await attribute(conn, actor="recall", reason="recalled")
    warmed = 0
    for ns, ids in by_namespace(keys):
        cur = await conn.execute(
            "UPDATE long_term_memory m SET status = 'active', updated_at = now() "
            "WHERE m.namespace = %s AND m.id = ANY(%s) AND m.status = 'cold'",
            (ns, ids),
        )
        warmed += cur.rowcount
    await clear(conn)
    return warmed


async def archive_lowest_value(
    conn: Connection, namespace: str, n: int, params: dict[str, Any], *, actor: str, reason: str
) -> list[dict[str, Any]]:
    """Archive the `n` active, non-permanent memories of least value (dry run: n = 0 rows
    moved, see `lowest_value`)."""
    await attribute(conn, actor=actor, reason=reason)
    cur = await conn.execute(
        f"""
        WITH picked AS (
            SELECT m.id, m.mem_key AS key, {value_sql()} AS value
            FROM long_term_memory m
            LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id
            WHERE m.namespace = %(ns)s AND m.status = 'active' AND NOT m.permanent
            ORDER BY 3, m.id LIMIT %(n)s FOR UPDATE OF m SKIP LOCKED
        )
        UPDATE long_term_memory m SET status = 'archived', changed_by = %(actor)s,
               updated_at = now()
        FROM picked WHERE m.namespace = %(ns)s AND m.id = picked.id
        RETURNING picked.id, picked.key, picked.value
        """,
        {**params, "ns": namespace, "n": n, "actor": actor, "reason": reason},
    )
    # RETURNING comes in no set order: report the moves lowest value first, as chosen
    rows = sorted(await cur.fetchall(), key=lambda r: (r["value"], r["id"]))
    await clear(conn)
    return rows


async def lowest_value(
    conn: Connection, namespace: str, n: int, params: dict[str, Any]
) -> list[dict[str, Any]]:
    cur = await conn.execute(
        f"SELECT m.id, m.mem_key AS key, {value_sql()} AS value "
        "FROM long_term_memory m LEFT JOIN memory_access a "
        "ON a.namespace = m.namespace AND a.memory_id = m.id "
        "WHERE m.namespace = %(ns)s AND m.status = 'active' AND NOT m.permanent "
        "ORDER BY 3, m.id LIMIT %(n)s",
        {**params, "ns": namespace, "n": n},
    )
    return await cur.fetchall()


async def due_demotions(
    conn: Connection, namespace: str, before: datetime, limit: int
) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT session_id, ended_at FROM session_demotions WHERE namespace = %s "
        "AND ended_at <= %s ORDER BY ended_at, session_id LIMIT %s FOR UPDATE SKIP LOCKED",
        (namespace, before, limit),
    )
    return await cur.fetchall()


async def demote_session(
    conn: Connection, namespace: str, session_id: str, factor: float, *, actor: str
) -> list[dict[str, Any]]:
    """Lower the importance of the event and experience memories the session produced
    (consolidation stores them with source `session:<id>`), and mark the session done."""
    await attribute(
        conn,
        actor=actor,
        reason=f"session {session_id} ended: its events are over, their lessons stay",
    )
    cur = await conn.execute(
        "UPDATE long_term_memory m SET importance = m.importance * %(factor)s, "
        "changed_by = %(actor)s, updated_at = now() "
        "WHERE m.namespace = %(ns)s AND m.source = %(source)s "
        "AND m.memory_type IN ('event', 'experience') AND NOT m.permanent "
        "RETURNING m.id, m.mem_key AS key, m.importance",
        {"ns": namespace, "source": f"session:{session_id}", "factor": factor, "actor": actor},
    )
    rows = await cur.fetchall()
    await clear(conn)
    await conn.execute(
        "DELETE FROM session_demotions WHERE namespace = %s AND session_id = %s",
        (namespace, session_id),
    )
    return rows
