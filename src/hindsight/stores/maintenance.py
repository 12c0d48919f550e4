"""SQL for periodic maintenance: expiry purge, keyword statistics, recall-log retention."""

from __future__ import annotations

from typing import Any

from hindsight.db.pool import Connection

# Any fixed number; the replica that holds it runs maintenance, the others skip a turn.
MAINTENANCE_LOCK = 7_361_582_002


async def try_lock(conn: Connection, lock: int = MAINTENANCE_LOCK) -> bool:
    """Session level: held across the pass's transactions, released by `unlock` (or by the
    session's end, if the process dies). `lock` names the pass (the lifecycle has its own)."""
    cur = await conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (lock,))
    row = await cur.fetchone()
    return bool(row and row["ok"])


async def unlock(conn: Connection, lock: int = MAINTENANCE_LOCK) -> None:
    await conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))


async def purge_expired_steps(conn: Connection, batch: int = 10_000) -> int:
    """Delete expired steps, a batch at a time so no long lock is held. Steps of a session
    with an open consolidation job wait for it: consolidation must not lose a step."""
    cur = await conn.execute(
        "DELETE FROM working_memory WHERE (namespace, id) IN (SELECT w.namespace, w.id "
        "FROM working_memory w "
        "WHERE w.expires_at <= now() AND NOT EXISTS (SELECT 1 FROM consolidation_jobs j "
        "WHERE j.namespace = w.namespace AND j.session_id = w.session_id "
        "AND j.status IN ('pending', 'running')) LIMIT %s)",
        (batch,),
    )
    return cur.rowcount


async def purge_expired_sessions(conn: Connection) -> int:
    cur = await conn.execute(
        "DELETE FROM working_sessions s WHERE s.expires_at <= now() "
        "AND NOT EXISTS (SELECT 1 FROM working_memory w "
        "WHERE w.namespace = s.namespace AND w.session_id = s.session_id)"
    )
    return cur.rowcount


async def purge_recall_log(conn: Connection, retention_days: int) -> int:
    cur = await conn.execute(
        "DELETE FROM recall_log WHERE created_at < now() - make_interval(days => %s)",
        (retention_days,),
    )
    return cur.rowcount


async def compact_keyword_stats(conn: Connection) -> int:
    """Merge the delta rows of every (namespace, term) touched since the last run into one.

    The sums, and so every IDF, are the same before and after; only the row count shrinks.
    """
    cur = await conn.execute(
        "SELECT coalesce((SELECT value::bigint FROM hindsight_meta "
        "WHERE name = 'keyword_stats_watermark'), 0) AS w"
    )
    row = await cur.fetchone()
    watermark = int(row["w"]) if row else 0
    cur = await conn.execute(
        """
        WITH touched AS (
            SELECT DISTINCT namespace, term FROM keyword_stats WHERE id > %(w)s
        ),
        moved AS (
            DELETE FROM keyword_stats k USING touched t
            WHERE k.namespace = t.namespace AND k.term = t.term
            RETURNING k.id, k.namespace, k.term, k.df
        ),
        merged AS (
            INSERT INTO keyword_stats (namespace, term, df)
            SELECT namespace, term, sum(df) FROM moved GROUP BY namespace, term
            HAVING sum(df) <> 0
            RETURNING id
        )
        SELECT (SELECT count(*) FROM moved) AS moved,
               greatest((SELECT max(id) FROM moved), (SELECT max(id) FROM merged)) AS last_id
        """,
        {"w": watermark},
    )
    result: dict[str, Any] | None = await cur.fetchone()
    moved = int(result["moved"]) if result else 0
    if moved and result is not None:
        # Rows a concurrent writer commits later with a lower id stay unmerged until their
        # (namespace, term) is touched again; the sums are exact either way.
        await conn.execute(
            "INSERT INTO hindsight_meta (name, value) VALUES ('keyword_stats_watermark', %s) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (str(result["last_id"]),),
        )
    return moved
