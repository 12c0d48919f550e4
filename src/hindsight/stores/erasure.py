"""SQL for erasure: what a deleted memory or an erased namespace leaves behind, removed.

The history of a deleted memory is cleared by its trigger (migration 0013); what the
trigger cannot know about is cleared here: values copied into the recall log and job
results, and embedding-cache entries of texts nothing uses any more.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from hindsight.db.pool import Connection
from hindsight.stores import policies
from hindsight.stores.attribution import attribute

# Every table holding rows of a namespace, in the order a namespace is erased. History and
# keyword statistics go before the memories, so the receipt counts the rows that were
# there; what the memories' trigger then writes (tombstones, negative deltas) is swept
# after them.
NAMESPACE_TABLES = (
    "memory_history",
    "keyword_stats",
    "long_term_memory",
    "recall_feedback",
    "recall_log",
    "consolidation_jobs",
    "working_memory",
    "session_demotions",
    "working_sessions",
    "namespace_lifecycle",
    "namespace_policy",
)


async def history_texts(conn: Connection, ids: list[uuid.UUID]) -> list[tuple[str, str]]:
    """Every (key, value) the memories ever had, before the trigger clears them."""
    cur = await conn.execute(
        "SELECT DISTINCT h.mem_key AS key, v.value FROM memory_history h, "
        "unnest(ARRAY[h.old_value, h.new_value]) AS v(value) "
        "WHERE h.memory_id = ANY(%s) AND v.value IS NOT NULL",
        (ids,),
    )
    return [(r["key"], r["value"]) for r in await cur.fetchall()]


async def scrub_recall_log(conn: Connection, namespace: str, ids: list[uuid.UUID]) -> int:
    """Recalls that returned these memories keep the ids and scores, not the values."""
    cur = await conn.execute(
        """
        UPDATE recall_log r SET results = (
            SELECT jsonb_agg(CASE WHEN e->>'id' = ANY(%(ids)s::text[])
                                  THEN jsonb_set(e, '{value}', 'null') ELSE e END
                             ORDER BY x.ord)
            FROM jsonb_array_elements(r.results) WITH ORDINALITY AS x(e, ord))
        WHERE r.namespace = %(ns)s AND r.result_ids && %(uuids)s::uuid[]
        """,
        {"ns": namespace, "ids": [str(i) for i in ids], "uuids": ids},
    )
    return cur.rowcount


async def scrub_job_results(conn: Connection, namespace: str, values: list[str]) -> int:
    """Jobs list the candidates they dropped with their values; those values go."""
    if not values:
        return 0
    cur = await conn.execute(
        """
        UPDATE consolidation_jobs j SET result = jsonb_set(j.result, '{dropped}', (
            SELECT coalesce(jsonb_agg(CASE WHEN d->>'value' = ANY(%(values)s::text[])
                                           THEN jsonb_set(d, '{value}', 'null') ELSE d END
                                      ORDER BY x.ord), '[]'::jsonb)
            FROM jsonb_array_elements(j.result->'dropped') WITH ORDINALITY AS x(d, ord)))
        WHERE j.namespace = %(ns)s AND jsonb_typeof(j.result->'dropped') = 'array'
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(j.result->'dropped') d
                      WHERE d->>'value' = ANY(%(values)s::text[]))
        """,
        {"ns": namespace, "values": values},
    )
    return cur.rowcount


async def drop_cached_embeddings(conn: Connection, hashes: list[bytes]) -> int:
    """Cache entries of these texts, for every model."""
    if not hashes:
        return 0
    cur = await conn.execute(
        "DELETE FROM embedding_cache WHERE content_hash = ANY(%s)", (list(set(hashes)),)
    )
    return cur.rowcount


async def namespace_texts(
    conn: Connection, namespace: str
) -> tuple[list[tuple[str, str]], list[str]]:
    """Every (key, value) the namespace's memories ever had, and every recall query."""
    cur = await conn.execute(
        "SELECT m.mem_key AS key, m.mem_value AS value FROM long_term_memory m "
        "WHERE m.namespace = %(ns)s "
        "UNION SELECT h.mem_key, v.value FROM memory_history h, "
        "unnest(ARRAY[h.old_value, h.new_value]) AS v(value) "
        "WHERE h.namespace = %(ns)s AND v.value IS NOT NULL",
        {"ns": namespace},
    )
    texts = [(r["key"], r["value"]) for r in await cur.fetchall()]
    cur = await conn.execute(
        "SELECT DISTINCT query FROM recall_log WHERE namespace = %s", (namespace,)
    )
    return texts, [r["query"] for r in await cur.fetchall()]


async def erase_namespace(conn: Connection, namespace: str, *, actor: str) -> dict[str, int]:
    """Delete every row of the namespace; rows deleted per table."""
    counts: dict[str, int] = {}
    cur = await conn.execute(
        "SELECT count(*) AS n FROM memory_access a WHERE a.namespace = %s",
        (namespace,),
    )
    row: dict[str, Any] | None = await cur.fetchone()
    counts["memory_access"] = int(row["n"]) if row else 0
    await attribute(conn, actor=actor)
    for table in NAMESPACE_TABLES:
        cur = await conn.execute(f"DELETE FROM {table} WHERE namespace = %s", (namespace,))
        counts[table] = cur.rowcount
    for table in ("memory_history", "keyword_stats"):  # written by the deletion itself
        await conn.execute(f"DELETE FROM {table} WHERE namespace = %s", (namespace,))
    # emptied by the deletion's triggers; a copy whose memory was gone already (a session
    # with triggers off) would stay
    for table in ("memory_keywords", "memory_facets"):
        await conn.execute(f"DELETE FROM {table} WHERE namespace = %s", (namespace,))
    if counts["namespace_policy"]:
        await policies.bump_version(conn)
    return counts


async def record_erasure(
    conn: Connection, record_id: uuid.UUID, namespace: str, actor: str
) -> None:
    """Which namespace, when, by whom: nothing of what it held."""
    await conn.execute(
        "INSERT INTO namespace_erasures (id, erased_namespace, actor) VALUES (%s, %s, %s)",
        (record_id, namespace, actor),
    )


async def last_erased_at(conn: Connection, namespace: str) -> datetime | None:
    cur = await conn.execute(
        "SELECT max(erased_at) AS at FROM namespace_erasures WHERE erased_namespace = %s",
        (namespace,),
    )
    row: dict[str, Any] | None = await cur.fetchone()
    return row["at"] if row else None


# What a namespace's rows are copied into besides its own tables (texts, by content hash).
SHARED_TABLES = ("embedding_cache",)
# Emptied of a namespace by long_term_memory's deletion triggers (the copies also by a
# DELETE of their own in erase_namespace, for rows a trigger-less session left behind).
MEMORY_TRIGGER_TABLES = ("memory_access", "memory_keywords", "memory_facets")


async def vacuum(conn: Connection, *, full: bool) -> None:
    """VACUUM the tables an erasure touches; `conn` must be in autocommit mode.

    A plain VACUUM removes the dead rows and their index entries but leaves their bytes in
    the pages' free space (measured: heap and index files still hold every canary), so only
    VACUUM FULL, which writes each table and index anew and truncates the old files,
    takes them off the disk. It holds an ACCESS EXCLUSIVE lock on each table while it runs.
    """
    verb = "VACUUM (FULL, ANALYZE)" if full else "VACUUM (ANALYZE)"
    for table in (*NAMESPACE_TABLES, *SHARED_TABLES, *MEMORY_TRIGGER_TABLES):
        await conn.execute(f"{verb} {table}")


async def drop_old_wal(conn: Connection) -> None:
    """Let the WAL segments holding the erased rows go: a checkpoint, a switch to a new
    segment, and a checkpoint whose redo point lies in it. Segments before it are then
    unlinked, or, with `wal_recycle` on (PostgreSQL's default), renamed for reuse with
    their old contents until overwritten; the embedded server runs with it off."""
    await conn.execute("CHECKPOINT")
    await conn.execute("SELECT pg_switch_wal()")
    await conn.execute("CHECKPOINT")
