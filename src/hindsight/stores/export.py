"""SQL for export and restore of a namespace."""

from __future__ import annotations

import uuid
from typing import Any

from pgvector import HalfVector, SparseVector
from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute

_MEMORY = """
    m.id, m.mem_key AS key, m.mem_value AS value, m.memory_type,
    m.confidence::float8 AS confidence, m.importance, m.observation_count,
    coalesce(a.access_count, 0) AS access_count, a.last_accessed, m.source, m.tags,
    m.metadata, m.verified, m.permanent, m.status, m.created_at, m.updated_at,
    m.last_observed, m.occurred_at
"""
_HISTORY = """
    h.memory_id, h.change, h.mem_key AS key, h.memory_type, h.old_value, h.new_value,
    h.old_confidence::float8 AS old_confidence, h.new_confidence::float8 AS new_confidence,
    h.observation_count, h.source, h.actor, h.changed_at
"""


async def memory_page(
    conn: Connection, namespace: str, *, after: uuid.UUID | None, limit: int
) -> list[dict[str, Any]]:
    """Every memory of the namespace, whatever its status, in id order."""
    cur = await conn.execute(
        f"SELECT {_MEMORY} FROM long_term_memory m "
        "LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id "
        "WHERE m.namespace = %(ns)s AND (%(after)s::uuid IS NULL OR m.id > %(after)s) "
        "ORDER BY m.id LIMIT %(limit)s",
        {"ns": namespace, "after": after, "limit": limit},
    )
    return await cur.fetchall()


async def histories(conn: Connection, namespace: str, ids: list[uuid.UUID]) -> list[dict[str, Any]]:
    cur = await conn.execute(
        f"SELECT {_HISTORY} FROM memory_history h WHERE h.namespace = %s "
        "AND h.memory_id = ANY(%s) ORDER BY h.memory_id, h.id",
        (namespace, ids),
    )
    return await cur.fetchall()


async def sessions(conn: Connection, namespace: str) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT to_jsonb(s) - 'namespace' AS row FROM working_sessions s "
        "WHERE s.namespace = %s ORDER BY s.session_id",
        (namespace,),
    )
    return [r["row"] for r in await cur.fetchall()]


async def steps(conn: Connection, namespace: str, session_id: str) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT to_jsonb(w) - 'namespace' - 'id' AS row FROM working_memory w "
        "WHERE w.namespace = %s AND w.session_id = %s ORDER BY w.step_index",
        (namespace, session_id),
    )
    return [r["row"] for r in await cur.fetchall()]


async def has_data(conn: Connection, namespace: str) -> bool:
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM long_term_memory WHERE namespace = %(ns)s) "
        "OR EXISTS (SELECT 1 FROM working_sessions WHERE namespace = %(ns)s) AS used",
        {"ns": namespace},
    )
    row = await cur.fetchone()
    return bool(row and row["used"])


async def restore_memory(
    conn: Connection,
    namespace: str,
    m: dict[str, Any],
    *,
    memory_id: uuid.UUID,
    embedding: HalfVector,
    keywords: SparseVector,
    keyword_terms: list[int],
    actor: str,
) -> None:
    """Insert one exported memory as it was, then replace the history entry the insert
    trigger wrote with the exported history."""
    await attribute(conn, actor=actor)
    await conn.execute(
        "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type, "
        "embedding, keywords, keyword_terms, confidence, importance, observation_count, "
        "source, tags, metadata, verified, permanent, status, changed_by, created_at, "
        "updated_at, last_observed, occurred_at) "
        "VALUES (%(id)s, %(ns)s, %(key)s, %(value)s, %(memory_type)s, %(embedding)s, "
        "%(keywords)s, %(terms)s, %(confidence)s, %(importance)s, %(observation_count)s, "
        "%(source)s, %(tags)s, %(metadata)s, %(verified)s, %(permanent)s, %(status)s, "
        "%(actor)s, %(created_at)s, %(updated_at)s, %(last_observed)s, "
        "%(occurred_at)s::timestamptz)",
        {
            **m,
            "id": memory_id,
            "ns": namespace,
            "embedding": embedding,
            "keywords": keywords,
            "terms": keyword_terms,
            "metadata": Jsonb(m["metadata"]),
            "actor": actor,
            # version 1 exports predate it
            "occurred_at": m.get("occurred_at"),
        },
    )
    await conn.execute("DELETE FROM memory_history WHERE memory_id = %s", (memory_id,))
    history = m.get("history") or []
    if history:
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO memory_history (memory_id, namespace, mem_key, change, "
                "memory_type, old_value, new_value, old_confidence, new_confidence, "
                "observation_count, source, actor, changed_at) VALUES (%(memory_id)s, "
                "%(ns)s, %(key)s, %(change)s, %(memory_type)s, %(old_value)s, %(new_value)s, "
                "%(old_confidence)s, %(new_confidence)s, %(observation_count)s, %(source)s, "
                "%(actor)s, %(changed_at)s)",
                [{**h, "memory_id": memory_id, "ns": namespace} for h in history],
            )
    if m.get("access_count"):
        await conn.execute(
            "INSERT INTO memory_access (namespace, memory_id, access_count, last_accessed) "
            "VALUES (%s, %s, %s, %s)",
            (namespace, memory_id, m["access_count"], m.get("last_accessed")),
        )


async def restore_session(conn: Connection, namespace: str, row: dict[str, Any]) -> None:
    await conn.execute(
        "INSERT INTO working_sessions SELECT * FROM jsonb_populate_record("
        "NULL::working_sessions, %s::jsonb || jsonb_build_object('namespace', %s::text))",
        (Jsonb(row), namespace),
    )


async def restore_steps(conn: Connection, namespace: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO working_memory (namespace, session_id, step_index, role, content, "
            "summary, metadata, idempotency_key, created_at, expires_at, occurred_at) "
            "SELECT %(ns)s, r.session_id, r.step_index, r.role, r.content, r.summary, "
            "r.metadata, r.idempotency_key, r.created_at, r.expires_at, r.occurred_at "
            "FROM jsonb_populate_record(NULL::working_memory, %(row)s) r",
            [{"ns": namespace, "row": Jsonb(r)} for r in rows],
        )
