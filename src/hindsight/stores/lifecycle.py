"""SQL for the lifecycle: tier moves, hard expiry, capacity, demotion, warming.

Every rule is a condition on a memory (with its access row `a`) against an injected clock
`%(now)s`, so tests move time instead of waiting. Each batch is one statement that picks at
most `batch` rows after a keyset cursor, locks them with SKIP LOCKED and re-checks the
condition, so two schedulers (or a scheduler and a client) never move a memory twice.
The history trigger records each move with the reason set in `hindsight.reason`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hindsight.db.pool import Connection

LIFECYCLE_LOCK = 7_361_582_014

_ACTOR = "set_config('hindsight.actor', %(actor)s, true) IS NOT NULL"
_REASON = "set_config('hindsight.reason', %(reason)s, true) IS NOT NULL"
_CHANGE = "set_config('hindsight.change', %(change)s, true) IS NOT NULL"
_SECONDS = "* interval '1 second'"

# last access or observation; never recalled: since created
IDLE_SINCE = "greatest(m.last_observed, coalesce(a.last_accessed, m.last_observed))"
ACCESSED_SINCE = "coalesce(a.last_accessed, m.created_at)"
LIVE = "m.status IN ('active', 'cold')"


def value_sql(alpha: str = "%(alpha)s", tau: str = "%(tau_s)s") -> str:
    """A memory's value without a query: confidence × importance × access boost × recency."""
    return (
        f"(m.confidence::float8 * m.importance"
        f" * (1 + {alpha} * ln(1 + coalesce(a.access_count, 0)))"
        f" * exp(-greatest(extract(epoch FROM %(now)s - {IDLE_SINCE}), 0) / {tau}))"
    )


@dataclass(frozen=True)
class Rule:
    """One lifecycle rule: which memories, what happens to them, and why."""

    name: str
    condition: str  # SQL over m (long_term_memory) and a (memory_access)
    action: str  # cold | archived | delete | expire
    reason: str


def rules(p: dict[str, Any], *, low_confidence_due: bool) -> list[Rule]:
    """The policy's rules in the order they apply; `p` holds their thresholds (seconds)."""
    out = [
        Rule(
            "expired",
            "m.expires_at <= %(now)s",
            "expire",
            "expires_at passed",
        ),
    ]
    if p["del_imp"] > 0:
        out.append(
            Rule(
                "deleted",
                f"NOT m.permanent AND m.importance < %(del_imp)s "
                f"AND {ACCESSED_SINCE} < %(now)s - %(del_s)s {_SECONDS}",
                "delete",
                f"importance under {p['del_imp']:g} and not accessed for "
                f"{p['del_s'] / 86400:g} days",
            )
        )
    out.append(
        Rule(
            "archived",
            f"NOT m.permanent AND {LIVE} AND {IDLE_SINCE} < %(now)s - %(archive_s)s {_SECONDS}",
            "archived",
            f"no access or observation for {p['archive_s'] / 86400:g} days",
        )
    )
    if low_confidence_due and p["low_conf"] > 0:
        out.append(
            Rule(
                "low_confidence",
                f"NOT m.permanent AND {LIVE} AND m.confidence < %(low_conf)s "
                f"AND coalesce(a.access_count, 0) = 0 "
                f"AND m.created_at < %(now)s - %(low_conf_s)s {_SECONDS}",
                "archived",
                f"confidence under {p['low_conf']:g} and never recalled",
            )
        )
    out.append(
        Rule(
            "cooled",
            f"NOT m.permanent AND m.status = 'active' "
            f"AND {IDLE_SINCE} < %(now)s - %(cold_s)s {_SECONDS}",
            "cold",
            f"no access or observation for {p['cold_s'] / 86400:g} days",
        )
    )
    return out


def _exclusive(all_rules: list[Rule], i: int) -> str:
    """Rule i's condition for memories no earlier rule takes (a memory moves once)."""
    earlier = [f"NOT coalesce(({r.condition}), false)" for r in all_rules[:i]]
    return " AND ".join([f"({all_rules[i].condition})", *earlier])


# `page`: the heap page the row is on, for `page_rounds`
_PICK = """
SELECT m.id, m.mem_key AS key, m.status, m.importance, m.confidence::float8 AS confidence,
       (m.ctid::text::point)[0]::bigint AS page
FROM long_term_memory m
LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id
WHERE m.namespace = %(ns)s AND m.id > %(after)s AND {condition}
ORDER BY m.id LIMIT %(batch)s
"""


async def candidates(
    conn: Connection, all_rules: list[Rule], i: int, params: dict[str, Any], after: uuid.UUID
) -> list[dict[str, Any]]:
    """The next batch rule i would move (a dry run reads these and changes nothing)."""
    cur = await conn.execute(
        _PICK.format(condition=_exclusive(all_rules, i)), {**params, "after": after}
    )
    return await cur.fetchall()


def page_rounds(rows: list[dict[str, Any]]) -> list[list[uuid.UUID]]:
    """The ids of candidates `rows` in rounds that take at most one row of a heap page
    each, so that cooling them can be a HOT update every time: a page keeps room for one
    new version of a row (fillfactor 80, migration 0020), and a round's old versions are
    pruned once its transaction is over, before the next round reads the page. Rows that
    share no page (most, but for the ones a bulk load or a busy hour wrote together) go in
    one round."""
    rounds: list[list[uuid.UUID]] = []
    taken: dict[int, int] = {}
    for row in rows:
        n = taken.get(row["page"], 0)
        taken[row["page"]] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(row["id"])
    return rounds


async def apply(
    conn: Connection,
    all_rules: list[Rule],
    i: int,
    params: dict[str, Any],
    ids: list[uuid.UUID],
    *,
    actor: str,
) -> list[dict[str, Any]]:
    """Move those of `ids` (candidates of rule i) that still qualify and are not locked by
    another writer; the rows moved."""
    rule = all_rules[i]
    picked = (
        "SELECT m.id, m.mem_key AS key, m.status, m.importance, "
        "m.confidence::float8 AS confidence "
        "FROM long_term_memory m LEFT JOIN memory_access a "
        "ON a.namespace = m.namespace AND a.memory_id = m.id "
        f"WHERE m.id = ANY(%(ids)s) AND m.namespace = %(ns)s AND {_exclusive(all_rules, i)} "
        "ORDER BY m.id FOR UPDATE OF m SKIP LOCKED"
    )
    values = {
        **params,
        "ids": ids,
        "actor": actor,
        "reason": rule.reason,
        "change": "expired" if rule.action == "expire" else "",
    }
    guards = f"{_ACTOR} AND {_REASON} AND {_CHANGE}"
    if rule.action in ("delete", "expire"):
        sql = (
            f"WITH picked AS ({picked}) DELETE FROM long_term_memory m USING picked "
            f"WHERE m.namespace = %(ns)s AND m.id = picked.id AND {guards} RETURNING picked.*"
        )
    else:
        sql = (
            f"WITH picked AS ({picked}) UPDATE long_term_memory m "
            f"SET status = %(new_status)s, changed_by = %(actor)s, updated_at = now() "
            f"FROM picked WHERE m.namespace = %(ns)s AND m.id = picked.id AND {guards} "
            "RETURNING picked.*"
        )
        values["new_status"] = rule.action
    cur = await conn.execute(sql, values)
    moved = await cur.fetchall()
    await clear(conn)
    return moved


async def clear(conn: Connection) -> None:
    """Forget this transaction's reason and change name, so later statements in it are not
    recorded with them."""
    await conn.execute(
        "SELECT set_config('hindsight.reason', '', true), set_config('hindsight.change', '', true)"
    )


async def delete_expired_keys(conn: Connection, namespace: str, keys: list[str]) -> int:
    """Delete the expired memories holding these keys, so that observing one starts over."""
    cur = await conn.execute(
        "DELETE FROM long_term_memory m WHERE m.namespace = %(ns)s AND m.mem_key = ANY(%(keys)s) "
        "AND m.live AND m.expires_at <= now() "
        f"AND {_ACTOR} AND {_REASON} AND {_CHANGE}",
        {
            "ns": namespace,
            "keys": keys,
            "actor": "expiry",
            "reason": "expires_at passed",
            "change": "expired",
        },
    )
    await clear(conn)  # set while scanning, even when nothing matched
    return cur.rowcount


async def warm(conn: Connection, keys: list[tuple[str, uuid.UUID]]) -> int:
    """Recalled cold memories, by (namespace, id), become active again."""
    keys = sorted(keys)
    cur = await conn.execute(
        "UPDATE long_term_memory m SET status = 'active', updated_at = now() "
        "FROM unnest(%(ns)s::text[], %(ids)s::uuid[]) AS k(ns, id) "
        "WHERE m.namespace = k.ns AND m.id = k.id AND m.status = 'cold' "
        f"AND {_ACTOR} AND {_REASON}",
        {
            "ns": [ns for ns, _ in keys],
            "ids": [memory_id for _, memory_id in keys],
            "actor": "recall",
            "reason": "recalled",
        },
    )
    await clear(conn)  # set while scanning, even when nothing matched
    return cur.rowcount


async def namespaces(conn: Connection) -> list[str]:
    """Every namespace holding memories, by a skip scan of the (namespace, id) index."""
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


async def archive_lowest_value(
    conn: Connection, namespace: str, n: int, params: dict[str, Any], *, actor: str, reason: str
) -> list[dict[str, Any]]:
    """Archive the `n` active, non-permanent memories of least value (dry run: n = 0 rows
    moved, see `lowest_value`)."""
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
        FROM picked WHERE m.namespace = %(ns)s AND m.id = picked.id AND {_ACTOR} AND {_REASON}
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
    cur = await conn.execute(
        "UPDATE long_term_memory m SET importance = m.importance * %(factor)s, "
        "changed_by = %(actor)s, updated_at = now() "
        "WHERE m.namespace = %(ns)s AND m.source = %(source)s "
        "AND m.memory_type IN ('event', 'experience') AND NOT m.permanent "
        f"AND {_ACTOR} AND {_REASON} RETURNING m.id, m.mem_key AS key, m.importance",
        {
            "ns": namespace,
            "source": f"session:{session_id}",
            "factor": factor,
            "actor": actor,
            "reason": f"session {session_id} ended: its events are over, their lessons stay",
        },
    )
    rows = await cur.fetchall()
    await clear(conn)
    await conn.execute(
        "DELETE FROM session_demotions WHERE namespace = %s AND session_id = %s",
        (namespace, session_id),
    )
    return rows


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
