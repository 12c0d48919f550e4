"""SQL for consolidation jobs and the session's consolidation mark."""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection

JOB_COLUMNS = (
    "j.id, j.namespace, j.session_id, j.trigger, j.status, j.method, j.from_step, "
    "j.through_step, j.attempts, j.result, j.error, j.created_at, j.started_at, j.finished_at"
)


async def enqueue(
    conn: Connection, job_id: uuid.UUID, namespace: str, session_id: str, trigger: str
) -> dict[str, Any]:
    """Queue a job unless one is already open for the session; return the open one."""
    cur = await conn.execute(
        f"""
        WITH new AS (
            INSERT INTO consolidation_jobs (id, namespace, session_id, trigger)
            VALUES (%(id)s, %(ns)s, %(sid)s, %(trigger)s)
            ON CONFLICT (namespace, session_id) WHERE status IN ('pending', 'running')
            DO NOTHING
            RETURNING *
        )
        SELECT {JOB_COLUMNS} FROM new j
        UNION ALL
        SELECT {JOB_COLUMNS} FROM consolidation_jobs j
        WHERE j.namespace = %(ns)s AND j.session_id = %(sid)s
          AND j.status IN ('pending', 'running') AND NOT EXISTS (SELECT 1 FROM new)
        """,
        {"id": job_id, "ns": namespace, "sid": session_id, "trigger": trigger},
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def get(conn: Connection, namespace: str, job_id: uuid.UUID) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"SELECT {JOB_COLUMNS} FROM consolidation_jobs j WHERE j.namespace = %s AND j.id = %s",
        (namespace, job_id),
    )
    return await cur.fetchone()


async def claim(conn: Connection, lease_seconds: float, max_attempts: int) -> dict[str, Any] | None:
    """Take the oldest runnable job: pending and due, or running with an expired lease
    (its worker died). SKIP LOCKED lets replicas claim different jobs at once. A job whose
    worker died on its last allowed attempt is failed instead: a job that kills its process
    must not be retried forever."""
    cur = await conn.execute(
        f"""
        WITH gave_up AS (
            UPDATE consolidation_jobs SET
                status = 'failed',
                locked_until = NULL,
                finished_at = now(),
                error = 'gave up after ' || attempts || ' attempts: its worker stopped '
                    || 'before finishing' || coalesce('; last error: ' || error, '')
            WHERE status = 'running' AND locked_until < now() AND attempts >= %(max)s
        )
        UPDATE consolidation_jobs j SET
            status = 'running',
            attempts = j.attempts + 1,
            locked_until = now() + %(lease)s * interval '1 second',
            started_at = least(j.started_at, now())  -- Citus refuses now() in coalesce
        WHERE j.id = (
            SELECT id FROM consolidation_jobs
            WHERE ((status = 'pending' AND run_after <= now())
                OR (status = 'running' AND locked_until < now()))
              AND attempts < %(max)s
            ORDER BY created_at
            FOR UPDATE SKIP LOCKED
            LIMIT 1
        )
        RETURNING {JOB_COLUMNS}
        """,
        {"lease": lease_seconds, "max": max_attempts},
    )
    return await cur.fetchone()


# Every update of a claimed job is fenced on its status and attempt: the worker whose lease
# ran out (and whose job another worker took over) cannot overwrite what the new one does.
_FENCE = "WHERE id = %(id)s AND status = 'running' AND attempts = %(attempt)s"


async def renew(conn: Connection, job_id: uuid.UUID, attempt: int, lease_seconds: float) -> bool:
    """Extend a running job's lease; False if the job is no longer this attempt's."""
    cur = await conn.execute(
        "UPDATE consolidation_jobs SET locked_until = now() + %(lease)s * interval '1 second' "
        + _FENCE,
        {"id": job_id, "attempt": attempt, "lease": lease_seconds},
    )
    return cur.rowcount == 1


async def succeed(
    conn: Connection,
    job_id: uuid.UUID,
    attempt: int,
    *,
    method: str,
    from_step: int | None,
    through_step: int | None,
    result: dict[str, Any],
) -> bool:
    cur = await conn.execute(
        "UPDATE consolidation_jobs SET status = 'succeeded', method = %(method)s, "
        "from_step = %(from)s, through_step = %(through)s, result = %(result)s, error = NULL, "
        "locked_until = NULL, finished_at = now() " + _FENCE,
        {
            "id": job_id,
            "attempt": attempt,
            "method": method,
            "from": from_step,
            "through": through_step,
            "result": Jsonb(result),
        },
    )
    return cur.rowcount == 1


async def retry_later(
    conn: Connection, job_id: uuid.UUID, attempt: int, error: str, delay_seconds: float
) -> bool:
    cur = await conn.execute(
        "UPDATE consolidation_jobs SET status = 'pending', error = %(error)s, "
        "locked_until = NULL, run_after = now() + %(delay)s * interval '1 second' " + _FENCE,
        {"id": job_id, "attempt": attempt, "error": error, "delay": delay_seconds},
    )
    return cur.rowcount == 1


async def fail(conn: Connection, job_id: uuid.UUID, attempt: int, error: str) -> bool:
    cur = await conn.execute(
        "UPDATE consolidation_jobs SET status = 'failed', error = %(error)s, "
        "locked_until = NULL, finished_at = now() " + _FENCE,
        {"id": job_id, "attempt": attempt, "error": error},
    )
    return cur.rowcount == 1


async def consolidation_mark(conn: Connection, namespace: str, session_id: str) -> int | None:
    cur = await conn.execute(
        "SELECT consolidated_through FROM working_sessions WHERE namespace = %s "
        "AND session_id = %s",
        (namespace, session_id),
    )
    row = await cur.fetchone()
    return None if row is None else int(row["consolidated_through"])


async def advance_mark(
    conn: Connection, namespace: str, session_id: str, *, expected: int, through: int
) -> bool:
    """Move the mark from `expected` to `through`; False if someone else moved it first."""
    cur = await conn.execute(
        "UPDATE working_sessions SET consolidated_through = %s WHERE namespace = %s "
        "AND session_id = %s AND consolidated_through = %s",
        (through, namespace, session_id, expected),
    )
    return cur.rowcount == 1


async def steps_after(
    conn: Connection,
    namespace: str,
    session_id: str,
    after: int,
    *,
    max_chars: int,
    max_steps: int,
) -> list[dict[str, Any]]:
    """The oldest steps past the mark, expired or not (consolidation must not lose any),
    as many as fit in `max_chars` of content (at least one) and `max_steps`."""
    cur = await conn.execute(
        "SELECT step_index, role, content, summary, metadata, created_at, expires_at, "
        "occurred_at FROM ("
        "  SELECT w.*, coalesce(sum(octet_length(w.content)) OVER (ORDER BY w.step_index "
        "    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before"
        "  FROM working_memory w WHERE w.namespace = %s AND w.session_id = %s "
        "  AND w.step_index > %s ORDER BY w.step_index LIMIT %s"
        ") s WHERE s.before = 0 OR s.before + octet_length(s.content) <= %s "
        "ORDER BY step_index",
        (namespace, session_id, after, max_steps, max_chars),
    )
    return await cur.fetchall()


async def has_steps_after(conn: Connection, namespace: str, session_id: str, after: int) -> bool:
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM working_memory WHERE namespace = %s AND session_id = %s "
        "AND step_index > %s) AS more",
        (namespace, session_id, after),
    )
    row = await cur.fetchone()
    return bool(row and row["more"])


async def set_summaries(
    conn: Connection,
    namespace: str,
    session_id: str,
    summaries: dict[int, str],
    expected: dict[int, str | None] | None = None,
) -> list[dict[str, Any]]:
    """Fill in summaries for steps whose summary is still `expected` (per step index; none
    given: steps with no summary), so a client's own summary wins."""
    if not summaries:
        return []
    indexes = sorted(summaries)
    old = [(expected or {}).get(i) for i in indexes]
    cur = await conn.execute(
        "UPDATE working_memory w SET summary = s.summary "
        "FROM unnest(%s::int[], %s::text[], %s::text[]) AS s(step_index, summary, old) "
        "WHERE w.namespace = %s AND w.session_id = %s AND w.step_index = s.step_index "
        "AND w.summary IS NOT DISTINCT FROM s.old "
        "RETURNING w.step_index, w.role, w.content, w.summary, w.metadata, "
        "w.idempotency_key, w.created_at, w.expires_at, w.occurred_at",
        (indexes, [summaries[i] for i in indexes], old, namespace, session_id),
    )
    return await cur.fetchall()
