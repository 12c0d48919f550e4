"""Consolidation ("hindsight"): after a task, distil its working memory into long-term memory.

A job covers the session's steps past its consolidation mark. Everything the job writes —
the memories it observes, the summaries it fills in, the advanced mark and its own
"succeeded" — commits in one transaction, so:
- running it again changes nothing: there are no steps past the mark any more;
- a crash mid-job changes nothing either: the lease runs out, another worker (or the same
  one after a restart) takes the job over, and the steps are still there, since the purge
  leaves alone the steps of a session with an open job.

With an LLM the steps go through the distiller (existing memories shown, so repeats become
reinforcements). Without one there is a documented deterministic path: steps that carry
memories in `metadata.memory` (an object or a list of them, shaped like a memory in the
batch call) are observed as they are, and older long steps get their first sentence as
summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import replace
from typing import Any

from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel, Field, ValidationError

from hindsight import disclose, limits
from hindsight.background import BackgroundLoop
from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.errors import NotFound, ProviderError, Unavailable
from hindsight.ids import uuid7
from hindsight.llm import LLM
from hindsight.llm.prompts import SUMMARY_SYSTEM, summary_user
from hindsight.observability import metrics
from hindsight.services.consolidation_result import Progress
from hindsight.services.distill import (
    TRANSCRIPT_MAX_CHARS,
    Candidate,
    Distiller,
    screen,
)
from hindsight.services.observe import Observer
from hindsight.services.observing import Outcome
from hindsight.services.redaction import scrubber
from hindsight.stores import consolidation_jobs as store, steps as steps_store
from hindsight.stores.hot_steps import HotSteps
from hindsight.text.filler import first_sentence_summary

log = logging.getLogger(__name__)

# Steps shorter than this are shown whole; a summary would not save anything.
SUMMARIZE_MIN_CHARS = 240
_SUMMARY_BATCH = 40
# summaries asked for as steps are written: requests at once, and waiting at most
_SUMMARY_CONCURRENCY = 4
_SUMMARY_PENDING_MAX = 256
# A job reads the steps past the mark in windows this big: what one LLM prompt holds (a
# single longer step makes a window of its own), and a bound on what a job holds in memory.
WINDOW_MAX_CHARS = TRANSCRIPT_MAX_CHARS
WINDOW_MAX_STEPS = 1_000


class _Raced(Exception):
    """Another job moved the session's mark first; this one must start over."""


class _LeaseLost(Exception):
    """The job was taken over by another worker (this one's lease ran out): what this
    attempt did is rolled back, and the job is left to its new owner."""


class _Summary(BaseModel):
    step_index: int
    summary: str = Field(max_length=2_000)


class _SummariesOut(BaseModel):
    summaries: list[_Summary] = Field(default_factory=list)


def marked_memories(steps: list[dict[str, Any]]) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """The deterministic path: memories that steps carry in `metadata.memory`."""
    found: list[Candidate] = []
    skipped: list[dict[str, Any]] = []
    for step in steps:
        raw = (step.get("metadata") or {}).get("memory")
        if raw is None:
            continue
        for item in raw if isinstance(raw, list) else [raw]:
            if not isinstance(item, dict) or not item.get("key") or not item.get("value"):
                skipped.append(
                    {
                        "step_index": step["step_index"],
                        "reason": "metadata.memory needs a key and a value",
                    }
                )
                continue
            try:
                found.append(
                    Candidate.model_validate({**item, "importance": item.get("importance", 1.0)})
                )
            except ValidationError as exc:
                # one bad item must not fail the job (and with it every other item) for good
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'item'}: {e['msg']}"
                    for e in exc.errors()
                )
                skipped.append(
                    {
                        "step_index": step["step_index"],
                        "reason": f"metadata.memory item is invalid: {problems}",
                    }
                )
    return found, skipped


class ConsolidationService:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        observer: Observer,
        hot: HotSteps,
        llm: LLM | None,
        distiller: Distiller | None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._observer = observer
        self._hot = hot
        self._llm = llm
        self._distiller = distiller
        self._summarizing: set[asyncio.Task[None]] = set()
        self._summary_slots = asyncio.Semaphore(_SUMMARY_CONCURRENCY)

    def summary_when_written(self, content: str) -> str | None:
        """The summary a step gets as it is written: a long step's first sentence (what the
        context read of a session still running needs now); None for a short step. With an
        LLM configured, `summarize_later` replaces it with the model's."""
        if len(content) < SUMMARIZE_MIN_CHARS:
            return None
        return first_sentence_summary(content)

    def summarize_later(self, namespace: str, session_id: str, step: dict[str, Any]) -> None:
        """Ask the LLM in the background for the summary of a long step written with none
        (its summary the first sentence `summary_when_written` gave it), off the write path:
        a slow or failing model never delays or loses a step, whose first sentence stands
        until the model's summary replaces it (not if the client set one meanwhile). In
        process memory only: a restart before the model answers leaves the first sentence,
        which consolidation then replaces (`_llm_summaries`). At most
        `_SUMMARY_CONCURRENCY` requests at once and `_SUMMARY_PENDING_MAX` waiting; past
        that the first sentence stands."""
        if self._llm is None or not self._settings.step_summary_llm or step["summary"] is None:
            return
        if len(self._summarizing) >= _SUMMARY_PENDING_MAX:
            metrics.STEP_SUMMARIES.labels("builtin").inc()
            return
        task = asyncio.create_task(self._summarize(namespace, session_id, step))
        self._summarizing.add(task)
        task.add_done_callback(self._summarizing.discard)

    async def _summarize(self, namespace: str, session_id: str, step: dict[str, Any]) -> None:
        assert self._llm is not None
        index = step["step_index"]
        try:
            async with self._summary_slots:
                answer = await self._llm.complete_json(
                    SUMMARY_SYSTEM, summary_user([step]), _SummariesOut
                )
            text = next(
                (
                    a.summary.replace("\x00", "").strip()
                    for a in answer.summaries
                    if a.step_index == index
                ),
                "",
            )[: limits.STEP_SUMMARY_MAX_CHARS]
            if not text:
                metrics.STEP_SUMMARIES.labels("builtin").inc()
                return
            text = (await scrubber(self._observer.policies, namespace)).quietly(text)
            async with self._pool.connection() as conn:
                changed = await steps_store.replace_summary(
                    conn, namespace, session_id, index, step["summary"], text
                )
        except (ProviderError, Unavailable) as exc:
            log.warning("step %s of a session: the LLM summary failed (%s)", index, exc)
            metrics.STEP_SUMMARIES.labels("builtin").inc()
            return
        except Exception:
            # a background task has no caller to raise to: the first sentence stands
            log.exception("step %s of a session: the LLM summary failed", index)
            metrics.STEP_SUMMARIES.labels("builtin").inc()
            return
        if changed is None:
            metrics.STEP_SUMMARIES.labels("kept").inc()
            return
        await self._hot.replaced(namespace, session_id, changed)
        metrics.STEP_SUMMARIES.labels("llm").inc()

    async def aclose(self) -> None:
        """Stop the summaries still being asked for (their steps keep the first sentence)."""
        for task in list(self._summarizing):
            task.cancel()
        await asyncio.gather(*self._summarizing, return_exceptions=True)

    async def enqueue(self, namespace: str, session_id: str, trigger: str) -> dict[str, Any]:
        async with self._pool.connection() as conn:
            return await store.enqueue(conn, uuid7(), namespace, session_id, trigger)

    async def get(self, namespace: str, job_id: uuid.UUID) -> dict[str, Any]:
        async with self._pool.connection() as conn:
            row = await store.get(conn, namespace, job_id)
        if row is None:
            raise NotFound(f"no job {job_id} in namespace {namespace!r}")
        return row

    async def run_next(self) -> bool:
        """Claim and run one job; False when there was none to run."""
        async with self._pool.connection() as conn:
            job = await store.claim(
                conn, self._settings.job_lease_seconds, self._settings.job_max_attempts
            )
        if job is None:
            return False
        started = time.perf_counter()
        outcome = "succeeded"
        lease = asyncio.create_task(self._keep_lease(job))
        try:
            await self._run(job)
        except _LeaseLost:
            outcome = "taken_over"
            log.warning(
                "consolidation job %s (attempt %s) was taken over by another worker; "
                "its result is that worker's",
                job["id"],
                job["attempts"],
            )
        except asyncio.CancelledError:
            # shutting down: hand the job back now rather than when its lease runs out
            await self._reschedule(job, "interrupted by a shutdown", 0)
            raise
        except _Raced:
            outcome = await self._reschedule(job, "another job consolidated this session first", 0)
        except (Unavailable, ProviderError) as exc:
            delay = min(300.0, 5.0 * 2 ** job["attempts"])
            outcome = await self._reschedule(job, exc.message, delay)
        except Exception as exc:
            log.exception("consolidation job %s failed", job["id"])
            # the job's error is shown to API callers: no input values in it (the log has them)
            outcome = await self._reschedule(job, disclose.failure(exc), 5.0 * job["attempts"])
        finally:
            lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lease
        metrics.JOB_SECONDS.labels(outcome).observe(time.perf_counter() - started)
        return True

    async def _keep_lease(self, job: dict[str, Any]) -> None:
        """Renew the lease while the job runs, so a slow job is not taken over."""
        every = self._settings.job_lease_seconds / 3
        while True:
            await asyncio.sleep(every)
            try:
                async with self._pool.connection() as conn:
                    held = await store.renew(
                        conn, job["id"], job["attempts"], self._settings.job_lease_seconds
                    )
            except Exception as exc:  # a blip; the next renewal may still be in time
                log.warning("renewing the lease of job %s failed: %s", job["id"], exc)
                continue
            if not held:
                return  # taken over: the fence refuses this attempt's writes

    async def _reschedule(self, job: dict[str, Any], error: str, delay: float) -> str:
        """Retry the job later, or give up on it: which of the two ("retry", "failed")."""
        attempt = job["attempts"]
        async with self._pool.connection() as conn:
            if attempt >= self._settings.job_max_attempts:
                await store.fail(
                    conn, job["id"], attempt, f"gave up after {attempt} attempts: {error}"
                )
                return "failed"
            await store.retry_later(conn, job["id"], attempt, error, delay)
            return "retry"

    async def _run(self, job: dict[str, Any]) -> None:
        """Distil the steps past the mark window by window (each within the LLM's prompt
        budget), moving the mark past each window only as it commits: nothing past the
        mark is skipped, however long the session."""
        namespace, session_id = job["namespace"], job["session_id"]
        method = "llm" if self._llm is not None else "deterministic"
        progress = Progress()
        while True:
            async with self._pool.connection() as conn:
                mark = await store.consolidation_mark(conn, namespace, session_id)
                window = (
                    []
                    if mark is None
                    else await store.steps_after(
                        conn,
                        namespace,
                        session_id,
                        mark,
                        max_chars=WINDOW_MAX_CHARS,
                        max_steps=WINDOW_MAX_STEPS,
                    )
                )
                more = bool(window) and await store.has_steps_after(
                    conn, namespace, session_id, window[-1]["step_index"]
                )
            if mark is None or not window:
                # only a first window can be empty: a later one is read only when `more`
                note = "the session no longer exists" if mark is None else "no new steps"
                async with self._pool.connection() as conn:
                    await store.succeed(
                        conn,
                        job["id"],
                        job["attempts"],
                        method=method,
                        from_step=None,
                        through_step=None,
                        result={"method": method, "note": note, "observed": []},
                    )
                return
            progress = await self._window(job, mark, window, progress, final=not more)
            if not more:
                return

    async def _window(
        self,
        job: dict[str, Any],
        mark: int,
        steps: list[dict[str, Any]],
        progress: Progress,
        *,
        final: bool,
    ) -> Progress:
        namespace, session_id = job["namespace"], job["session_id"]
        method = "llm" if self._llm is not None else "deterministic"
        through = steps[-1]["step_index"]
        source = f"session:{session_id}"
        skipped: list[dict[str, Any]] = []
        if self._distiller is not None:
            # each step's own time is what its relative words ("yesterday") mean against
            transcript = [
                {
                    "role": s["role"],
                    "content": s["content"],
                    "at": (s.get("occurred_at") or s["created_at"]).isoformat(),
                }
                for s in steps
            ]
            distilled = await self._distiller.distill(
                namespace,
                transcript,
                min_importance=self._settings.extraction_min_importance,
                source=source,
            )
            summaries = await self._llm_summaries(steps)
            note = "distilled by the LLM, with the related existing memories shown to it"
        else:
            candidates, skipped = marked_memories(steps)
            distilled = screen(candidates, min_importance=0.0, source=source)
            summaries = {
                s["step_index"]: first_sentence_summary(s["content"])
                for s in steps
                if s["summary"] is None and len(s["content"]) >= SUMMARIZE_MIN_CHARS
            }
            note = (
                "no LLM configured: observed the memories that steps carry in "
                "metadata.memory; summaries are each long step's first sentence"
            )
        scrub = await scrubber(self._observer.policies, namespace)
        summaries = {i: scrub.quietly(text) for i, text in summaries.items()}
        summarized: list[dict[str, Any]] = []
        done = progress

        async def commit(conn: Connection, outcomes: list[Outcome]) -> None:
            if not await store.advance_mark(
                conn, namespace, session_id, expected=mark, through=through
            ):
                raise _Raced()
            summarized.clear()  # a deadlock retry runs this again
            summarized.extend(
                await store.set_summaries(
                    conn,
                    namespace,
                    session_id,
                    summaries,
                    {s["step_index"]: s["summary"] for s in steps},
                )
            )
            nonlocal done
            done = replace(progress)  # from the last commit again on a deadlock retry
            done.add(steps, outcomes, distilled, skipped, len(summarized))
            if not final:
                # not done yet: only make sure the job is still this attempt's
                if not await store.renew(
                    conn, job["id"], job["attempts"], self._settings.job_lease_seconds
                ):
                    raise _LeaseLost()
                return
            if not await store.succeed(
                conn,
                job["id"],
                job["attempts"],
                method=method,
                from_step=done.from_step,
                through_step=through,
                result=done.result(method, note, WINDOW_MAX_CHARS),
            ):
                raise _LeaseLost()

        await self._observer.observe(
            namespace, [k.observation for k in distilled.kept], actor="consolidation", then=commit
        )
        for step in summarized:
            await self._hot.replaced(namespace, session_id, step)
        return done

    async def _llm_summaries(self, steps: list[dict[str, Any]]) -> dict[int, str]:
        assert self._llm is not None
        # a first-sentence summary is the one given as the step was written: the model's
        # replaces it (when the model was down then, or the process restarted first)
        todo = [
            s
            for s in steps
            if len(s["content"]) >= SUMMARIZE_MIN_CHARS
            and s["summary"] in (None, first_sentence_summary(s["content"]))
        ]
        out: dict[int, str] = {}
        wanted = {s["step_index"] for s in todo}
        for start in range(0, len(todo), _SUMMARY_BATCH):
            batch = todo[start : start + _SUMMARY_BATCH]
            answer = await self._llm.complete_json(
                SUMMARY_SYSTEM, summary_user(batch), _SummariesOut
            )
            for item in answer.summaries:
                text = item.summary.replace("\x00", "").strip()
                if item.step_index in wanted and text:
                    out[item.step_index] = text[: limits.STEP_SUMMARY_MAX_CHARS]
        # a step the model skipped still gets the deterministic summary
        for s in todo:
            if s["summary"] is None:
                out.setdefault(s["step_index"], first_sentence_summary(s["content"]))
        return out


class JobWorker(BackgroundLoop):
    """Runs consolidation jobs in the background, one at a time per process."""

    def __init__(self, service: ConsolidationService, interval: float) -> None:
        super().__init__("hindsight-jobs", self._loop)
        self._service = service
        self._interval = interval

    async def _loop(self) -> None:
        while True:
            try:
                ran = await self._service.run_next()
            except Exception:
                log.exception("job worker error; continuing")
                ran = False
            if not ran:
                await asyncio.sleep(self._interval)
