"""SQL for resolving a contradiction between two live memories under different keys: the
older one archived (superseded) or sent to review, and an entry in the newer one's history
naming the older. The triggers write the moved row's history; the newer row, which does
not change, gets its entry through the same function the triggers use."""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.types.json import Jsonb

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute, clear


async def lock_live(
    conn: Connection, namespace: str, memory_id: uuid.UUID
) -> dict[str, Any] | None:
    """The memory, locked, if it is still live (active or cold)."""
    cur = await conn.execute(
        "SELECT m.id, m.mem_key AS key, m.mem_value AS value, m.source, m.source_capped, "
        "m.verified, m.permanent FROM long_term_memory m "
        "WHERE m.namespace = %s AND m.id = %s AND m.live FOR UPDATE",
        (namespace, memory_id),
    )
    return await cur.fetchone()


async def move(
    conn: Connection,
    namespace: str,
    memory_id: uuid.UUID,
    status: str,
    *,
    actor: str,
    reason: str,
) -> None:
    """Archive (`archived`) or send to review (`quarantined`) a live memory, saying why.
    Reversible: an archived memory can be restored, a quarantined one approved."""
    assert status in ("archived", "quarantined")
    await attribute(conn, actor=actor, reason=reason)
    await conn.execute(
        "UPDATE long_term_memory m SET status = %s, updated_at = now(), changed_by = %s "
        "WHERE m.namespace = %s AND m.id = %s AND m.live",
        (status, actor, namespace, memory_id),
    )
    await clear(conn)


async def note(
    conn: Connection,
    namespace: str,
    memory_id: uuid.UUID,
    *,
    change: str,
    actor: str,
    reason: str,
) -> None:
    """A history entry on a memory that itself does not change (its value and confidence
    as they stand)."""
    cur = await conn.execute(
        "SELECT m.id AS memory_id, m.namespace, m.mem_key, m.memory_type, "
        "m.mem_value AS new_value, m.confidence AS new_confidence, m.observation_count, "
        "m.source FROM long_term_memory m WHERE m.namespace = %s AND m.id = %s",
        (namespace, memory_id),
    )
    row = await cur.fetchone()
    if row is None:
        return
    entry = {k: (str(v) if isinstance(v, uuid.UUID) else v) for k, v in row.items()}
    entry.update(change=change, actor=actor, reason=reason)
    entry["new_confidence"] = float(entry["new_confidence"])
    await conn.execute("SELECT hindsight_history_write(%s)", (Jsonb([entry]),))
