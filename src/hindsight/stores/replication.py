"""SQL that measures how far a streaming read replica is behind its primary."""

from __future__ import annotations

from hindsight.db.pool import Connection


async def primary_position(conn: Connection) -> int:
    """The primary's WAL insert position, in bytes: every commit so far lies before it."""
    cur = await conn.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS lsn"
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row["lsn"])


async def replayed_position(conn: Connection) -> int | None:
    """How far the replica has replayed (visible to its queries), in bytes; None when the
    server is not a standby, which makes it no read replica of anything."""
    cur = await conn.execute(
        "SELECT pg_is_in_recovery() AS standby, "
        "pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint AS lsn"
    )
    row = await cur.fetchone()
    if row is None or not row["standby"] or row["lsn"] is None:
        return None
    return int(row["lsn"])
