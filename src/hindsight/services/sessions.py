"""Working memory: the steps of running sessions.

Writes go to Postgres first (the durable copy), then to Redis (the hot copy). Reads try
Redis and fall back to Postgres, which then warms Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.errors import Conflict, NotFound
from hindsight.ids import uuid7
from hindsight.observability import metrics
from hindsight.services.consolidation import ConsolidationService
from hindsight.services.policy import PolicyService
from hindsight.services.redaction import scrubber
from hindsight.stores import consolidation_jobs as jobs_store, steps as store
from hindsight.stores.hot_steps import HotSteps


@dataclass(frozen=True)
class Appended:
    step: dict[str, Any]
    replayed: bool  # True when an idempotency key matched an earlier append


@dataclass(frozen=True)
class Context:
    recent: list[dict[str, Any]]
    earlier: list[dict[str, Any]]  # older steps, newest first trimmed to the budget
    omitted: int  # older live steps left out by the budget


class SessionService:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        hot: HotSteps,
        consolidation: ConsolidationService,
        policies: PolicyService,
    ) -> None:
        self._settings = settings
        self._policies = policies
        self._pool = pool
        self._hot = hot
        self._consolidation = consolidation

    async def append_step(
        self,
        namespace: str,
        session_id: str,
        *,
        content: str,
        role: str = "user",
        summary: str | None = None,
        metadata: dict[str, Any] | None = None,
        ttl_seconds: int | None = None,
        idempotency_key: str | None = None,
        occurred_at: datetime | None = None,
    ) -> Appended:
        scrub = await scrubber(self._policies, namespace)
        content = scrub("content", content)
        summary = scrub.optional("summary", summary)
        provisional = summary is None  # the client's own summary is never replaced
        if provisional:
            summary = self._consolidation.summary_when_written(content)
        metadata = scrub.json("metadata", metadata or {})
        idempotency_key = scrub.refuse("idempotency_key", idempotency_key)
        async with self._pool.connection() as conn:
            if idempotency_key is not None:
                earlier = await store.by_idempotency_key(
                    conn, namespace, session_id, idempotency_key
                )
                if earlier is not None:
                    return Appended(earlier, replayed=True)
            try:
                step = await store.append(
                    conn,
                    namespace,
                    session_id,
                    role=role,
                    content=content,
                    summary=summary,
                    metadata=metadata or {},
                    idempotency_key=idempotency_key,
                    ttl_seconds=ttl_seconds or self._settings.working_memory_ttl_seconds,
                    occurred_at=occurred_at,
                )
            except pg_errors.UniqueViolation:
                # A concurrent retry with the same key won the race; answer with its step.
                assert idempotency_key is not None
                earlier = await store.by_idempotency_key(
                    conn, namespace, session_id, idempotency_key
                )
                assert earlier is not None
                return Appended(earlier, replayed=True)
        if step is None:
            raise Conflict(
                f"session {session_id!r} has ended and accepts no more steps; "
                "start a new session id"
            )
        await self._hot.appended(namespace, session_id, step)
        if provisional:
            self._consolidation.summarize_later(namespace, session_id, step)
        every = self._settings.consolidate_every_n_steps
        if every and (step["step_index"] + 1) % every == 0:
            await self._consolidation.enqueue(namespace, session_id, "every_n")
        return Appended(step, replayed=False)

    async def recent(
        self, namespace: str, session_id: str, n: int, *, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest `n` live steps (with an index below `before`, if given), in order."""
        if before is not None:
            async with self._pool.connection() as conn:
                older = await store.older(conn, namespace, session_id, before, limit=n)
            older.reverse()
            return older
        cached = await self._hot.recent(namespace, session_id, n)
        if cached is not None:
            metrics.WORKING_MEMORY_READS.labels("redis").inc()
            return cached
        metrics.WORKING_MEMORY_READS.labels("postgres").inc()
        async with self._pool.connection() as conn:
            rows = await store.recent(conn, namespace, session_id, n)
        await self._hot.fill(namespace, session_id, rows)
        return rows

    async def context(
        self,
        namespace: str,
        session_id: str,
        *,
        recent: int,
        max_chars: int,
        max_tokens: int | None = None,
    ) -> Context:
        """The newest `recent` steps whole; before them, older steps as their summary (or
        their content while no summary exists), newest first, until `max_chars` is spent
        (or `max_tokens`, estimated as 4 characters a token, 1 for a Chinese, Japanese or
        Korean character: agents budget prompts in tokens, and a CJK character is about
        one)."""
        newest = await self.recent(namespace, session_id, recent)
        if not newest or newest[0]["step_index"] == 0:
            return Context(newest, [], 0)
        async with self._pool.connection() as conn:
            earlier, older = await store.earlier_within(
                conn,
                namespace,
                session_id,
                newest[0]["step_index"],
                max_chars if max_tokens is None else 4 * max_tokens,
                cjk_weight=0 if max_tokens is None else 3,
            )
        earlier.reverse()
        return Context(newest, earlier, older - len(earlier))

    async def session(self, namespace: str, session_id: str) -> dict[str, Any]:
        async with self._pool.connection() as conn:
            row = await store.session(conn, namespace, session_id)
        if row is None:
            raise NotFound(f"no session {session_id!r} in namespace {namespace!r}")
        return row

    async def end(self, namespace: str, session_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """End the session and queue its consolidation, in one transaction (an ended
        session with no job would never be consolidated); the session and the job."""
        async with self._pool.connection() as conn, conn.transaction():
            row = await store.end(conn, namespace, session_id)
            if row is None:
                raise NotFound(f"no session {session_id!r} in namespace {namespace!r}")
            job = await jobs_store.enqueue(conn, uuid7(), namespace, session_id, "end")
        return row, job

    async def consolidate(self, namespace: str, session_id: str) -> dict[str, Any]:
        """Queue a consolidation of the steps not yet consolidated (a no-op job if none)."""
        await self.session(namespace, session_id)
        return await self._consolidation.enqueue(namespace, session_id, "manual")

    async def delete(self, namespace: str, session_id: str) -> int:
        async with self._pool.connection() as conn:
            steps = await store.delete(conn, namespace, session_id)
        await self._hot.forget(namespace, session_id)
        if steps is not None:
            # the deleted steps stay in the append-only file's history until it is rewritten
            await self._hot.rewrite_aof()
        if steps is None:
            raise NotFound(f"no session {session_id!r} in namespace {namespace!r}")
        return steps

    async def pop_last(self, namespace: str, session_id: str) -> dict[str, Any]:
        """Remove and return the session's newest live step (an agent undoing its last turn)."""
        async with self._pool.connection() as conn, conn.transaction():
            status, step = await store.pop_last(conn, namespace, session_id)
        if status == "ended":
            raise Conflict(f"session {session_id!r} has ended; its steps can no longer change")
        if step is None:
            raise NotFound(f"session {session_id!r} in namespace {namespace!r} has no live step")
        await self._hot.popped(namespace, session_id, step)
        return step

    async def set_summary(
        self, namespace: str, session_id: str, step_index: int, summary: str | None
    ) -> dict[str, Any]:
        summary = (await scrubber(self._policies, namespace)).optional("summary", summary)
        async with self._pool.connection() as conn:
            step = await store.set_summary(conn, namespace, session_id, step_index, summary)
        if step is None:
            raise NotFound(f"no live step {step_index} in session {session_id!r} of {namespace!r}")
        await self._hot.replaced(namespace, session_id, step)
        return step
