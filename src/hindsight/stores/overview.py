"""SQL for what an operator looks at: counts per namespace (the metrics gauges and the
panel), recent recalls, the sessions of a namespace and their consolidation jobs."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection
from hindsight.stores.consolidation_jobs import JOB_COLUMNS


async def memory_counts(conn: Connection) -> list[tuple[str, str, int]]:
    """(namespace, status, memories) for every namespace."""
    cur = await conn.execute(
        "SELECT namespace, status, count(*) AS n FROM long_term_memory GROUP BY 1, 2"
    )
    return [(r["namespace"], r["status"], int(r["n"])) for r in await cur.fetchall()]


async def job_counts(conn: Connection) -> dict[str, int]:
    cur = await conn.execute(
        "SELECT status, count(*) AS n FROM consolidation_jobs "
        "WHERE status IN ('pending', 'running') GROUP BY status"
    )
    return {r["status"]: int(r["n"]) for r in await cur.fetchall()}


async def namespaces(
    conn: Connection, only: Sequence[str] | None, default_capacity: int
) -> list[dict[str, Any]]:
    """Every namespace holding memories, sessions or recalls (or just `only`), with its
    memories per status, open sessions, recalls of the last hour and day, and capacity
    (its policy's, else `default_capacity`)."""
    cur = await conn.execute(
        """
        WITH memories AS (  -- the one pass over long_term_memory
            SELECT namespace, jsonb_object_agg(status, n) AS by_status
            FROM (SELECT namespace, status, count(*) AS n FROM long_term_memory
                  WHERE %(only)s::text[] IS NULL OR namespace = ANY(%(only)s::text[])
                  GROUP BY 1, 2) c GROUP BY namespace
        ),
        names AS (
            SELECT namespace FROM memories
            UNION SELECT namespace FROM working_sessions
            UNION SELECT namespace FROM recall_log WHERE created_at > now() - interval '1 day'
        ),
        sessions AS (
            SELECT namespace, count(*) AS open FROM working_sessions
            WHERE status = 'active' AND expires_at > now() GROUP BY namespace
        ),
        recalls AS (
            SELECT namespace,
                   count(*) FILTER (WHERE created_at > now() - interval '1 hour') AS hour,
                   count(*) AS day
            FROM recall_log WHERE created_at > now() - interval '1 day' GROUP BY namespace
        )
        SELECT n.namespace, coalesce(m.by_status, '{}'::jsonb) AS memories,
               coalesce(s.open, 0) AS open_sessions,
               coalesce(r.hour, 0) AS recalls_last_hour, coalesce(r.day, 0) AS recalls_last_day,
               coalesce((p.policy #>> '{capacity,max_active_memories}')::bigint,
                        %(capacity)s) AS capacity
        FROM names n
        LEFT JOIN namespace_policy p USING (namespace)
        LEFT JOIN memories m USING (namespace)
        LEFT JOIN sessions s USING (namespace)
        LEFT JOIN recalls r USING (namespace)
        WHERE %(only)s::text[] IS NULL OR n.namespace = ANY(%(only)s::text[])
        ORDER BY n.namespace
        """,
        {"only": list(only) if only is not None else None, "capacity": default_capacity},
    )
    return list(await cur.fetchall())


async def recall_hours(conn: Connection, namespace: str) -> list[dict[str, Any]]:
    """Recalls per hour over the last day, oldest first (hours without any left out)."""
    cur = await conn.execute(
        "SELECT date_trunc('hour', created_at) AS hour, count(*) AS recalls, "
        "avg(duration_ms) AS mean_ms FROM recall_log "
        "WHERE namespace = %s AND created_at > now() - interval '1 day' GROUP BY 1 ORDER BY 1",
        (namespace,),
    )
    return list(await cur.fetchall())


async def recent_recalls(
    conn: Connection,
    namespace: str,
    *,
    limit: int,
    before: uuid.UUID | None,
    memory_key: str | None,
    actor: str | None,
    query: str | None,
) -> list[dict[str, Any]]:
    """Newest recalls first; `before` is the last id of the previous page."""
    cur = await conn.execute(
        """
        SELECT id, namespace, query, k, filters, results, actor, duration_ms, created_at
        FROM recall_log
        WHERE namespace = %(ns)s
          AND (%(before)s::uuid IS NULL OR (created_at, id) <
               (SELECT created_at, id FROM recall_log
                WHERE namespace = %(ns)s AND id = %(before)s::uuid))
          AND (%(key)s::jsonb IS NULL OR results @> %(key)s::jsonb)
          AND (%(actor)s::text IS NULL OR actor = %(actor)s::text)
          AND (%(q)s::text IS NULL OR strpos(lower(query), lower(%(q)s::text)) > 0)
        ORDER BY created_at DESC, id DESC
        LIMIT %(limit)s
        """,
        {
            "ns": namespace,
            "before": before,
            "key": Jsonb([{"key": memory_key}]) if memory_key is not None else None,
            "actor": actor,
            "q": query,
            "limit": limit,
        },
    )
    return list(await cur.fetchall())


async def sessions(conn: Connection, namespace: str, *, limit: int) -> list[dict[str, Any]]:
    """The namespace's sessions, most recently written first, with their live steps."""
    cur = await conn.execute(
        """
        SELECT s.session_id, s.status, s.next_step, s.metadata, s.created_at, s.updated_at,
               s.ended_at, s.expires_at,
               (SELECT count(*) FROM working_memory w WHERE w.namespace = s.namespace
                  AND w.session_id = s.session_id AND w.expires_at > now()) AS live_steps
        FROM working_sessions s WHERE s.namespace = %s
        ORDER BY s.updated_at DESC LIMIT %s
        """,
        (namespace, limit),
    )
    return list(await cur.fetchall())


async def session_jobs(
    conn: Connection, namespace: str, session_id: str, *, limit: int
) -> list[dict[str, Any]]:
    cur = await conn.execute(
        f"SELECT {JOB_COLUMNS} FROM consolidation_jobs j "
        "WHERE j.namespace = %s AND j.session_id = %s ORDER BY j.created_at DESC LIMIT %s",
        (namespace, session_id, limit),
    )
    return list(await cur.fetchall())
