"""SQL that keeps the specificities recall computed (read back by stores.search)."""

from __future__ import annotations

import uuid
from datetime import datetime

from hindsight.db.pool import Connection
from hindsight.stores.grouping import by_namespace

# by (namespace, memory id): (specificity, the namespace's size then, the memory's updated_at)
Specificities = dict[tuple[str, uuid.UUID], tuple[float, int, datetime]]


async def remember(conn: Connection, found: Specificities) -> None:
    """Store each memory's specificity beside its access counts; sorted so concurrent
    flushers lock rows in one order, and memories deleted since skipped. Run it in a
    transaction: it waits at most 50 ms for a row lock, so a deadlock with a deletion
    costs this cache write, never the deletion."""
    await conn.execute("SET LOCAL lock_timeout = '50ms'")
    for namespace, ids in by_namespace(found):
        await conn.execute(
            "INSERT INTO memory_access AS a "
            "(namespace, memory_id, specificity, specificity_n, specificity_of, specificity_at) "
            "SELECT m.namespace, m.id, d.s, d.n, d.of, now() "
            "FROM unnest(%s::uuid[], %s::float8[], %s::bigint[], %s::timestamptz[]) "
            "AS d(id, s, n, of) JOIN long_term_memory m ON m.namespace = %s AND m.id = d.id "
            "ORDER BY m.id "
            "ON CONFLICT (namespace, memory_id) DO UPDATE SET "
            "specificity = excluded.specificity, specificity_n = excluded.specificity_n, "
            "specificity_of = excluded.specificity_of, specificity_at = excluded.specificity_at",
            (
                ids,
                [found[(namespace, i)][0] for i in ids],
                [found[(namespace, i)][1] for i in ids],
                [found[(namespace, i)][2] for i in ids],
                namespace,
            ),
        )
