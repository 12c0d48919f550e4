"""`AsyncHindsight`: the asyncio client, call for call the same as `Hindsight`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from types import TracebackType
from typing import Any, Unpack

import httpx

from hindsight.client import _calls as c, _options as opt, _sending as send
from hindsight.client._call import Call

# by module: a list of the models' names here would be _calls's list again
from hindsight.wire import (
    extraction as ex,
    feedback as fb,
    memories as mem,
    recall as rc,
    sessions as ses,
)


class AsyncHindsight:
    """A Hindsight service over HTTP.

    >>> hs = AsyncHindsight("http://127.0.0.1:8080", api_key="hs_...")
    >>> await hs.observe("alice", "user.favorite_color", "blue", memory_type="preference")
    >>> (await hs.recall("alice", "what colour does she like?", k=3)).results[0].value

    Transient failures (cannot connect, 429, 502, 503, 504) are retried with backoff up to
    `max_retries` times; anything else raises `APIError` with the server's message.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout, transport=transport
        )
        self._max_retries = max_retries

    async def _run(self, call: Call) -> Any:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            error: Exception | None = None
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    json=call.json,
                    params=call.params,
                    headers=dict(call.headers),
                )
            except httpx.TransportError as exc:
                error = exc
            if response is not None and response.status_code not in send.TRANSIENT_STATUSES:
                return send.result(call, response)
            if attempt >= self._max_retries or not send.retryable(
                call, response=response, error=error
            ):
                if response is not None:
                    return send.result(call, response)
                raise send.TransportError(f"{call.method} {call.path}: {error}") from error
            await asyncio.sleep(send.backoff(attempt, response))
            attempt += 1

    # --- long-term memory ---
    async def observe(
        self, namespace: str, key: str, value: str, **fields: Unpack[opt.MemoryFields]
    ) -> mem.ObserveResult:
        result: mem.ObserveResult = await self._run(c.observe(namespace, key, value, fields))
        return result

    async def observe_many(
        self, namespace: str, memories: Iterable[Mapping[str, Any]], *, dedup: bool = True
    ) -> list[mem.ObserveResult]:
        """Store or reinforce each memory, in order. `dedup=False`: a new key is never
        merged into a near-identical memory under another key."""
        result: list[mem.ObserveResult] = await self._run(
            c.observe_many(namespace, memories, dedup=dedup)
        )
        return result

    async def recall(
        self, namespace: str, query: str | None = None, **options: Unpack[opt.RecallOptions]
    ) -> rc.RecallOut:
        """The memories best matching `query`, and/or the conversation so far: `context`
        (turns {"role", "content"}, oldest first; `query` is then the latest)."""
        result: rc.RecallOut = await self._run(c.recall(namespace, query, options))
        return result

    async def explain(self, namespace: str, recall_id: str) -> rc.RecallLogOut:
        result: rc.RecallLogOut = await self._run(c.explain(namespace, str(recall_id)))
        return result

    async def get(self, namespace: str, memory_id: str) -> mem.MemoryOut:
        result: mem.MemoryOut = await self._run(c.get(namespace, str(memory_id)))
        return result

    async def list_memories(
        self,
        namespace: str,
        limit: int = 100,
        cursor: str | None = None,
        **filters: Unpack[opt.ListFilters],
    ) -> mem.MemoryPage:
        result: mem.MemoryPage = await self._run(c.list_page(namespace, limit, cursor, filters))
        return result

    async def iter_memories(
        self, namespace: str, page_size: int = 500, **filters: Unpack[opt.ListFilters]
    ) -> AsyncIterator[mem.MemoryOut]:
        """Every memory, following the cursor: each exactly once."""
        cursor = None
        while True:
            page = await self.list_memories(namespace, page_size, cursor, **filters)
            for memory in page.memories:
                yield memory
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def update(
        self, namespace: str, memory_id: str, **changes: Unpack[opt.MemoryChanges]
    ) -> mem.MemoryOut:
        result: mem.MemoryOut = await self._run(c.update(namespace, str(memory_id), changes))
        return result

    async def delete(self, namespace: str, memory_id: str) -> None:
        await self._run(c.delete(namespace, str(memory_id)))

    async def quarantined(
        self, namespace: str, limit: int = 100, cursor: str | None = None
    ) -> mem.MemoryPage:
        """The review queue: memories waiting for a curator's approve or reject."""
        result: mem.MemoryPage = await self._run(
            c.list_page(namespace, limit, cursor, {"status": "quarantined"})
        )
        return result

    async def approve(
        self, namespace: str, memory_id: str, reason: str | None = None
    ) -> mem.MemoryOut:
        """A curator's yes to a quarantined memory: it becomes the active one of its key."""
        result: mem.MemoryOut = await self._run(c.approve(namespace, str(memory_id), reason))
        return result

    async def reject(
        self, namespace: str, memory_id: str, reason: str | None = None
    ) -> mem.Rejected:
        """A curator's no to a quarantined memory: it is erased (a `rejected` tombstone)."""
        result: mem.Rejected = await self._run(c.reject(namespace, str(memory_id), reason))
        return result

    async def feedback(
        self,
        namespace: str,
        recall_id: str,
        used: list[str] | None = None,
        unused: list[str] | None = None,
    ) -> fb.FeedbackOut:
        """Say which of a recall's results were used: counted on each memory (used_count,
        unused_count) and kept with the recall, for curators and audits; ranking does not
        read these counts."""
        result: fb.FeedbackOut = await self._run(
            c.feedback(namespace, str(recall_id), list(used or []), list(unused or []))
        )
        return result

    async def history(self, namespace: str, memory_id: str) -> list[mem.HistoryEntry]:
        result: list[mem.HistoryEntry] = await self._run(c.history(namespace, str(memory_id)))
        return result

    async def forget(self, namespace: str, **policy: Unpack[opt.ForgetPolicy]) -> mem.ForgetOut:
        result: mem.ForgetOut = await self._run(c.forget(namespace, policy))
        return result

    async def extract(
        self,
        namespace: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        dry_run: bool = False,
        min_importance: float | None = None,
        source: str | None = None,
    ) -> ex.ExtractOut:
        result: ex.ExtractOut = await self._run(
            c.extract(
                namespace, messages, dry_run=dry_run, min_importance=min_importance, source=source
            )
        )
        return result

    # --- working memory ---
    async def append_step(
        self, namespace: str, session_id: str, content: str, **fields: Unpack[opt.StepFields]
    ) -> ses.StepOut:
        result: ses.StepOut = await self._run(c.append_step(namespace, session_id, content, fields))
        return result

    # this SDK's name for append_step before it took REST's and MCP's, kept for code using it
    append = append_step

    async def steps(
        self, namespace: str, session_id: str, recent: int = 20, before: int | None = None
    ) -> list[ses.StepOut]:
        """The newest `recent` live steps (below index `before`, if given), in step order."""
        result: list[ses.StepOut] = await self._run(c.steps(namespace, session_id, recent, before))
        return result

    async def pop_step(self, namespace: str, session_id: str) -> ses.StepOut:
        """Remove and return the newest live step (`APIError` 404 when there is none)."""
        result: ses.StepOut = await self._run(c.pop_step(namespace, session_id))
        return result

    async def context(
        self,
        namespace: str,
        session_id: str,
        recent: int = 10,
        max_chars: int = 8000,
        *,
        max_tokens: int | None = None,
    ) -> ses.ContextOut:
        """`max_tokens` instead of `max_chars`: a budget in tokens (estimated)."""
        result: ses.ContextOut = await self._run(
            c.context(namespace, session_id, recent, max_chars, max_tokens)
        )
        return result

    async def session(self, namespace: str, session_id: str) -> ses.SessionOut:
        result: ses.SessionOut = await self._run(c.session(namespace, session_id))
        return result

    async def end_session(self, namespace: str, session_id: str) -> ses.SessionEnded:
        result: ses.SessionEnded = await self._run(c.end_session(namespace, session_id))
        return result

    async def consolidate(self, namespace: str, session_id: str) -> ses.JobOut:
        result: ses.JobOut = await self._run(c.consolidate(namespace, session_id))
        return result

    async def delete_session(self, namespace: str, session_id: str) -> ses.SessionDeleted:
        result: ses.SessionDeleted = await self._run(c.delete_session(namespace, session_id))
        return result

    async def job(self, namespace: str, job_id: str) -> ses.JobOut:
        result: ses.JobOut = await self._run(c.job(namespace, str(job_id)))
        return result

    async def wait_for_job(
        self, namespace: str, job_id: str, timeout: float = 120.0, poll: float = 0.5
    ) -> ses.JobOut:
        """Poll a consolidation job until it succeeds or fails (or `timeout` passes)."""
        deadline = time.monotonic() + timeout
        while True:
            current = await self.job(namespace, job_id)
            if current.status in ("succeeded", "failed") or time.monotonic() > deadline:
                return current
            await asyncio.sleep(poll)

    async def whoami(self) -> mem.Whoami:
        result: mem.Whoami = await self._run(c.whoami())
        return result

    # --- a namespace as a whole ---
    async def policy(self, namespace: str) -> dict[str, Any]:
        """The namespace's policy document, every field filled in (defaults included)."""
        result: dict[str, Any] = await self._run(c.policy(namespace))
        return result

    async def set_policy(self, namespace: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the namespace's own policy fields (curator); answers the result."""
        result: dict[str, Any] = await self._run(c.set_policy(namespace, document))
        return result

    async def erase_namespace(self, namespace: str) -> mem.EraseReceipt:
        """Erase every row and Redis key of the namespace; the receipt counts what went."""
        result: mem.EraseReceipt = await self._run(c.erase_namespace(namespace))
        return result

    async def export(self, namespace: str, *, sessions: bool = False) -> list[dict[str, Any]]:
        """The namespace's export (format hindsight-export v2), one dict per line."""
        result: list[dict[str, Any]] = await self._run(c.export(namespace, sessions))
        return result

    # --- lifecycle ---
    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncHindsight:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
