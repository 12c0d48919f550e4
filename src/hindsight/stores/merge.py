"""SQL for the retroactive merge: near-duplicate memories that slipped in under different
keys (written before the write-time check existed, or by a bulk import that skipped it)."""

from __future__ import annotations

import uuid
from typing import Any

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute, clear
from hindsight.stores.filters import LIVE_BY_STATUS

# what recall could return: live, and not past its expiry
_RECALLABLE = f"{LIVE_BY_STATUS} AND (m.expires_at IS NULL OR m.expires_at > now())"

# For each of the next `n` memories after the cursor, its closest live twin of the same type.
_PAIRS = f"""
WITH x AS (
    SELECT m.id, m.memory_type, m.embedding, m.mem_value, m.mem_key FROM long_term_memory m
    WHERE m.namespace = %(ns)s AND m.id > %(after)s AND {_RECALLABLE}
    ORDER BY m.id LIMIT %(n)s
)
SELECT x.id AS a, d.id AS b, d.similarity, x.mem_value AS a_value, d.mem_value AS b_value,
       d.mem_key AS b_key
FROM x CROSS JOIN LATERAL (
    SELECT m.id, m.mem_key, m.mem_value, 1 - (m.embedding <=> x.embedding) AS similarity
    FROM long_term_memory m
    WHERE m.namespace = %(ns)s AND m.memory_type = x.memory_type AND m.id <> x.id AND {_RECALLABLE}
    ORDER BY m.embedding <=> x.embedding LIMIT 1
) d
WHERE d.similarity >= %(threshold)s
ORDER BY x.id
"""


async def scan(
    conn: Connection, namespace: str, after: uuid.UUID, n: int, threshold: float
) -> tuple[list[dict[str, Any]], uuid.UUID | None]:
    """Pairs at least `threshold` similar among the next `n` memories, and where the next
    run resumes (None: the namespace was covered, start over)."""
    cur = await conn.execute(
        f"SELECT max(id::text)::uuid AS last, count(*) AS n FROM (SELECT m.id "
        f"FROM long_term_memory m WHERE m.namespace = %(ns)s AND m.id > %(after)s "
        f"AND {_RECALLABLE} ORDER BY m.id LIMIT %(n)s) x",
        {"ns": namespace, "after": after, "n": n},
    )
    span = await cur.fetchone()
    cur = await conn.execute(
        _PAIRS, {"ns": namespace, "after": after, "n": n, "threshold": threshold}
    )
    pairs = await cur.fetchall()
    resume = span["last"] if span and int(span["n"]) == n else None
    return pairs, resume


_MERGE = f"""
WITH pair AS (
    SELECT m.id, m.mem_key, m.importance, m.confidence, m.observation_count, m.tags,
           m.permanent
    FROM long_term_memory m
    WHERE m.namespace = %(ns)s AND m.id IN (%(a)s, %(b)s) AND {LIVE_BY_STATUS}
    ORDER BY m.id FOR UPDATE
),
ranked AS (
    SELECT p.*, row_number() OVER (
        ORDER BY p.permanent DESC, p.importance DESC, p.confidence DESC, p.id) AS place
    FROM pair p
)
SELECT (SELECT id FROM ranked WHERE place = 1) AS winner,
       (SELECT mem_key FROM ranked WHERE place = 1) AS winner_key,
       (SELECT id FROM ranked WHERE place = 2) AS loser,
       (SELECT mem_key FROM ranked WHERE place = 2) AS loser_key,
       (SELECT permanent FROM ranked WHERE place = 2) AS loser_permanent
"""

_ABSORB = """
UPDATE long_term_memory w SET
    observation_count = w.observation_count + l.observation_count,
    confidence = greatest(w.confidence, l.confidence),
    importance = greatest(w.importance, l.importance),
    tags = ARRAY(SELECT DISTINCT unnest(w.tags || l.tags) ORDER BY 1),
    changed_by = %(actor)s, updated_at = now()
FROM long_term_memory l
WHERE w.namespace = %(ns)s AND w.id = %(winner)s AND l.namespace = %(ns)s AND l.id = %(loser)s
"""

_RETIRE = """
UPDATE long_term_memory m SET status = 'archived', changed_by = %(actor)s, updated_at = now()
WHERE m.namespace = %(ns)s AND m.id = %(loser)s
"""


async def merge_pair(
    conn: Connection, namespace: str, a: uuid.UUID, b: uuid.UUID, similarity: float, actor: str
) -> dict[str, Any] | None:
    """Fold the less important of two live memories into the other: the keeper takes the
    observations, the higher confidence and importance and both tag sets; the other is
    archived. Both get a history entry naming the other. None if either is gone, or if
    both are permanent (a permanent memory is never archived; one of them keeps the other)."""
    cur = await conn.execute(_MERGE, {"ns": namespace, "a": a, "b": b})
    row = await cur.fetchone()
    if row is None or row["loser"] is None or row["loser_permanent"]:
        return None
    sim = f"{similarity:.3f}"
    params = {**row, "ns": namespace, "actor": actor}
    await attribute(
        conn,
        actor=actor,
        reason=f"merged near-duplicate {row['loser']} (key {row['loser_key']!r}, similarity {sim})",
    )
    await conn.execute(_ABSORB, params)
    await attribute(
        conn,
        reason=f"merged into {row['winner']} (key {row['winner_key']!r}, similarity {sim})",
    )
    await conn.execute(_RETIRE, params)
    await clear(conn)
    return row
