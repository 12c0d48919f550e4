"""SQL for the lifecycle pass's reflection: pairs of live memories under the same subject
path that may contradict each other, and the memories patterns are distilled from."""

from __future__ import annotations

from typing import Any

from hindsight.db.pool import Connection
from hindsight.stores.filters import LIVE_BY_STATUS

_COLUMNS = (
    "{t}.id, {t}.mem_key AS key, {t}.mem_value AS value, {t}.memory_type, {t}.source, "
    "{t}.source_capped, {t}.verified, {t}.permanent"
)

# Pairs join on the subject path (the key up to its last separator), so only memories about
# the same subject are compared: the cost is the sum of the squared group sizes, not the
# namespace's square. `a` is the newer (ids are time-ordered, uuid7).
_PAIRS = f"""
WITH x AS (
    SELECT m.*, substring(m.mem_key from '^(.*[.:/])') AS subject
    FROM long_term_memory m
    WHERE m.namespace = %(ns)s AND {LIVE_BY_STATUS}
      -- an attribute without letters (`D1:5`, `note.12`) names no claim to contradict
      AND substring(m.mem_key from '[^.:/]*$') ~ '[[:alpha:]]'
      AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
)
SELECT {_COLUMNS.format(t="a")}, 1 - (a.embedding <=> b.embedding) AS similarity,
       b.id AS b_id, b.mem_key AS b_key, b.mem_value AS b_value, b.source AS b_source,
       b.source_capped AS b_source_capped, b.verified AS b_verified,
       b.permanent AS b_permanent
FROM x a JOIN x b ON b.subject = a.subject AND b.memory_type = a.memory_type AND b.id < a.id
WHERE a.subject IS NOT NULL AND a.mem_key <> b.mem_key
  AND 1 - (a.embedding <=> b.embedding) >= %(threshold)s
ORDER BY a.id, similarity DESC
LIMIT %(n)s
"""


async def contradiction_pairs(
    conn: Connection, namespace: str, threshold: float, n: int, now: Any
) -> list[dict[str, Any]]:
    """Up to `n` pairs (newer `a`, older `b_*`) of live memories of one type under the same
    subject path, at least `threshold` similar, newest first by the newer's id."""
    cur = await conn.execute(_PAIRS, {"ns": namespace, "threshold": threshold, "n": n, "now": now})
    return list(await cur.fetchall())


async def recent(conn: Connection, namespace: str, n: int) -> list[dict[str, Any]]:
    """The `n` most recently observed live memories (what patterns are read from), with
    the keys already distilled by reflection."""
    cur = await conn.execute(
        f"SELECT m.id, m.mem_key AS key, m.mem_value AS value, m.memory_type, m.source "
        f"FROM long_term_memory m WHERE m.namespace = %s AND {LIVE_BY_STATUS} "
        f"ORDER BY m.last_observed DESC, m.id DESC LIMIT %s",
        (namespace, n),
    )
    return list(await cur.fetchall())
