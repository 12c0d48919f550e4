"""SQL for quarantined claims: the rows that wait for review, and the moves out of it.

A quarantined claim is a row of its own with status `quarantined`: the one-live-row-per-key
index covers active and cold rows only, so a contender of a verified memory waits beside
it without touching it. History rows are written by the triggers (migration 0018); every
statement here sets `hindsight.actor`, `hindsight.reason` and `hindsight.change` first and
clears them after, so no later statement of the transaction inherits them.
"""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection
from hindsight.stores.arrays import array_literal
from hindsight.stores.attribution import attribute
from hindsight.stores.memories import MEMORY_COLUMNS, NewClaim


async def _say(conn: Connection, actor: str = "", reason: str = "", change: str = "") -> None:
    await attribute(conn, actor=actor, reason=reason, change=change)


async def live_rows(conn: Connection, namespace: str, keys: list[str]) -> dict[str, dict[str, Any]]:
    """The live (active or cold) memory of each key, locked in key order: what a claim
    would supersede or reinforce, with its verified flag, source and standing, and whether
    it has expired (`expired`)."""
    cur = await conn.execute(
        "SELECT m.id, m.mem_key AS key, m.mem_value AS value, m.verified, m.permanent, "
        "m.source, m.confidence, m.observation_count, m.memory_type, "
        "coalesce(m.expires_at <= now(), false) AS expired "
        "FROM long_term_memory m WHERE m.namespace = %s AND m.mem_key = ANY(%s) "
        "AND m.live ORDER BY m.mem_key FOR UPDATE",
        (namespace, sorted(set(keys))),
    )
    return {r["key"]: r for r in await cur.fetchall()}


async def waiting(conn: Connection, namespace: str, keys: list[str]) -> list[dict[str, Any]]:
    """Quarantined claims of these keys, oldest first, locked, with every key (actor)
    that sent each."""
    cur = await conn.execute(
        # the subquery names the namespace itself: Citus locks rows (FOR UPDATE) only in a
        # statement it sees is on one shard, and does not carry m.namespace's value into it
        "SELECT m.id, m.mem_key AS key, m.mem_value AS value, m.source, "
        "ARRAY(SELECT DISTINCT h.actor FROM memory_history h WHERE h.namespace = %(ns)s "
        "AND h.memory_id = m.id AND h.actor IS NOT NULL) AS actors "
        "FROM long_term_memory m WHERE m.namespace = %(ns)s AND m.mem_key = ANY(%(keys)s) "
        "AND m.quarantined ORDER BY m.id FOR UPDATE",
        {"ns": namespace, "keys": sorted(set(keys))},
    )
    return list(await cur.fetchall())


_RETURNING = (
    "RETURNING m.id, m.mem_key AS key, m.confidence::float8 AS confidence, "
    "m.observation_count, m.memory_type, m.status"
)


async def hold(
    conn: Connection,
    namespace: str,
    claim: NewClaim,
    *,
    actor: str,
    reason: str,
    step: float,
    again: uuid.UUID | None,
) -> dict[str, Any]:
    """Store `claim` for review (`again`: the quarantined row of the same claim from the
    same source, which is reinforced instead)."""
    await _say(conn, actor, reason)
    if again is not None:
        cur = await conn.execute(
            "UPDATE long_term_memory m SET observation_count = m.observation_count + 1, "
            "confidence = least(m.confidence + %s, greatest(m.confidence, %s)), "
            "occurred_at = least(m.occurred_at, %s), "
            "last_observed = now(), updated_at = now(), changed_by = %s "
            f"WHERE m.namespace = %s AND m.id = %s {_RETURNING}",
            (step, claim.confidence, claim.occurred_at, actor, namespace, again),
        )
    else:
        cur = await conn.execute(
            "INSERT INTO long_term_memory AS m (id, namespace, mem_key, mem_value, memory_type, "
            "embedding, keywords, keyword_terms, confidence, importance, source, source_capped, "
            "tags, metadata, verified, permanent, changed_by, expires_at, occurred_at, status) "
            "VALUES (%s, %s, %s, %s, %s, %s::halfvec, %s::sparsevec, %s::int[], %s, %s, %s, %s, "
            f"%s::text[], %s, %s, %s, %s, %s, %s, 'quarantined') {_RETURNING}",
            (
                claim.id,
                namespace,
                claim.key,
                claim.value,
                claim.memory_type,
                claim.embedding,
                claim.keywords,
                array_literal(claim.keyword_terms),
                claim.confidence,
                claim.importance,
                claim.source,
                claim.source_capped,
                array_literal(claim.tags),
                Jsonb(claim.metadata),
                claim.verified,
                claim.permanent,
                actor,
                claim.expires_at,
                claim.occurred_at,
            ),
        )
    row = await cur.fetchone()
    await _say(conn)
    assert row is not None
    return row


async def activate(
    conn: Connection,
    namespace: str,
    memory_id: uuid.UUID,
    *,
    actor: str,
    change: str,
    reason: str,
    step: float | None = None,
    ceiling: float = 1.0,
) -> dict[str, Any] | None:
    """Make a quarantined claim the live memory of its key (None: no such claim). The live
    memory it replaces is archived, its history saying by what. `step`: the activation is
    itself an observation (a release), which reinforces."""
    cur = await conn.execute(
        "SELECT m.mem_key AS key FROM long_term_memory m WHERE m.namespace = %s AND m.id = %s "
        "AND m.status = 'quarantined' FOR UPDATE",
        (namespace, memory_id),
    )
    found = await cur.fetchone()
    if found is None:
        return None
    await _say(conn, actor, f"replaced by {change} claim {memory_id}: {reason}")
    await conn.execute(
        "UPDATE long_term_memory m SET status = 'archived', updated_at = now(), "
        "changed_by = %s WHERE m.namespace = %s AND m.mem_key = %s "
        "AND m.live",
        (actor, namespace, found["key"]),
    )
    await _say(conn, actor, reason, change)
    seen = (
        ", observation_count = m.observation_count + 1, last_observed = now(), "
        "confidence = greatest(m.confidence, least(%(ceiling)s, m.confidence + %(step)s))"
        if step is not None
        else ""
    )
    cur = await conn.execute(
        f"UPDATE long_term_memory m SET status = 'active', updated_at = now(), "
        f"changed_by = %(actor)s{seen} WHERE m.namespace = %(ns)s AND m.id = %(id)s "
        f"RETURNING {MEMORY_COLUMNS}",
        {"actor": actor, "ns": namespace, "id": memory_id, "step": step, "ceiling": ceiling},
    )
    row = await cur.fetchone()
    await _say(conn)
    return row


async def reject(
    conn: Connection, namespace: str, memory_id: uuid.UUID, *, actor: str, reason: str
) -> list[dict[str, Any]]:
    """Erase a quarantined claim (the tombstone says `rejected`, with the reason); the
    deleted row's id, key and value, for erasing its traces elsewhere."""
    await _say(conn, actor, reason, "rejected")
    cur = await conn.execute(
        "DELETE FROM long_term_memory m WHERE m.namespace = %s AND m.id = %s "
        "AND m.status = 'quarantined' RETURNING m.id, m.mem_key AS key, m.mem_value AS value",
        (namespace, memory_id),
    )
    rows = list(await cur.fetchall())
    await _say(conn)
    return rows
