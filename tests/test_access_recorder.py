"""The access/recall-log queue: a batch PostgreSQL refuses is split and only the refused
entry dropped (with a log line), and the queue is bounded while writes cannot keep up."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime

import pytest

from hindsight.db.pool import open_pool
from hindsight.services.access_recorder import AccessRecorder
from hindsight.stores import recall_log
from hindsight.stores.recall_log import RecallEntry
from tests.conftest import make_settings


def _entry(ns: str, query: str) -> RecallEntry:
    return RecallEntry(
        id=uuid.uuid4(),
        namespace=ns,
        query=query,
        k=5,
        filters={},
        result_ids=[],
        scores=[],
        results=[],
        actor="test",
        duration_ms=1.0,
        created_at=datetime.now(UTC),
    )


def test_one_refused_entry_does_not_block_the_others(
    migrated: str, ns: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        pool = await open_pool(make_settings(), migrated)
        try:
            recorder = AccessRecorder(pool, interval=0.01)
            poisoned = _entry(ns, "a NUL \x00 PostgreSQL text cannot hold")
            before = [_entry(ns, f"before {i}") for i in range(5)]
            for e in [*before[:2], poisoned, *before[2:]]:
                recorder.record(e)
            await recorder.flush()
            after = _entry(ns, "after")
            recorder.record(after)
            await recorder.flush()
            assert recorder.pending == 0
            async with pool.connection() as conn:
                for e in [*before, after]:
                    row = await recall_log.get(conn, ns, e.id)
                    assert row is not None and row["query"] == e.query
                assert await recall_log.get(conn, ns, poisoned.id) is None
        finally:
            await pool.close()

    with caplog.at_level(logging.ERROR, logger="hindsight.services.access_recorder"):
        asyncio.run(scenario())
    dropped = [r.getMessage() for r in caplog.records if "dropped the" in r.getMessage()]
    assert len(dropped) == 1 and "recall log entry" in dropped[0], dropped


def test_the_queue_is_bounded_and_says_what_it_dropped(
    migrated: str, ns: str, caplog: pytest.LogCaptureFixture
) -> None:
    entries = [_entry(ns, f"q{i}") for i in range(5)]

    async def scenario() -> None:
        pool = await open_pool(make_settings(), migrated)
        try:
            recorder = AccessRecorder(pool, interval=0.01, max_entries=3)
            for e in entries:
                recorder.record(e)
            assert recorder.pending == 3
            await recorder.flush()
            async with pool.connection() as conn:
                kept = [await recall_log.get(conn, ns, e.id) is not None for e in entries]
            assert kept == [False, False, True, True, True]  # the oldest go first
        finally:
            await pool.close()

    with caplog.at_level(logging.WARNING, logger="hindsight.services.access_recorder"):
        asyncio.run(scenario())
    assert any("dropped 2 recall log entries" in r.getMessage() for r in caplog.records)
