"""The async connection pool every request borrows from."""

from __future__ import annotations

from typing import Any

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.urls import psycopg_url

Connection = psycopg.AsyncConnection[dict[str, Any]]


async def _configure(conn: Connection) -> None:
    await register_vector_async(conn)


def _session_settings(settings: Settings) -> str:
    # hnsw.* are set per connection so each recall stays one round trip. relaxed_order lets
    # a filtered HNSW scan keep going until it has enough rows; we re-rank them anyway.
    return (
        f"-c hnsw.ef_search={settings.hnsw_ef_search} "
        "-c hnsw.iterative_scan=relaxed_order "
        "-c application_name=hindsight"
    )


async def open_pool(
    settings: Settings, url: str, *, name: str = "hindsight"
) -> AsyncConnectionPool[Connection]:
    pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
        psycopg_url(url),
        min_size=settings.db_pool_min,
        max_size=settings.db_pool_max,
        kwargs={
            "autocommit": True,
            "row_factory": dict_row,
            "options": _session_settings(settings),
        },
        configure=_configure,
        open=False,
        name=name,
        timeout=10.0,
    )
    await pool.open(wait=True, timeout=30.0)
    return pool
