"""SQL for the search indexes a bulk import drops and builds again: which exist (and are
valid), dropping, building without blocking writes, and the advisory lock that lets one
process at a time drop or build them."""

from __future__ import annotations

from hindsight.db.pool import Connection
from hindsight.db.schema import SEARCH_INDEXES

# Held (session level) by an import from before it drops the indexes until they are built
# again, and by whoever rebuilds indexes a killed import left dropped. It goes with the
# session, so an import killed with -9 leaves it free for the rebuild.
_LOCK = 0x48535F494458  # "HS_IDX"


async def lock(conn: Connection) -> None:
    await conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))


async def try_lock(conn: Connection) -> bool:
    cur = await conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (_LOCK,))
    row = await cur.fetchone()
    return bool(row and row["ok"])


async def unlock(conn: Connection) -> None:
    await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))


async def present(conn: Connection) -> dict[str, bool]:
    """The search indexes that exist, by name, and whether each is valid (an index whose
    CONCURRENTLY build was interrupted exists but is not valid, and is never used)."""
    cur = await conn.execute(
        "SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid IN ('long_term_memory'::regclass, 'memory_keywords'::regclass) "
        "AND c.relname = ANY(%s)",
        (list(SEARCH_INDEXES),),
    )
    return {r["name"]: bool(r["valid"]) for r in await cur.fetchall()}


async def table_rows(conn: Connection, *, analyze: bool = False) -> int:
    """long_term_memory's estimated row count (exact enough to size an index build)."""
    if analyze:
        await conn.execute("ANALYZE long_term_memory")
    cur = await conn.execute(
        "SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'long_term_memory'"
    )
    row = await cur.fetchone()
    return max(0, int(row["n"])) if row else 0


async def drop(conn: Connection, name: str, *, concurrently: bool = False) -> None:
    assert name in SEARCH_INDEXES
    how = "CONCURRENTLY " if concurrently else ""
    await conn.execute(f"DROP INDEX {how}IF EXISTS {name}")


async def build(conn: Connection, name: str) -> None:
    """CREATE INDEX CONCURRENTLY: writes go on while it builds (it takes two passes over
    the table instead of one). Needs an autocommit connection, as the pool's are."""
    ddl = SEARCH_INDEXES[name]
    assert ddl.startswith("CREATE INDEX ")
    await conn.execute(ddl.replace("CREATE INDEX ", "CREATE INDEX CONCURRENTLY ", 1))
