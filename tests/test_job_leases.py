"""Consolidation job leases: renewed while a job runs, every update fenced on the attempt
that holds the job, and a job whose worker keeps dying given up at the maximum attempts."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from hindsight.db.pool import Connection
from hindsight.stores import consolidation_jobs as store
from tests.conftest import Api, make_settings
from tests.support import fake_brain
from tests.support.fake_openai import FakeOpenAI
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer

T = TypeVar("T")


def _with_conn(url: str, work: Callable[[Connection], Awaitable[T]]) -> T:
    async def run() -> T:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, row_factory=dict_row)
        async with conn:
            return await work(conn)

    return asyncio.run(run())


def _lease_runs_out(url: str, job_id: uuid.UUID) -> None:
    """The clock moves past the lease: its worker is taken for dead."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE consolidation_jobs SET locked_until = now() - interval '1 second' "
            "WHERE id = %s",
            (job_id,),
        )


def _job(url: str, job_id: uuid.UUID) -> dict[str, Any]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        row = conn.execute(
            "SELECT status, attempts, result, error FROM consolidation_jobs WHERE id = %s",
            (job_id,),
        ).fetchone()
    assert row is not None
    return row


def test_a_taken_over_jobs_old_worker_cannot_overwrite_it(fresh_db: str, ns: str) -> None:
    job_id = uuid.uuid4()

    async def scenario(conn: Connection) -> None:
        await store.enqueue(conn, job_id, ns, "s", "manual")
        first = await store.claim(conn, 60, 5)
        assert first is not None and first["attempts"] == 1
        _lease_runs_out(fresh_db, job_id)
        second = await store.claim(conn, 60, 5)
        assert second is not None and second["id"] == job_id and second["attempts"] == 2
        assert await store.succeed(
            conn, job_id, 2, method="llm", from_step=0, through_step=3, result={"by": "second"}
        )
        # the first worker comes back from its slow call: none of its updates may land
        assert not await store.retry_later(conn, job_id, 1, "raced", 0)
        assert not await store.fail(conn, job_id, 1, "boom")
        assert not await store.succeed(
            conn, job_id, 1, method="llm", from_step=0, through_step=1, result={"by": "first"}
        )
        assert not await store.renew(conn, job_id, 1, 60)

    _with_conn(fresh_db, scenario)
    job = _job(fresh_db, job_id)
    assert (job["status"], job["attempts"], job["result"], job["error"]) == (
        "succeeded",
        2,
        {"by": "second"},
        None,
    )


def test_a_job_whose_worker_keeps_dying_ends_failed_at_the_maximum(fresh_db: str, ns: str) -> None:
    job_id = uuid.uuid4()

    async def scenario(conn: Connection) -> None:
        await store.enqueue(conn, job_id, ns, "s", "manual")
        for attempt in (1, 2, 3):
            job = await store.claim(conn, 60, 3)
            assert job is not None and job["attempts"] == attempt
            _lease_runs_out(fresh_db, job_id)  # its process died mid-job
        assert await store.claim(conn, 60, 3) is None

    _with_conn(fresh_db, scenario)
    job = _job(fresh_db, job_id)
    assert job["status"] == "failed" and job["attempts"] == 3
    assert job["error"] == "gave up after 3 attempts: its worker stopped before finishing"


def test_a_slow_job_keeps_its_lease_and_runs_once(fresh_db: str, redis_url: str, ns: str) -> None:
    """Lease 2 s, an LLM call of 6 s, a second replica polling for jobs: the job must not
    be taken over, run twice, or be set back to pending after it finished. (The lease is
    renewed every third of it: with 1 s, a busy machine holding the renewal up for 0.7 s
    would let the other replica take the job over.)"""
    with FakeOpenAI() as brain:
        brain.brain = fake_brain.answer
        settings = make_settings(
            llm_base_url=brain.url,
            llm_model="fake-chat",
            job_lease_seconds=2.0,
            job_poll_interval_seconds=0.05,
        )
        with (
            ThreadServer(settings, fresh_db, redis_url) as a,
            ThreadServer(settings, fresh_db, redis_url),
        ):
            api = Api.at(a.url, ns)
            api.append("slow", "my team is platform")
            brain.delay_next(6)
            ended = api.client.post(f"{api.base}/sessions/slow:end")
            job_id = ended.json()["consolidation"]["job_id"]
            job = wait_until(
                lambda: api.client.get(f"{api.base}/jobs/{job_id}").json(),
                "the job to finish",
                30,
                accept=lambda job: job["status"] not in ("pending", "running"),
            )
            assert job["status"] == "succeeded" and job["attempts"] == 1, job
            assert [o["key"] for o in job["result"]["observed"]] == ["user.team"]
            assert brain.count("chat") == 1  # the distiller ran once
            page = api.client.get(f"{api.base}/memories").json()["memories"]
            assert [(m["key"], m["observation_count"]) for m in page] == [("user.team", 1)]
