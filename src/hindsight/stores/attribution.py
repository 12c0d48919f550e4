"""Who changed memories, and why, for the history triggers: transaction-local settings
(`hindsight.actor`, `hindsight.reason`, `hindsight.change`) that the triggers read.

Set with `SET LOCAL`, before the statement they describe and in its transaction, rather
than with set_config() inside it: on a Citus cluster the triggers run on the workers'
shards, and Citus sends a transaction's SET LOCAL commands there
(`citus.propagate_set_commands = 'local'`, which `hindsight db distribute` sets for the
database), while a set_config() stays on the coordinator; Citus also refuses volatile
functions in the WHERE clause of a statement that changes a distributed table. All the
settings travel in one round trip (several statements in one simple query)."""

from __future__ import annotations

from psycopg import sql

from hindsight.db.pool import Connection


async def attribute(
    conn: Connection,
    *,
    actor: str | None = None,
    reason: str | None = None,
    change: str | None = None,
) -> None:
    """Set those given (an empty string clears one) for the rest of the transaction."""
    sets = [
        sql.SQL("SET LOCAL hindsight.{} = {}").format(sql.SQL(name), sql.Literal(value))
        for name, value in (("actor", actor), ("reason", reason), ("change", change))
        if value is not None
    ]
    if sets:
        await conn.execute(sql.SQL("; ").join(sets))


async def clear(conn: Connection) -> None:
    """Forget the transaction's reason and change name, so later statements in it are not
    recorded with them."""
    await attribute(conn, reason="", change="")
