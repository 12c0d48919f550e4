"""SQL for working memory: sessions and their steps (the durable copy).

All live steps of a session share one expiry, `ttl` after the session's last write. Moving
it on every append would rewrite every step each time, so the expiry moves in jumps: when
an append finds it less than `ttl` away, it is set to `ttl + slack` ahead and the live steps
follow in the same statement. Steps therefore never expire before `ttl` after the last
write, and at most `slack` after it (slack: 1% of the TTL, at most one minute).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection, distributed

STEP_COLUMNS = (
    "w.step_index, w.role, w.content, w.summary, w.metadata, w.idempotency_key, "
    "w.created_at, w.expires_at, w.occurred_at"
)


def expiry_slack_seconds(ttl_seconds: int) -> float:
    return min(60.0, ttl_seconds / 100)


# The session upsert hands the step its index and expiry. The expiry comes from this clock
# (see `append`); when it has just moved, it is the one proposed here.
_OPEN = """
INSERT INTO working_sessions AS s (namespace, session_id, next_step, expires_at)
VALUES (%(ns)s::text, %(sid)s::text, 1, %(expires)s::timestamptz)
ON CONFLICT (namespace, session_id) DO UPDATE SET
    next_step = s.next_step + 1,
    updated_at = excluded.updated_at,
    expires_at = CASE WHEN s.expires_at < %(renew_before)s::timestamptz
                      THEN excluded.expires_at
                      ELSE s.expires_at END
WHERE s.status = 'active'
RETURNING s.next_step - 1 AS step_index, s.expires_at
"""
_COLUMNS = """namespace, session_id, step_index, role, content, summary, metadata,
                                 idempotency_key, expires_at, occurred_at"""
# On a single PostgreSQL one statement appends the step (a one-time filter touches the
# live steps only when the expiry just moved).
_APPEND = f"""
WITH sess AS ({_OPEN}),
extended AS (
    UPDATE working_memory w SET expires_at = (SELECT expires_at FROM sess)
    WHERE (SELECT expires_at FROM sess) = %(expires)s::timestamptz
      AND w.namespace = %(ns)s AND w.session_id = %(sid)s AND w.expires_at > now()
)
INSERT INTO working_memory AS w ({_COLUMNS})
SELECT %(ns)s, %(sid)s, sess.step_index, %(role)s, %(content)s, %(summary)s, %(metadata)s,
       %(idem)s, sess.expires_at, %(occurred)s::timestamptz
FROM sess
RETURNING {STEP_COLUMNS}
"""
# On Citus the same is two or three statements of one transaction, sent in two round
# trips (on a single PostgreSQL 0.9 ms, against the one statement's 0.4 ms): each an
# INSERT ... VALUES or an UPDATE that Citus routes to the namespace's shard. The statement
# above goes through the coordinator there (Citus runs a data-modifying CTE first and
# collects its rows, and never pushes down an INSERT ... SELECT into a table with an
# identity column). The session row's lock, taken by the upsert, orders concurrent appends.
_EXTEND = """
UPDATE working_memory w SET expires_at = %(expires)s::timestamptz
WHERE w.namespace = %(ns)s AND w.session_id = %(sid)s AND w.expires_at > now()
"""
_ADD = f"""
INSERT INTO working_memory AS w ({_COLUMNS})
VALUES (%(ns)s::text, %(sid)s::text, %(step)s::int, %(role)s::text, %(content)s::text,
        %(summary)s::text, %(metadata)s::jsonb, %(idem)s::text, %(expires)s::timestamptz,
        %(occurred)s::timestamptz)
RETURNING {STEP_COLUMNS}
"""


async def append(
    conn: Connection,
    namespace: str,
    session_id: str,
    *,
    role: str,
    content: str,
    summary: str | None,
    metadata: dict[str, Any],
    idempotency_key: str | None,
    ttl_seconds: int,
    occurred_at: datetime | None = None,
) -> dict[str, Any] | None:
    """Append one step with the next index; None when the session has ended.

    The session row's lock orders concurrent appends, so indexes are strictly increasing
    and never repeat. Raises UniqueViolation for a repeated idempotency key.
    """
    # The expiry moves once it is within `slack` of falling short of the TTL, to now + TTL
    # + slack. Both times come from this clock: DO UPDATE SET takes no now() nor
    # timestamptz arithmetic on Citus, and a clock a little off only moves the expiry a
    # little sooner or later.
    now = datetime.now(UTC)
    session = {
        "ns": namespace,
        "sid": session_id,
        "expires": now + timedelta(seconds=ttl_seconds + expiry_slack_seconds(ttl_seconds)),
        "renew_before": now + timedelta(seconds=ttl_seconds),
    }
    step = {
        "role": role,
        "content": content,
        "summary": summary,
        "metadata": Jsonb(metadata),
        "idem": idempotency_key,
        "occurred": occurred_at,
    }
    if not distributed(conn):
        cur = await conn.execute(_APPEND, {**session, **step})
        return await cur.fetchone()
    async with conn.pipeline(), conn.transaction():
        cur = await conn.execute(_OPEN, session)
        opened = await cur.fetchone()  # the first round trip: BEGIN and the upsert
        if opened is None:
            return None
        if opened["expires_at"] == session["expires"]:  # moved: the live steps follow
            await conn.execute(_EXTEND, session)
        cur = await conn.execute(
            _ADD,
            {**session, **step, "step": opened["step_index"], "expires": opened["expires_at"]},
        )
    return await cur.fetchone()


async def by_idempotency_key(
    conn: Connection, namespace: str, session_id: str, key: str
) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"SELECT {STEP_COLUMNS} FROM working_memory w WHERE w.namespace = %s "
        "AND w.session_id = %s AND w.idempotency_key = %s",
        (namespace, session_id, key),
    )
    return await cur.fetchone()


async def recent(conn: Connection, namespace: str, session_id: str, n: int) -> list[dict[str, Any]]:
    """The newest `n` live steps, in step order."""
    cur = await conn.execute(
        f"SELECT {STEP_COLUMNS} FROM working_memory w WHERE w.namespace = %s "
        "AND w.session_id = %s AND w.expires_at > now() ORDER BY w.step_index DESC LIMIT %s",
        (namespace, session_id, n),
    )
    rows = await cur.fetchall()
    rows.reverse()
    return rows


# A text's cost against the budget: its characters, plus `cjk` more for each Chinese,
# Japanese or Korean character (a token budget counts in quarter tokens: 4 Latin
# characters or 1 CJK character a token)
_COST = (
    "(char_length({t}) + %(cjk)s * char_length(regexp_replace({t}, "
    "'[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]', '', 'g')))"
)
_EARLIER = """
WITH RECURSIVE walk AS (
    (SELECT w.step_index, w.role, coalesce(w.summary, w.content) AS text,
            w.summary IS NOT NULL AS summarized, w.created_at,
            {first_cost} AS spent
     FROM working_memory w
     WHERE w.namespace = %(ns)s AND w.session_id = %(sid)s AND w.step_index < %(before)s
       AND w.expires_at > now()
     ORDER BY w.step_index DESC LIMIT 1)
    UNION ALL
    SELECT n.* FROM walk p CROSS JOIN LATERAL (
        SELECT w.step_index, w.role, coalesce(w.summary, w.content),
               w.summary IS NOT NULL, w.created_at,
               p.spent + {next_cost}
        FROM working_memory w
        WHERE w.namespace = %(ns)s AND w.session_id = %(sid)s
          AND w.step_index < p.step_index AND w.expires_at > now()
        ORDER BY w.step_index DESC LIMIT 1
    ) n
    WHERE p.spent <= %(max)s
)
SELECT step_index, role, text, summarized, created_at FROM walk WHERE spent <= %(max)s
ORDER BY step_index DESC
""".format(
    first_cost=_COST.format(t="coalesce(w.summary, w.content)"),
    next_cost=_COST.format(t="coalesce(w.summary, w.content)"),
)


async def older(
    conn: Connection, namespace: str, session_id: str, before: int, limit: int
) -> list[dict[str, Any]]:
    """Live steps with index below `before`, newest first (paging back through a session)."""
    cur = await conn.execute(
        f"SELECT {STEP_COLUMNS} FROM working_memory w WHERE w.namespace = %s "
        "AND w.session_id = %s AND w.step_index < %s AND w.expires_at > now() "
        "ORDER BY w.step_index DESC LIMIT %s",
        (namespace, session_id, before, limit),
    )
    return await cur.fetchall()


async def earlier_within(
    conn: Connection,
    namespace: str,
    session_id: str,
    before: int,
    max_chars: int,
    *,
    cjk_weight: int = 0,
) -> tuple[list[dict[str, Any]], int]:
    """For the context read: live steps below `before`, newest first, as their summary (or
    their content while none exists), as long as their texts fit in `max_chars` (each CJK
    character counting `1 + cjk_weight`); and how
    many live steps below `before` there are in all. The walk goes one step at a time and
    stops at the budget, so a long session's older steps are neither read nor sent."""
    args = {
        "ns": namespace,
        "sid": session_id,
        "before": before,
        "max": max_chars,
        "cjk": cjk_weight,
    }
    cur = await conn.execute(_EARLIER, args)
    rows = await cur.fetchall()
    cur = await conn.execute(
        "SELECT count(*) AS n FROM working_memory w WHERE w.namespace = %(ns)s "
        "AND w.session_id = %(sid)s AND w.step_index < %(before)s AND w.expires_at > now()",
        args,
    )
    total = await cur.fetchone()
    return rows, int(total["n"]) if total else 0


async def pop_last(
    conn: Connection, namespace: str, session_id: str
) -> tuple[str | None, dict[str, Any] | None]:
    """Delete an active session's newest live step and give its index back, so the next
    append takes it again and indexes stay contiguous. Answers the session's status (None:
    no such session) and the step removed (None: none). Run it in a transaction: the
    session row's lock orders it with concurrent appends."""
    cur = await conn.execute(
        "SELECT status, next_step FROM working_sessions WHERE namespace = %s "
        "AND session_id = %s FOR UPDATE",
        (namespace, session_id),
    )
    sess = await cur.fetchone()
    if sess is None or sess["status"] != "active":
        return (sess["status"] if sess else None), None
    cur = await conn.execute(
        f"DELETE FROM working_memory w WHERE w.namespace = %s AND w.session_id = %s "
        f"AND w.step_index = %s AND w.expires_at > now() RETURNING {STEP_COLUMNS}",
        (namespace, session_id, sess["next_step"] - 1),
    )
    step = await cur.fetchone()
    if step is not None:
        await conn.execute(
            "UPDATE working_sessions SET next_step = next_step - 1, updated_at = now() "
            "WHERE namespace = %s AND session_id = %s",
            (namespace, session_id),
        )
    return sess["status"], step


async def session(conn: Connection, namespace: str, session_id: str) -> dict[str, Any] | None:
    cur = await conn.execute(
        "SELECT s.namespace, s.session_id, s.status, s.next_step, s.metadata, s.created_at, "
        "s.updated_at, s.ended_at, s.expires_at, "
        "(SELECT count(*) FROM working_memory w WHERE w.namespace = s.namespace "
        " AND w.session_id = s.session_id AND w.expires_at > now()) AS live_steps "
        "FROM working_sessions s WHERE s.namespace = %s AND s.session_id = %s",
        (namespace, session_id),
    )
    return await cur.fetchone()


async def end(conn: Connection, namespace: str, session_id: str) -> dict[str, Any] | None:
    """End the session; the session as `session` reads it, so that the answer to `:end`
    carries the same fields as `GET /sessions/{sid}`."""
    # least(ended_at, now()) keeps the first end, as coalesce would; Citus refuses now() there
    cur = await conn.execute(
        "UPDATE working_sessions SET status = 'ended', ended_at = least(ended_at, now()), "
        "updated_at = now() WHERE namespace = %s AND session_id = %s "
        "RETURNING namespace, session_id, status, next_step, metadata, created_at, updated_at, "
        "ended_at, expires_at",
        (namespace, session_id),
    )
    ended = await cur.fetchone()
    if ended is None:
        return None
    cur = await conn.execute(
        "SELECT count(*) AS live_steps FROM working_memory WHERE namespace = %s "
        "AND session_id = %s AND expires_at > now()",
        (namespace, session_id),
    )
    counted = await cur.fetchone()
    assert counted is not None
    return {**ended, "live_steps": counted["live_steps"]}


async def delete(conn: Connection, namespace: str, session_id: str) -> int | None:
    """Delete the session and its steps; the number of steps, or None if none existed.

    The steps are deleted and counted first, then the session: a statement that deleted
    the session and counted the steps its cascade removed would count none on Citus, which
    runs the deleting part of such a statement before the rest. The session row is locked
    first, so that no append lands between the two."""
    async with conn.transaction():
        cur = await conn.execute(
            "SELECT 1 FROM working_sessions WHERE namespace = %s AND session_id = %s FOR UPDATE",
            (namespace, session_id),
        )
        if await cur.fetchone() is None:
            return None
        cur = await conn.execute(
            "DELETE FROM working_memory WHERE namespace = %s AND session_id = %s",
            (namespace, session_id),
        )
        steps = cur.rowcount
        await conn.execute(
            "DELETE FROM working_sessions WHERE namespace = %s AND session_id = %s",
            (namespace, session_id),
        )
    return steps


async def set_summary(
    conn: Connection, namespace: str, session_id: str, step_index: int, summary: str | None
) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"UPDATE working_memory w SET summary = %s WHERE w.namespace = %s AND w.session_id = %s "
        f"AND w.step_index = %s AND w.expires_at > now() RETURNING {STEP_COLUMNS}",
        (summary, namespace, session_id, step_index),
    )
    return await cur.fetchone()


async def replace_summary(
    conn: Connection,
    namespace: str,
    session_id: str,
    step_index: int,
    expected: str | None,
    summary: str,
) -> dict[str, Any] | None:
    """Set a live step's summary if it is still `expected` (a summary set since, by the
    client, stands); the step, or None when it was not changed."""
    cur = await conn.execute(
        f"UPDATE working_memory w SET summary = %s WHERE w.namespace = %s "
        f"AND w.session_id = %s AND w.step_index = %s AND w.expires_at > now() "
        f"AND w.summary IS NOT DISTINCT FROM %s RETURNING {STEP_COLUMNS}",
        (summary, namespace, session_id, step_index, expected),
    )
    return await cur.fetchone()
