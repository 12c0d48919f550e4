"""SQL that keeps the specificities recall computed (read back by stores.search)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import NamedTuple

import psycopg

from hindsight.db.pool import Connection
from hindsight.stores.grouping import by_namespace
from hindsight.text.tokenize import KEYWORD_DIMENSIONS


class Kept(NamedTuple):
    """What recall computed of a memory's terms, and what it was computed from."""

    specificity: float
    keyword_mass: float
    namespace_size: int  # the namespace's memories then
    of: datetime  # the memory's updated_at then


Specificities = dict[tuple[str, uuid.UUID], Kept]


async def remember(conn: Connection, found: Specificities) -> int:
    """Store each memory's specificity and keyword mass beside its access counts; sorted so
    concurrent flushers lock rows in one order, and memories deleted since skipped. Run it
    in a transaction: it waits at most 50 ms for a row lock, so a deadlock with a deletion
    costs this cache write, never the deletion. How many were stored."""
    await conn.execute("SET LOCAL lock_timeout = '50ms'")
    stored = 0
    for namespace, ids in by_namespace(found):
        kept = [found[(namespace, i)] for i in ids]
        cur = await conn.execute(
            "INSERT INTO memory_access AS a (namespace, memory_id, specificity, keyword_mass, "
            "specificity_n, specificity_of, specificity_at) "
            "SELECT m.namespace, m.id, d.s, d.mass, d.n, d.of, now() "
            "FROM unnest(%s::uuid[], %s::float8[], %s::float8[], %s::bigint[], "
            "%s::timestamptz[]) AS d(id, s, mass, n, of) "
            "JOIN long_term_memory m ON m.namespace = %s AND m.id = d.id "
            "ORDER BY m.id "
            "ON CONFLICT (namespace, memory_id) DO UPDATE SET "
            "specificity = excluded.specificity, keyword_mass = excluded.keyword_mass, "
            "specificity_n = excluded.specificity_n, "
            "specificity_of = excluded.specificity_of, specificity_at = excluded.specificity_at",
            (
                ids,
                [k.specificity for k in kept],
                [k.keyword_mass for k in kept],
                [k.namespace_size for k in kept],
                [k.of for k in kept],
                namespace,
            ),
        )
        stored += cur.rowcount
    return stored


# A maintenance pass computes specificities ahead of recall, so that a memory met for the
# first time by a query (most of them, on a large namespace) is read back, not probed term
# by term inside recall's statements (issue 33: first-time queries 11% slower at p50 than
# repeated ones). It walks the live memories in key order, `batch` a pass, from where the
# last pass stopped, and computes what is missing or older than half recall's hour (or
# from a namespace size more than a tenth off), one statement a namespace, its document
# frequencies read once per distinct term: the same formula as stores.search, so recall
# ranks as if it had computed them itself. What it computed is stored as recall's are
# (`remember`): one INSERT ... SELECT did both, and a Citus coordinator could not route
# it to the namespace's shard (the namespace it inserts is a parameter, not a column of
# the rows it reads), so it pulled the rows to itself instead.
_CURSOR = "specificity_cursor"

_RANGE = """
SELECT m.namespace, m.id FROM long_term_memory m
WHERE (m.namespace, m.id) > (%s, %s::uuid) AND m.live
ORDER BY m.namespace, m.id LIMIT %s
"""

_DUE = """
WITH corpus AS (
    SELECT coalesce(sum(s.df), 0)::float8 AS n FROM keyword_stats s
    WHERE s.namespace = %(ns)s AND s.term = 0
),
due AS (
    SELECT m.id, m.keywords, m.keyword_terms, m.updated_at FROM long_term_memory m
    LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id
    WHERE m.namespace = %(ns)s AND m.id = ANY(%(ids)s::uuid[]) AND m.live
      AND NOT coalesce(a.specificity_of = m.updated_at
                       AND a.specificity_at > now() - interval '30 minutes'
                       AND a.specificity_n BETWEEN (SELECT n FROM corpus) * 0.9
                                               AND (SELECT n FROM corpus) * 1.1
                       AND a.keyword_mass IS NOT NULL, false)
),
idfs AS (
    SELECT s.term,
           ln(1 + greatest((SELECT n FROM corpus) - sum(s.df) + 0.5, 0) / (sum(s.df) + 0.5))
           AS idf
    FROM keyword_stats s
    WHERE s.namespace = %(ns)s
      AND s.term = ANY(ARRAY(SELECT DISTINCT t.term FROM due d, unnest(d.keyword_terms) t(term)))
    GROUP BY s.term
),
computed AS (
    SELECT g.id, g.updated_at, g.specificity, coalesce(-(d.keywords <#> g.idfs), 0) AS mass
    FROM (
        SELECT d.id, d.updated_at,
               avg(f.idf) / ln(1 + greatest((SELECT n FROM corpus) - 0.5, 0.5) / 1.5)
               AS specificity,
               ('{' || string_agg((f.term + 1)::text || ':' || f.idf::text, ',' ORDER BY f.term)
                       FILTER (WHERE f.idf > 0)
                || '}/%(kdims)s')::sparsevec AS idfs
        FROM due d CROSS JOIN LATERAL unnest(d.keyword_terms) AS t(term)
        JOIN idfs f ON f.term = t.term
        GROUP BY d.id, d.updated_at
    ) g
    JOIN due d ON d.id = g.id
)
SELECT c.id, c.specificity, c.mass, (SELECT n FROM corpus)::bigint AS n, c.updated_at
FROM computed c WHERE c.specificity IS NOT NULL
""".replace("%(kdims)s", str(KEYWORD_DIMENSIONS))


# where a walk over the memories starts (and starts again after the last)
START = ("", str(uuid.UUID(int=0)))


async def cursor(conn: Connection) -> tuple[str, str]:
    """The (namespace, id) the next pass starts after."""
    cur = await conn.execute("SELECT value FROM hindsight_meta WHERE name = %s", (_CURSOR,))
    row = await cur.fetchone()
    if row is None:
        return START
    namespace, memory_id = json.loads(row["value"])
    return namespace, memory_id


async def refresh(conn: Connection, batch: int) -> int:
    """Compute the specificities due among the next `batch` live memories after the last
    pass's; how many were stored. Each namespace commits on its own and gives up on a row
    locked for more than 50 ms (a deletion in flight): recall computes that one itself."""
    after = await cursor(conn)
    cur = await conn.execute(_RANGE, (after[0], after[1], batch))
    keys = [(r["namespace"], r["id"]) for r in await cur.fetchall()]
    # past the last memory: the next pass starts again from the first
    last = (keys[-1][0], str(keys[-1][1])) if len(keys) == batch else START
    by_ns: dict[str, list[uuid.UUID]] = {}
    for namespace, memory_id in keys:
        by_ns.setdefault(namespace, []).append(memory_id)
    stored = 0
    for namespace, ids in by_ns.items():
        stored += await refresh_namespace(conn, namespace, ids)
    await conn.execute(
        "INSERT INTO hindsight_meta (name, value) VALUES (%s, %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (_CURSOR, json.dumps(list(last))),
    )
    return stored


async def refresh_namespace(conn: Connection, namespace: str, ids: list[uuid.UUID]) -> int:
    """Compute the specificities and masses due among these memories of one namespace, in
    a transaction of their own; how many were stored (none if a row stayed locked for
    more than 50 ms: a deletion in flight)."""
    try:
        async with conn.transaction():
            cur = await conn.execute(_DUE, {"ns": namespace, "ids": ids})
            due = {
                (namespace, r["id"]): Kept(r["specificity"], r["mass"], r["n"], r["updated_at"])
                for r in await cur.fetchall()
            }
            return await remember(conn, due) if due else 0
    except psycopg.errors.LockNotAvailable:
        return 0
