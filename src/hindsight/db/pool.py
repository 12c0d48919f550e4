"""The async connection pool every request borrows from."""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.urls import psycopg_url

Connection = psycopg.AsyncConnection[dict[str, Any]]


# The statement that gives a connection's planner settings to the Citus workers, per
# connection of a distributed database (see `shard_settings`).
_SHARD_SETTINGS: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()


def shard_settings(conn: Connection) -> str | None:
    """On a Citus coordinator: `SET LOCAL` statements that give the shards the planner
    settings this connection has (HNSW breadth, iterative scan, the search pool's
    enable_*), to run in a transaction before a search. A connection's own settings stay
    on the coordinator, and Citus sends a transaction's SET LOCAL commands to the workers
    it runs the transaction's statements on (citus.propagate_set_commands = 'local', which
    `hindsight db distribute` sets). None on a single PostgreSQL, where the connection's
    settings already apply."""
    return _SHARD_SETTINGS.get(conn)


def distributed(conn: Connection) -> bool:
    """Whether the connection is to a Citus coordinator of a distributed database."""
    return conn in _SHARD_SETTINGS


def _configurer(planner: dict[str, str]) -> Callable[[Connection], Awaitable[None]]:
    async def configure(conn: Connection) -> None:
        await register_vector_async(conn)
        cur = await conn.execute(
            "SELECT current_setting('citus.propagate_set_commands', true) AS v"
        )
        row = await cur.fetchone()
        if row is not None and row["v"] == "local":
            # On a Citus coordinator (`hindsight db distribute` sets this for the database)
            # a statement's plan must see its parameters' values, to route it to the
            # namespace's shard: Citus cannot plan recall's statements generically. The
            # worker plans the statement it is sent with those values anyway.
            await conn.execute("SET plan_cache_mode = force_custom_plan")
            _SHARD_SETTINGS[conn] = "; ".join(
                f"SET LOCAL {name} = {value}" for name, value in planner.items()
            )

    return configure


# A write's near-duplicate check and the retroactive merge look for one twin above a high
# similarity (HINDSIGHT_DEDUP_THRESHOLD): pgvector's default breadth finds it, and a wider
# walk would cost every new key of a large namespace its time.
WRITE_EF_SEARCH = 40


def _planner_settings(settings: Settings, *, search: bool) -> dict[str, str]:
    # hnsw.* are set per connection so each recall stays one statement. relaxed_order lets
    # a filtered HNSW scan keep going until it has enough rows; we re-rank them anyway.
    # Parallel workers take milliseconds to start, more than any query here needs; the
    # planner would also start them for branches a one-time filter then skips.
    planner = {
        "hnsw.ef_search": str(settings.hnsw_ef_search if search else WRITE_EF_SEARCH),
        "hnsw.iterative_scan": "relaxed_order",
        "max_parallel_workers_per_gather": "0",
    }
    if search:
        # The search pool's planner must take an HNSW index for ORDER BY distance LIMIT n
        # even where it would rather read and sort a whole namespace (measured: 18 ms
        # against 4.6 ms at 10k rows). Without sorting, the index is the only way to the
        # order; the exact branches still sort, as they must.
        planner["enable_sort"] = "off"
        # Recall runs the same two statements every time, so plan them once (generic plans
        # of the prepared statements, below), saving 0.5-0.9 ms of planning an arm at 1M
        # memories. A generic plan does not know the namespace's size and, with one
        # namespace holding most rows, would scan the whole table in the exact branch
        # (measured: 650-760 ms for a new namespace at 1M); without sequential scans it
        # reads the namespace index instead, which is the right plan at every size.
        planner["enable_seqscan"] = "off"
    return planner


def _session_settings(settings: Settings, *, search: bool) -> str:
    options = {**_planner_settings(settings, search=search), "application_name": "hindsight"}
    if search:
        options["plan_cache_mode"] = "force_generic_plan"
    return " ".join(f"-c {name}={value}" for name, value in options.items())


async def open_pool(
    settings: Settings,
    url: str,
    *,
    name: str = "hindsight",
    search: bool = False,
    wait: bool = True,
    timeout: float = 10.0,
) -> AsyncConnectionPool[Connection]:
    """The general pool, or (`search=True`) the pool recall's candidate queries run on.
    `wait=False` connects in the background (a read replica may be down at start-up)."""
    pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
        psycopg_url(url),
        min_size=settings.db_pool_min,
        max_size=settings.db_pool_max,
        kwargs={
            "autocommit": True,
            "row_factory": dict_row,
            "options": _session_settings(settings, search=search),
        },
        configure=_configurer(_planner_settings(settings, search=search)),
        open=False,
        name=name,
        timeout=timeout,
    )
    await pool.open(wait=wait, timeout=30.0)
    return pool
