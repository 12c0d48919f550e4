"""Reading long-term memories: one by id, a page in creation order, and a memory's
history. Pages and histories go through the read router (a replica when it is current);
one memory by id is read on the primary."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight.db.models import LIVE_STATUSES
from hindsight.db.pool import Connection
from hindsight.errors import InvalidInput, NotFound
from hindsight.stores import memories as store
from hindsight.stores.filters import MemoryFilter
from hindsight.stores.reads import ReadRouter


def encode_cursor(memory_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(memory_id.bytes).decode().rstrip("=")


def decode_cursor(cursor: str) -> uuid.UUID:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return uuid.UUID(bytes=raw)
    except (binascii.Error, ValueError):
        raise InvalidInput(
            "cursor: not a cursor this server issued; pass next_cursor from the previous page "
            "unchanged"
        ) from None


class MemoryReads:
    def __init__(self, pool: AsyncConnectionPool[Connection], reads: ReadRouter) -> None:
        self._pool = pool
        self._reads = reads

    async def get(self, namespace: str, memory_id: uuid.UUID) -> dict[str, Any]:
        async with self._pool.connection() as conn:
            row = await store.get(conn, namespace, memory_id)
        if row is None:
            raise NotFound(f"no memory {memory_id} in namespace {namespace!r}")
        return row

    async def list_page(
        self,
        namespace: str,
        *,
        limit: int,
        cursor: str | None,
        memory_types: tuple[str, ...] = (),
        tags: tuple[str, ...] = (),
        min_confidence: float | None = None,
        min_importance: float | None = None,
        key: str | None = None,
        key_prefix: str | None = None,
        status: str | None = None,
        occurred_after: datetime | None = None,
        occurred_before: datetime | None = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of memories in creation order. `status`: None lists the live ones,
        "all" every status, else that one."""
        after = decode_cursor(cursor) if cursor else None
        f = MemoryFilter(
            memory_types=memory_types,
            tags=tags,
            min_confidence=min_confidence,
            min_importance=min_importance,
            key=key,
            key_prefix=key_prefix,
            status=LIVE_STATUSES if status is None else None if status == "all" else status,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
        )

        async def read(conn: Connection) -> list[dict[str, Any]]:
            return await store.list_page(conn, namespace, f, after=after, limit=limit + 1)

        rows = await self._reads.read(namespace, read)
        more = len(rows) > limit
        rows = rows[:limit]
        return rows, (encode_cursor(rows[-1]["id"]) if more else None)

    async def history(self, namespace: str, memory_id: uuid.UUID) -> list[dict[str, Any]]:

        async def read(conn: Connection) -> list[dict[str, Any]]:
            return await store.history(conn, namespace, memory_id)

        rows = await self._reads.read(namespace, read)
        if not rows:
            raise NotFound(f"no memory {memory_id} (nor any history of it) in {namespace!r}")
        return rows
