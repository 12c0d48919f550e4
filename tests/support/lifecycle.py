"""Run the lifecycle scheduler against a test database with an injected clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.services.lifecycle import LifecycleReport, LifecycleService
from hindsight.services.moves import Move
from hindsight.services.policy import PolicyService


def days_from_now(days: float) -> datetime:
    return datetime.now(UTC) + timedelta(days=days)


async def run_pass_async(
    settings: Settings, url: str, **kw: Any
) -> tuple[LifecycleReport, list[Move]]:
    pool = await open_pool(settings, url)
    try:
        # no policy cache: a PUT through the server is seen at once
        service = LifecycleService(settings, pool, PolicyService(settings, pool, ttl=0))
        moves: list[Move] = []
        report = await service.run(on_move=moves.append, **kw)
        return report, moves
    finally:
        await pool.close()


def run_pass(settings: Settings, url: str, **kw: Any) -> tuple[LifecycleReport, list[Move]]:
    """One pass (`now=`, `namespace=`, `dry_run=` as LifecycleService.run takes them)."""
    return asyncio.run(run_pass_async(settings, url, **kw))


def sql(url: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


async def reflect_pass_async(
    settings: Settings, url: str, **kw: Any
) -> tuple[LifecycleReport, list[Move]]:
    """One pass with the reflection step, its LLM (if any) the one `settings` configure."""
    from hindsight.embeddings import create_embedder
    from hindsight.llm import create_llm
    from hindsight.services.observe import Observer
    from hindsight.services.reflection import Reflection
    from hindsight.services.transactions import Writer
    from hindsight.stores.reads import ReadRouter

    pool = await open_pool(settings, url)
    llm = create_llm(settings)
    try:
        policies = PolicyService(settings, pool, ttl=0)
        writer = Writer(pool, ReadRouter(pool, pool))
        embedder = await create_embedder(settings)
        observer = Observer(settings, embedder, writer, policies, None, llm)
        service = LifecycleService(settings, pool, policies, reflection=Reflection(observer))
        moves: list[Move] = []
        report = await service.run(on_move=moves.append, **kw)
        return report, moves
    finally:
        if llm is not None:
            await llm.aclose()
        await pool.close()


def reflect_pass(settings: Settings, url: str, **kw: Any) -> tuple[LifecycleReport, list[Move]]:
    return asyncio.run(reflect_pass_async(settings, url, **kw))
