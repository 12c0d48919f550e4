"""SQL for recall feedback: which of a recall's results the agent actually used."""

from __future__ import annotations

import uuid
from typing import Any

from hindsight.db.pool import Connection


async def returned_ids(
    conn: Connection, namespace: str, recall_id: uuid.UUID
) -> list[uuid.UUID] | None:
    cur = await conn.execute(
        "SELECT result_ids FROM recall_log WHERE namespace = %s AND id = %s",
        (namespace, recall_id),
    )
    row = await cur.fetchone()
    return None if row is None else list(row["result_ids"])


async def record(
    conn: Connection,
    namespace: str,
    recall_id: uuid.UUID,
    verdicts: dict[uuid.UUID, bool],
    *,
    actor: str,
) -> dict[str, Any]:
    """Store each verdict once per (recall, memory) and add the new ones to the memories'
    used/unused counts; a repeated report of the same pair changes nothing."""
    ids = sorted(verdicts)
    cur = await conn.execute(
        """
        WITH new AS (
            INSERT INTO recall_feedback (recall_id, memory_id, namespace, used, actor)
            SELECT %(recall)s, v.id, %(ns)s, v.used, %(actor)s
            FROM unnest(%(ids)s::uuid[], %(used)s::bool[]) AS v(id, used)
            WHERE EXISTS (SELECT 1 FROM long_term_memory m
                          WHERE m.namespace = %(ns)s AND m.id = v.id)
            ORDER BY v.id
            ON CONFLICT (namespace, recall_id, memory_id) DO NOTHING
            RETURNING memory_id, used
        ),
        counted AS (
            INSERT INTO memory_access AS a (namespace, memory_id, used_count, unused_count,
                                            last_used)
            SELECT %(ns)s, memory_id, CASE WHEN used THEN 1 ELSE 0 END,
                   CASE WHEN used THEN 0 ELSE 1 END,
                   CASE WHEN used THEN now() END
            FROM new ORDER BY memory_id
            ON CONFLICT (namespace, memory_id) DO UPDATE SET
                used_count = a.used_count + excluded.used_count,
                unused_count = a.unused_count + excluded.unused_count,
                last_used = coalesce(excluded.last_used, a.last_used)
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM new) AS recorded, (SELECT count(*) FROM counted) AS counted
        """,
        {
            "recall": recall_id,
            "ns": namespace,
            "actor": actor,
            "ids": ids,
            "used": [verdicts[i] for i in ids],
        },
    )
    row = await cur.fetchone()
    return {"recorded": int(row["recorded"]) if row else 0}


async def counts(
    conn: Connection, namespace: str, ids: list[uuid.UUID]
) -> dict[uuid.UUID, dict[str, Any]]:
    cur = await conn.execute(
        "SELECT memory_id, used_count, unused_count, last_used FROM memory_access "
        "WHERE namespace = %s AND memory_id = ANY(%s)",
        (namespace, ids),
    )
    return {r["memory_id"]: r for r in await cur.fetchall()}
