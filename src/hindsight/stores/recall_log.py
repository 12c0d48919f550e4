"""SQL for the recall log: what each recall was asked and what it returned."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection
from hindsight.stores.arrays import array_literal


@dataclass(frozen=True)
class RecallEntry:
    id: uuid.UUID
    namespace: str
    query: str
    k: int
    filters: dict[str, Any]
    result_ids: list[uuid.UUID]
    scores: list[float]
    results: list[dict[str, Any]]
    actor: str
    duration_ms: float
    created_at: datetime


async def relax_commit(conn: Connection) -> None:
    """This transaction's commit does not wait for the disk (only a crash of PostgreSQL
    itself could lose it, never one of the service)."""
    await conn.execute("SET LOCAL synchronous_commit = off")


async def insert_many(conn: Connection, entries: list[RecallEntry]) -> None:
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO recall_log (id, namespace, query, k, filters, result_ids, scores, "
            "results, actor, duration_ms, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s::uuid[], %s::float8[], %s, %s, %s, %s) "
            "ON CONFLICT (namespace, id) DO NOTHING",
            [
                (
                    e.id,
                    e.namespace,
                    e.query,
                    e.k,
                    Jsonb(e.filters),
                    array_literal(e.result_ids),
                    array_literal(e.scores),
                    Jsonb(e.results),
                    e.actor,
                    e.duration_ms,
                    e.created_at,
                )
                for e in entries
            ],
        )


async def get(conn: Connection, namespace: str, recall_id: uuid.UUID) -> dict[str, Any] | None:
    cur = await conn.execute(
        "SELECT id, namespace, query, k, filters, result_ids, scores, results, actor, "
        "duration_ms, created_at FROM recall_log WHERE namespace = %s AND id = %s",
        (namespace, recall_id),
    )
    return await cur.fetchone()


async def recalled(
    conn: Connection,
    namespace: str,
    actor: str,
    memory_ids: Collection[uuid.UUID],
    since: datetime,
) -> set[uuid.UUID]:
    """Which of these memories a recall by `actor` returned since then."""
    if not memory_ids:
        return set()
    ids = sorted(memory_ids)
    cur = await conn.execute(
        "SELECT DISTINCT m.id FROM recall_log r, unnest(r.result_ids) AS m(id) "
        "WHERE r.namespace = %s AND r.created_at >= %s AND r.actor = %s "
        "AND r.result_ids && %s::uuid[] AND m.id = ANY(%s::uuid[])",
        (namespace, since, actor, array_literal(ids), array_literal(ids)),
    )
    return {row["id"] for row in await cur.fetchall()}
