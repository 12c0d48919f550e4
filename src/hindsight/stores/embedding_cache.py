"""SQL of the embedding cache: vectors by model and content hash (float32, little-endian)."""

from __future__ import annotations

import numpy as np

from hindsight.db.pool import Connection
from hindsight.embeddings.base import Vector


async def lookup(conn: Connection, model: str, digests: list[bytes]) -> dict[bytes, Vector]:
    cur = await conn.execute(
        "SELECT content_hash, vector FROM embedding_cache "
        "WHERE model = %s AND content_hash = ANY(%s)",
        (model, digests),
    )
    return {
        bytes(row["content_hash"]): np.frombuffer(bytes(row["vector"]), dtype="<f4").copy()
        for row in await cur.fetchall()
    }


async def keep(conn: Connection, model: str, vectors: dict[bytes, Vector]) -> None:
    await conn.execute(
        "INSERT INTO embedding_cache (model, content_hash, vector) "
        "SELECT %s, h, v FROM unnest(%s::bytea[], %s::bytea[]) AS x(h, v) "
        "ON CONFLICT DO NOTHING",
        (
            model,
            list(vectors.keys()),
            [np.asarray(v, dtype="<f4").tobytes() for v in vectors.values()],
        ),
    )
