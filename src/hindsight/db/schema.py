"""What the running code expects of the schema, checked before serving."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import psycopg

from hindsight.errors import ConfigurationError

EMBEDDING_INDEX = "ix_long_term_memory_embedding"
KEYWORDS_INDEX = "ix_long_term_memory_keywords"
KEYWORD_TERMS_INDEX = "ix_memory_keywords_keyword_terms"
# m = 16, ef_construction = 64: pgvector's defaults; benchmarks/ has the measurements.
_HNSW = (
    "CREATE INDEX {concurrently}{name} ON long_term_memory USING hnsw ({column} {ops}) "
    "WITH (m = 16, ef_construction = 64)"
)


def embedding_index_sql(
    column: str = "embedding", name: str = EMBEDDING_INDEX, *, concurrently: bool = False
) -> str:
    return _HNSW.format(
        concurrently="CONCURRENTLY " if concurrently else "",
        name=name,
        column=column,
        ops="halfvec_cosine_ops",
    )


def keywords_index_sql(*, m: int, ef_construction: int) -> str:
    """The sparse HNSW graph over keyword vectors, as migrations 0032 and 0033 built it and
    0040's downgrade builds it again. It answered only queries whose every term is too
    common for the postings budget; 0040 drops it (the keyword arm reads the posting lists
    for those too)."""
    return (
        f"CREATE INDEX {KEYWORDS_INDEX} ON long_term_memory USING hnsw "
        f"(keywords sparsevec_ip_ops) WITH (m = {m}, ef_construction = {ef_construction})"
    )


def keyword_terms_index_sql() -> str:
    """The keyword arm's posting lists, over the narrow copy of each memory's keyword
    columns (migration 0035). No pending list: every search would read it whole (0021)."""
    return (
        f"CREATE INDEX {KEYWORD_TERMS_INDEX} ON memory_keywords USING gin (keyword_terms) "
        "WITH (fastupdate = off)"
    )


# An HNSW graph node in pgvector's in-memory build: its vector (2 bytes a dimension as
# halfvec) and, at m = 16, about 1 kB of neighbour lists and bookkeeping.
_GRAPH_NODE_BYTES = 1024


def index_build_memory_mb(rows: int, dimensions: int, cap_mb: int) -> int:
    """maintenance_work_mem (MB) that keeps the HNSW graph of `rows` vectors in memory while
    it is built. A graph that outgrows it is finished on disk, several times slower (1M
    memories with 1 GB: the last quarter took longer than the first three). At least 1 GB,
    at most `cap_mb` (HINDSIGHT_INDEX_BUILD_MEMORY_MB)."""
    need = rows * (2 * dimensions + _GRAPH_NODE_BYTES) * 5 / 4 / 2**20
    return int(min(cap_mb, max(1024, need)))


@contextlib.asynccontextmanager
async def index_build_session(
    conn: Any, rows: int, dimensions: int, cap_mb: int
) -> AsyncIterator[None]:
    """The connection set up for building HNSW indexes over `rows` vectors: the graph's
    memory and both cores' worth of workers; reset afterwards, as the connection is pooled."""
    memory_mb = index_build_memory_mb(rows, dimensions, cap_mb)
    await conn.execute(f"SET maintenance_work_mem = '{memory_mb}MB'")
    await conn.execute("SET max_parallel_maintenance_workers = 2")
    try:
        yield
    finally:
        await conn.execute("RESET maintenance_work_mem")
        await conn.execute("RESET max_parallel_maintenance_workers")


# The indexes a bulk load drops and builds again, by name.
SEARCH_INDEXES = {
    EMBEDDING_INDEX: embedding_index_sql(),
    KEYWORD_TERMS_INDEX: keyword_terms_index_sql(),
}


def migration_embedding(config: Any) -> tuple[str, int]:
    """Name and width of the embeddings a new schema is created for.

    `hindsight db upgrade` and `serve` pass them in (they ask the model); a bare `alembic
    upgrade` takes them from settings (migrations/env.py), which must then state the width
    of a remote model.
    """
    name = config.attributes.get("embedding_name")
    dims = config.attributes.get("embedding_dimensions")
    if name and dims:
        return str(name), int(dims)
    raise ConfigurationError(
        "the embedding model's width is unknown: set HINDSIGHT_EMBEDDING_DIMENSIONS, or run "
        "`hindsight db upgrade`, which asks the model"
    )


async def stored_embedding(conn: psycopg.AsyncConnection[Any]) -> tuple[str, int]:
    """Model name and vector width the database holds embeddings for."""
    cur = await conn.execute(
        "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute "
        "WHERE attrelid = 'long_term_memory'::regclass AND attname = 'embedding'"
    )
    row = await cur.fetchone()
    assert row is not None
    match = re.search(r"\((\d+)\)", row["type"])
    width = int(match.group(1)) if match else 0
    cur = await conn.execute("SELECT value FROM hindsight_meta WHERE name = 'embedding_model'")
    meta = await cur.fetchone()
    return (meta["value"] if meta else ""), width


async def set_embedding_model(
    conn: psycopg.AsyncConnection[Any], name: str, dimensions: int
) -> None:
    """Point the schema at another model; the caller makes sure no old vectors remain.

    Changing the width rewrites the column type, which needs the HNSW index rebuilt.
    """
    _, width = await stored_embedding(conn)
    async with conn.transaction():
        if width != dimensions:
            await conn.execute(f"DROP INDEX IF EXISTS {EMBEDDING_INDEX}")
            width = int(dimensions)
            await conn.execute(
                f"ALTER TABLE long_term_memory ALTER COLUMN embedding TYPE halfvec({width})"
            )
            await conn.execute(embedding_index_sql())
        await conn.execute(
            "INSERT INTO hindsight_meta (name, value) VALUES ('embedding_model', %s), "
            "('embedding_dimensions', %s) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, str(dimensions)),
        )


async def ensure_embedding_matches(
    conn: psycopg.AsyncConnection[Any], name: str, dimensions: int
) -> None:
    """Stop start-up when stored vectors came from another model or have another width.

    An empty store simply adopts the configured model, so changing the embedder before the
    first memory is written needs no ceremony.
    """
    stored_name, width = await stored_embedding(conn)
    if stored_name == name and width == dimensions:
        return
    cur = await conn.execute("SELECT EXISTS (SELECT 1 FROM long_term_memory) AS any")
    row = await cur.fetchone()
    if row is not None and not row["any"]:
        await set_embedding_model(conn, name, dimensions)
        return
    raise ConfigurationError(
        f"the database holds {width}-dimension embeddings from {stored_name!r}, but the "
        f"configured embedder is {name!r} with {dimensions} dimensions. Vectors from two "
        "models cannot be compared: run `hindsight reembed` to re-embed every memory with "
        "the configured model, or restore the previous HINDSIGHT_EMBEDDING_* settings"
    )
