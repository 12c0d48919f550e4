"""SQL for long-term memories: observe (upsert), read, list, update, delete, access counts.
Searching them (recall's arms, the near-duplicate check) is `stores.search`.

History rows and keyword statistics are written by triggers (see migration 0001); every
writing function here sets `hindsight.actor` for them first (`stores.attribution`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from pgvector import HalfVector, SparseVector
from psycopg import AsyncRawCursor
from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute, clear
from hindsight.stores.filters import LIVE_BY_STATUS, MemoryFilter, filter_sql
from hindsight.stores.grouping import by_namespace

_ACCESS = "FROM memory_access a WHERE a.namespace = m.namespace AND a.memory_id = m.id"
_LAST_ACCESSED = f"(SELECT a.last_accessed {_ACCESS})"


def _columns(access_count: str, last_accessed: str) -> str:
    return f"""
    m.id, m.namespace, m.memory_type, m.mem_key AS key, m.mem_value AS value,
    m.confidence::float8 AS confidence, m.importance, {access_count} AS access_count,
    m.observation_count, m.source, m.source_capped, m.verified, m.permanent, m.status, m.tags,
    m.metadata,
    m.changed_by, m.created_at, m.updated_at, m.last_observed, {last_accessed} AS last_accessed,
    m.expires_at, m.occurred_at
"""


# A memory as the API shows it, m being long_term_memory.
MEMORY_COLUMNS = _columns(f"coalesce((SELECT a.access_count {_ACCESS}), 0)", _LAST_ACCESSED)
# The same, where the query has joined the memory's memory_access row as `a` (one probe
# of it instead of one per column). A read joins it rather than use the subqueries above:
# on Citus a subquery correlated by namespace is sent to every shard, where a join on
# namespace follows the memory's namespace to its shard.
MEMORY_COLUMNS_JOINED = _columns("coalesce(a.access_count, 0)", "a.last_accessed")
JOIN_ACCESS = "LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id"


@dataclass(frozen=True)
class NewClaim:
    """One observation, ready to store (embedding and keyword vector computed)."""

    id: uuid.UUID
    key: str
    value: str
    memory_type: str
    embedding: HalfVector
    keywords: SparseVector
    keyword_terms: list[int]
    confidence: float
    importance: float
    source: str | None
    tags: list[str]
    metadata: dict[str, Any]
    verified: bool
    permanent: bool
    expires_at: datetime | None = None
    occurred_at: datetime | None = None
    # the source is a writer's own label, trusted no more than an agent's when ranked
    source_capped: bool = False


# A re-observation of the same value reinforces: confidence rises by the step (capped at the
# ceiling: 1, or under it for a writer's repetition, and never lowered by it)
# and the count grows; ON CONFLICT serialises concurrent observers on the row lock and
# re-reads the latest version, so no increment is lost. A different value supersedes: the
# claim starts over at the initial confidence, and the trigger files the old value in history.
# occurred_at: a reinforcement keeps the earliest time known (the same claim reported again
# later happened no later than its first report; a PATCH moves it), a new value takes its own.
# The rows are a VALUES list, each value typed: on Citus an INSERT ... VALUES whose rows
# share the namespace is routed to its shard, where INSERT ... SELECT FROM unnest(...) went
# through the coordinator (the rows collected there, then copied to the shard). A worker
# is not told the parameters of DO UPDATE SET: the step and ceiling go there as numbers in
# the text.
_OBSERVE = """
INSERT INTO long_term_memory AS t (
    id, namespace, mem_key, mem_value, memory_type, embedding, keywords, keyword_terms,
    confidence, importance, source, source_capped, tags, metadata, verified, permanent,
    changed_by, expires_at, occurred_at)
VALUES {rows}
ON CONFLICT (namespace, mem_key) WHERE live DO UPDATE SET
    confidence = CASE WHEN t.mem_value = excluded.mem_value
                      THEN greatest(t.confidence,
                                    least(CEILING::numeric, t.confidence + STEP::numeric))
                      ELSE excluded.confidence END,
    observation_count = CASE WHEN t.mem_value = excluded.mem_value
                             THEN t.observation_count + 1 ELSE 1 END,
    memory_type = CASE WHEN t.mem_value = excluded.mem_value
                       THEN t.memory_type ELSE excluded.memory_type END,
    embedding = CASE WHEN t.mem_value = excluded.mem_value
                     THEN t.embedding ELSE excluded.embedding END,
    keywords = CASE WHEN t.mem_value = excluded.mem_value
                    THEN t.keywords ELSE excluded.keywords END,
    keyword_terms = CASE WHEN t.mem_value = excluded.mem_value
                         THEN t.keyword_terms ELSE excluded.keyword_terms END,
    verified = CASE WHEN t.mem_value = excluded.mem_value
                    THEN t.verified OR excluded.verified ELSE excluded.verified END,
    importance = CASE WHEN t.mem_value = excluded.mem_value
                      THEN greatest(t.importance, excluded.importance)
                      ELSE excluded.importance END,
    mem_value = excluded.mem_value,
    source = coalesce(excluded.source, t.source),
    -- whoever gives the source label decides how far it is trusted
    source_capped = CASE WHEN excluded.source IS NULL
                         THEN t.source_capped ELSE excluded.source_capped END,
    tags = hindsight_tag_union(t.tags, excluded.tags),
    metadata = t.metadata || excluded.metadata,
    permanent = t.permanent OR excluded.permanent,
    status = 'active',
    expires_at = coalesce(excluded.expires_at, t.expires_at),
    occurred_at = CASE WHEN t.mem_value = excluded.mem_value
                       THEN least(t.occurred_at, excluded.occurred_at)
                       ELSE excluded.occurred_at END,
    changed_by = excluded.changed_by,
    -- the proposed row's defaults, now(): Citus takes no now() in DO UPDATE SET
    updated_at = excluded.updated_at,
    last_observed = excluded.last_observed
RETURNING t.id, t.mem_key AS key, (t.xmax = 0) AS created, t.confidence::float8 AS confidence,
          t.observation_count, t.memory_type
"""
_OBSERVED_TYPES = (
    "uuid", "text", "text", "text", "text", "halfvec", "sparsevec", "int[]", "numeric",
    "float8", "text", "bool", "text[]", "jsonb", "bool", "bool", "text", "timestamptz",
    "timestamptz",
)  # fmt: skip


@lru_cache(maxsize=8)
def _observed_rows(n: int) -> str:
    """The VALUES rows of `n` claims in PostgreSQL's own placeholders ($1, $2, ...), sent
    through a raw cursor: psycopg parses a statement's %s placeholders afresh on every call
    once it has more than 50 parameters (it caches only small ones), and for a batch of 500
    claims (9,500 parameters) that parse was 40% of the service's CPU time on a batch call
    (py-spy, 50k memories)."""
    width = len(_OBSERVED_TYPES)
    return ",\n       ".join(
        "(" + ", ".join(f"${r * width + i + 1}::{t}" for i, t in enumerate(_OBSERVED_TYPES)) + ")"
        for r in range(n)
    )


async def observe(
    conn: Connection,
    namespace: str,
    claims: list[NewClaim],
    *,
    actor: str,
    step: float,
    ceiling: float = 1.0,
) -> list[dict[str, Any]]:
    """Insert or reinforce or supersede each claim; keys must be distinct within the call.
    Reinforcement lifts confidence by `step` up to `ceiling`, never lowers it.

    Rows come back in no particular order; match them up by key.
    """
    params = [
        value
        for c in claims
        for value in (
            c.id, namespace, c.key, c.value, c.memory_type, c.embedding, c.keywords,
            c.keyword_terms, c.confidence, c.importance, c.source, c.source_capped, c.tags,
            Jsonb(c.metadata), c.verified, c.permanent, actor, c.expires_at, c.occurred_at,
        )
    ]  # fmt: skip
    await attribute(conn, actor=actor)
    query = (
        _OBSERVE.replace("{rows}", _observed_rows(len(claims)))
        .replace("CEILING", repr(float(ceiling)))
        .replace("STEP", repr(float(step)))
    )
    async with AsyncRawCursor(conn) as cur:
        await cur.execute(query, params)  # type: ignore[arg-type]
        return await cur.fetchall()


async def get(
    conn: Connection, namespace: str, memory_id: uuid.UUID, *, lock: bool = False
) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"SELECT {MEMORY_COLUMNS_JOINED} FROM long_term_memory m {JOIN_ACCESS} "
        "WHERE m.namespace = %s AND m.id = %s AND (m.expires_at IS NULL OR m.expires_at > now())"
        + (" FOR UPDATE OF m" if lock else ""),
        (namespace, memory_id),
    )
    return await cur.fetchone()


async def list_page(
    conn: Connection,
    namespace: str,
    f: MemoryFilter,
    *,
    after: uuid.UUID | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Memories in id order (creation order), strictly after `after`; keyset pagination
    never skips or repeats a row while others write."""
    params: dict[str, Any] = {"ns": namespace, "limit": limit}
    where = filter_sql(f, params, "m")
    if after is not None:
        params["after"] = after
        where += " AND m.id > %(after)s"
    cur = await conn.execute(
        f"SELECT {MEMORY_COLUMNS_JOINED} FROM long_term_memory m {JOIN_ACCESS} "
        f"WHERE m.namespace = %(ns)s{where} ORDER BY m.id LIMIT %(limit)s",
        params,
    )
    return await cur.fetchall()


async def update(
    conn: Connection,
    namespace: str,
    memory_id: uuid.UUID,
    changes: dict[str, Any],
    *,
    actor: str,
) -> dict[str, Any] | None:
    """Apply explicit field changes (a PATCH). `changes` keys are column names."""
    params: dict[str, Any] = {"ns": namespace, "id": memory_id, "actor": actor}
    sets = ["changed_by = %(actor)s", "updated_at = now()"]
    for column, value in changes.items():
        name = f"v_{column}"
        if column == "embedding":
            sets.append(f"embedding = %({name})s::halfvec")
        elif column == "keywords":
            sets.append(f"keywords = %({name})s::sparsevec")
        elif column == "metadata":
            value = Jsonb(value)
            sets.append(f"metadata = %({name})s")
        else:
            sets.append(f"{column} = %({name})s")
        params[name] = value
    if "mem_value" in changes:
        sets.append("observation_count = 1")
    await attribute(conn, actor=actor, change="updated")
    cur = await conn.execute(
        f"UPDATE long_term_memory m SET {', '.join(sets)} "
        f"WHERE m.namespace = %(ns)s AND m.id = %(id)s RETURNING {MEMORY_COLUMNS}",
        params,
    )
    return await cur.fetchone()


async def forgettable(
    conn: Connection,
    namespace: str,
    *,
    max_confidence: float | None,
    not_accessed_days: float | None,
    max_importance: float | None = None,
    not_observed_days: float | None,
    memory_types: list[str],
    limit: int,
    occurred: MemoryFilter | None = None,
    spare_verified: bool = False,
) -> list[dict[str, Any]]:
    """Active, non-permanent memories a forgetting policy selects, least valuable first
    (`occurred`: only those its occurred_* bounds hold; `spare_verified`: not verified)."""
    params: dict[str, Any] = {"ns": namespace, "limit": limit}
    where = ["m.namespace = %(ns)s", LIVE_BY_STATUS, "NOT m.permanent"]
    if spare_verified:
        where.append("NOT m.verified")
    if occurred is not None:
        bounds = MemoryFilter(
            occurred_after=occurred.occurred_after,
            occurred_before=occurred.occurred_before,
            status=None,
        )
        where.append("true" + filter_sql(bounds, params, "m"))
    if max_confidence is not None:
        params["max_conf"] = max_confidence
        where.append("m.confidence <= %(max_conf)s")
    if max_importance is not None:
        params["max_imp"] = max_importance
        where.append("m.importance <= %(max_imp)s")
    if not_accessed_days is not None:
        params["idle"] = not_accessed_days
        where.append(
            "coalesce(a.last_accessed, m.created_at) < now() - %(idle)s * interval '1 day'"
        )
    if not_observed_days is not None:
        params["stale"] = not_observed_days
        where.append("m.last_observed < now() - %(stale)s * interval '1 day'")
    if memory_types:
        params["types"] = memory_types
        where.append("m.memory_type = ANY(%(types)s::text[])")
    cur = await conn.execute(
        f"SELECT {MEMORY_COLUMNS_JOINED} FROM long_term_memory m {JOIN_ACCESS} "
        f"WHERE {' AND '.join(where)} "
        "ORDER BY m.confidence, coalesce(a.last_accessed, m.created_at), m.id "
        "LIMIT %(limit)s",
        params,
    )
    return await cur.fetchall()


async def store_cold(
    conn: Connection, namespace: str, memory_id: uuid.UUID, *, actor: str, reason: str
) -> None:
    """Cool a memory just created (its history: `cooled`, with `reason`)."""
    await attribute(conn, actor=actor, reason=reason)
    await conn.execute(
        "UPDATE long_term_memory m SET status = 'cold', changed_by = %(actor)s, "
        "updated_at = now() WHERE m.namespace = %(ns)s AND m.id = %(id)s "
        "AND m.status = 'active'",
        {"ns": namespace, "id": memory_id, "actor": actor},
    )
    await clear(conn)


async def archive_many(
    conn: Connection, namespace: str, ids: list[uuid.UUID], *, actor: str, reason: str = ""
) -> int:
    await attribute(conn, actor=actor, reason=reason)
    cur = await conn.execute(
        "UPDATE long_term_memory m SET status = 'archived', changed_by = %(actor)s, "
        f"updated_at = now() WHERE m.namespace = %(ns)s AND m.id = ANY(%(ids)s) "
        f"AND {LIVE_BY_STATUS} AND NOT m.permanent",
        {"ns": namespace, "ids": ids, "actor": actor, "reason": reason},
    )
    return cur.rowcount


async def delete_many(
    conn: Connection,
    namespace: str,
    ids: list[uuid.UUID],
    *,
    actor: str,
    permanent_too: bool = True,
    reason: str = "",
) -> list[dict[str, Any]]:
    """Delete the memories (a forgetting policy spares permanent ones); the deleted rows'
    id, key and value, for erasing their traces elsewhere."""
    spare = "" if permanent_too else "AND NOT m.permanent "
    await attribute(conn, actor=actor, reason=reason)
    cur = await conn.execute(
        f"DELETE FROM long_term_memory m WHERE m.namespace = %(ns)s AND m.id = ANY(%(ids)s) "
        f"{spare}"
        "RETURNING m.id, m.mem_key AS key, m.mem_value AS value",
        {"ns": namespace, "ids": ids, "actor": actor, "reason": reason},
    )
    return await cur.fetchall()


async def history(conn: Connection, namespace: str, memory_id: uuid.UUID) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT h.id AS sequence, h.change, h.memory_type, h.mem_key AS key, "
        "h.old_value, h.new_value, h.old_confidence::float8 AS old_confidence, "
        "h.new_confidence::float8 AS new_confidence, h.observation_count, h.source, h.actor, "
        "h.reason, h.changed_at FROM memory_history h "
        "WHERE h.namespace = %s AND h.memory_id = %s ORDER BY h.id",
        (namespace, memory_id),
    )
    return await cur.fetchall()


async def record_access(
    conn: Connection, counts: dict[tuple[str, uuid.UUID], tuple[int, Any]]
) -> None:
    """Add recall counts by (namespace, memory id); sorted so concurrent flushers lock rows
    in one order, and memories deleted since they were recalled skipped. One statement per
    namespace, joining its memories: on Citus each runs on the namespace's shard."""
    for namespace, ids in by_namespace(counts):
        await conn.execute(
            "INSERT INTO memory_access AS a (namespace, memory_id, access_count, last_accessed) "
            "SELECT m.namespace, m.id, d.n, d.at "
            "FROM unnest(%s::uuid[], %s::int[], %s::timestamptz[]) AS d(id, n, at) "
            "JOIN long_term_memory m ON m.namespace = %s AND m.id = d.id "
            "ORDER BY m.id "
            "ON CONFLICT (namespace, memory_id) DO UPDATE SET "
            "access_count = a.access_count + excluded.access_count, "
            "last_accessed = greatest(a.last_accessed, excluded.last_accessed)",
            (
                ids,
                [counts[(namespace, i)][0] for i in ids],
                [counts[(namespace, i)][1] for i in ids],
                namespace,
            ),
        )
