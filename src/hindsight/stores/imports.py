"""SQL for `hindsight import`: staging and merging chunks of new memories, and the record
of which lines of an input are written, so a re-run skips them."""

from __future__ import annotations

from typing import Any

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute

_STAGE = (
    "CREATE TEMP TABLE import_stage ON COMMIT DROP AS SELECT id, namespace, mem_key, "
    "mem_value, memory_type, embedding, keywords, keyword_terms, confidence, importance, "
    "source, tags, metadata, verified, permanent, changed_by, occurred_at, 0 AS line "
    "FROM long_term_memory WITH NO DATA"
)
_COLUMNS = (
    "id, namespace, mem_key, mem_value, memory_type, embedding, keywords, keyword_terms, "
    "confidence, importance, source, tags, metadata, verified, permanent, changed_by, "
    "occurred_at"
)
STAGE_COPY = f"COPY import_stage ({_COLUMNS}, line) FROM STDIN WITH (FORMAT BINARY)"
STAGE_TYPES = [
    "uuid",
    "text",
    "text",
    "text",
    "text",
    "halfvec",
    "sparsevec",
    "int4[]",
    "numeric",
    "float8",
    "text",
    "text[]",
    "jsonb",
    "bool",
    "bool",
    "text",
    "timestamptz",
    "int4",
]
# Rows whose key became active meanwhile (a concurrent write) are left in the stage, not
# an error: the caller observes them instead. One namespace's rows go in side by side: a
# recall of a small namespace reads every row of it, and reads fewer pages when they share.
_MERGE = f"""
WITH ins AS (
    INSERT INTO long_term_memory ({_COLUMNS})
    SELECT {_COLUMNS} FROM import_stage ORDER BY namespace, line
    ON CONFLICT (namespace, mem_key) WHERE live DO NOTHING
    RETURNING id
), done AS (
    INSERT INTO bulk_import_lines (import_id, line)
    SELECT %s, s.line FROM import_stage s JOIN ins USING (id)
    RETURNING line
)
SELECT line FROM done
"""


async def set_actor(conn: Connection, actor: str) -> None:
    """Who the history trigger records for this transaction's changes."""
    await attribute(conn, actor=actor)


async def stage(conn: Connection) -> None:
    await conn.execute(_STAGE)


async def merge(conn: Connection, import_id: str) -> set[int]:
    """Move the staged rows into long_term_memory; the lines written."""
    cur = await conn.execute(_MERGE, (import_id,))
    return {int(r["line"]) for r in await cur.fetchall()}


async def begin(conn: Connection, import_id: str, lines: int) -> dict[str, Any]:
    cur = await conn.execute(
        "INSERT INTO bulk_imports AS b (id, lines) VALUES (%s, %s) "
        "ON CONFLICT (id) DO UPDATE SET lines = excluded.lines "
        "RETURNING b.started_at, b.finished_at",
        (import_id, lines),
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def written(conn: Connection, import_id: str, lines: list[int]) -> set[int]:
    """Which of `lines` an earlier run of this import has written."""
    cur = await conn.execute(
        "SELECT line FROM bulk_import_lines WHERE import_id = %s AND line = ANY(%s)",
        (import_id, lines),
    )
    return {int(r["line"]) for r in await cur.fetchall()}


async def mark_written(conn: Connection, import_id: str, lines: list[int]) -> None:
    await conn.execute(
        "INSERT INTO bulk_import_lines (import_id, line) SELECT %s, unnest(%s::int[]) "
        "ON CONFLICT DO NOTHING",
        (import_id, lines),
    )


async def finish(conn: Connection, import_id: str) -> None:
    async with conn.transaction():
        await conn.execute(
            "UPDATE bulk_imports SET finished_at = now() WHERE id = %s", (import_id,)
        )
        await conn.execute("DELETE FROM bulk_import_lines WHERE import_id = %s", (import_id,))
