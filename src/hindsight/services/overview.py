"""Read-only views for operators (the debug panel): namespaces at a glance, the recall
log, sessions and their consolidation jobs."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.services.access_recorder import AccessRecorder
from hindsight.stores import overview as store


class OverviewService:
    def __init__(
        self,
        pool: AsyncConnectionPool[Connection],
        recorder: AccessRecorder,
        default_capacity: int,
    ) -> None:
        self._pool = pool
        self._recorder = recorder
        self._default_capacity = default_capacity

    async def namespaces(self, only: Sequence[str] | None) -> list[dict[str, Any]]:
        """`only`: the namespaces a scoped key may see (None: all)."""
        await self._recorder.flush()  # so a recall just made is counted
        async with self._pool.connection() as conn:
            return await store.namespaces(conn, only, self._default_capacity)

    async def recall_hours(self, namespace: str) -> list[dict[str, Any]]:
        async with self._pool.connection() as conn:
            return await store.recall_hours(conn, namespace)

    async def recalls(
        self,
        namespace: str,
        *,
        limit: int,
        before: uuid.UUID | None = None,
        memory_key: str | None = None,
        actor: str | None = None,
        query: str | None = None,
    ) -> list[dict[str, Any]]:
        await self._recorder.flush()
        async with self._pool.connection() as conn:
            return await store.recent_recalls(
                conn,
                namespace,
                limit=limit,
                before=before,
                memory_key=memory_key,
                actor=actor,
                query=query,
            )

    async def sessions(self, namespace: str, *, limit: int) -> list[dict[str, Any]]:
        async with self._pool.connection() as conn:
            return await store.sessions(conn, namespace, limit=limit)

    async def session_jobs(
        self, namespace: str, session_id: str, *, limit: int = 20
    ) -> list[dict[str, Any]]:
        async with self._pool.connection() as conn:
            return await store.session_jobs(conn, namespace, session_id, limit=limit)
