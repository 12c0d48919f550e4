"""`Hindsight`: the synchronous client."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
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


class Hindsight:
    """A Hindsight service over HTTP.

    >>> hs = Hindsight("http://127.0.0.1:8080", api_key="hs_...")
    >>> hs.observe("alice", "user.favorite_color", "blue", memory_type="preference")
    >>> hs.recall("alice", "what colour does she like?", k=3).results[0].value

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
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=timeout, transport=transport
        )
        self._max_retries = max_retries

    def _run(self, call: Call) -> Any:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            error: Exception | None = None
            try:
                response = self._http.request(
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
            time.sleep(send.backoff(attempt, response))
            attempt += 1

    # --- long-term memory ---
    def observe(
        self, namespace: str, key: str, value: str, **fields: Unpack[opt.MemoryFields]
    ) -> mem.ObserveResult:
        result: mem.ObserveResult = self._run(c.observe(namespace, key, value, fields))
        return result

    def observe_many(
        self, namespace: str, memories: Iterable[Mapping[str, Any]], *, dedup: bool = True
    ) -> list[mem.ObserveResult]:
        """Store or reinforce each memory, in order. `dedup=False`: a new key is never
        merged into a near-identical memory under another key."""
        result: list[mem.ObserveResult] = self._run(
            c.observe_many(namespace, memories, dedup=dedup)
        )
        return result

    def recall(
        self, namespace: str, query: str | None = None, **options: Unpack[opt.RecallOptions]
    ) -> rc.RecallOut:
        """The memories best matching `query`, and/or the conversation so far: `context`
        (turns {"role", "content"}, oldest first; `query` is then the latest).

        >>> hs.recall("alice", context=[{"role": "user", "content": "I adopted a beagle"},
        ...                             {"role": "assistant", "content": "What's its name?"}],
        ...           query="Rex. Where can I walk him?")
        """
        result: rc.RecallOut = self._run(c.recall(namespace, query, options))
        return result

    def explain(self, namespace: str, recall_id: str) -> rc.RecallLogOut:
        result: rc.RecallLogOut = self._run(c.explain(namespace, str(recall_id)))
        return result

    def get(self, namespace: str, memory_id: str) -> mem.MemoryOut:
        result: mem.MemoryOut = self._run(c.get(namespace, str(memory_id)))
        return result

    def list_memories(
        self,
        namespace: str,
        limit: int = 100,
        cursor: str | None = None,
        **filters: Unpack[opt.ListFilters],
    ) -> mem.MemoryPage:
        result: mem.MemoryPage = self._run(c.list_page(namespace, limit, cursor, filters))
        return result

    def iter_memories(
        self, namespace: str, page_size: int = 500, **filters: Unpack[opt.ListFilters]
    ) -> Iterator[mem.MemoryOut]:
        """Every memory, following the cursor: each exactly once."""
        cursor = None
        while True:
            page = self.list_memories(namespace, page_size, cursor, **filters)
            yield from page.memories
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def update(
        self, namespace: str, memory_id: str, **changes: Unpack[opt.MemoryChanges]
    ) -> mem.MemoryOut:
        result: mem.MemoryOut = self._run(c.update(namespace, str(memory_id), changes))
        return result

    def delete(self, namespace: str, memory_id: str) -> None:
        self._run(c.delete(namespace, str(memory_id)))

    def quarantined(
        self, namespace: str, limit: int = 100, cursor: str | None = None
    ) -> mem.MemoryPage:
        """The review queue: memories waiting for a curator's approve or reject."""
        result: mem.MemoryPage = self._run(
            c.list_page(namespace, limit, cursor, {"status": "quarantined"})
        )
        return result

    def approve(self, namespace: str, memory_id: str, reason: str | None = None) -> mem.MemoryOut:
        """A curator's yes to a quarantined memory: it becomes the active one of its key."""
        result: mem.MemoryOut = self._run(c.approve(namespace, str(memory_id), reason))
        return result

    def reject(self, namespace: str, memory_id: str, reason: str | None = None) -> mem.Rejected:
        """A curator's no to a quarantined memory: it is erased (a `rejected` tombstone)."""
        result: mem.Rejected = self._run(c.reject(namespace, str(memory_id), reason))
        return result

    def feedback(
        self,
        namespace: str,
        recall_id: str,
        used: list[str] | None = None,
        unused: list[str] | None = None,
    ) -> fb.FeedbackOut:
        """Say which of a recall's results were used: counted on each memory (used_count,
        unused_count) and kept with the recall, for curators and audits; ranking does not
        read these counts."""
        result: fb.FeedbackOut = self._run(
            c.feedback(namespace, str(recall_id), list(used or []), list(unused or []))
        )
        return result

    def history(self, namespace: str, memory_id: str) -> list[mem.HistoryEntry]:
        result: list[mem.HistoryEntry] = self._run(c.history(namespace, str(memory_id)))
        return result

    def forget(self, namespace: str, **policy: Unpack[opt.ForgetPolicy]) -> mem.ForgetOut:
        result: mem.ForgetOut = self._run(c.forget(namespace, policy))
        return result

    def extract(
        self,
        namespace: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        dry_run: bool = False,
        min_importance: float | None = None,
        source: str | None = None,
    ) -> ex.ExtractOut:
        result: ex.ExtractOut = self._run(
            c.extract(
                namespace, messages, dry_run=dry_run, min_importance=min_importance, source=source
            )
        )
        return result

    # --- working memory ---
    def append_step(
        self, namespace: str, session_id: str, content: str, **fields: Unpack[opt.StepFields]
    ) -> ses.StepOut:
        result: ses.StepOut = self._run(c.append_step(namespace, session_id, content, fields))
        return result

    # this SDK's name for append_step before it took REST's and MCP's, kept for code using it
    append = append_step

    def steps(
        self, namespace: str, session_id: str, recent: int = 20, before: int | None = None
    ) -> list[ses.StepOut]:
        """The newest `recent` live steps (below index `before`, if given), in step order."""
        result: list[ses.StepOut] = self._run(c.steps(namespace, session_id, recent, before))
        return result

    def pop_step(self, namespace: str, session_id: str) -> ses.StepOut:
        """Remove and return the newest live step (`APIError` 404 when there is none)."""
        result: ses.StepOut = self._run(c.pop_step(namespace, session_id))
        return result

    def context(
        self,
        namespace: str,
        session_id: str,
        recent: int = 10,
        max_chars: int = 8000,
        *,
        max_tokens: int | None = None,
    ) -> ses.ContextOut:
        """`max_tokens` instead of `max_chars`: a budget in tokens (estimated)."""
        result: ses.ContextOut = self._run(
            c.context(namespace, session_id, recent, max_chars, max_tokens)
        )
        return result

    def session(self, namespace: str, session_id: str) -> ses.SessionOut:
        result: ses.SessionOut = self._run(c.session(namespace, session_id))
        return result

    def end_session(self, namespace: str, session_id: str) -> ses.SessionEnded:
        result: ses.SessionEnded = self._run(c.end_session(namespace, session_id))
        return result

    def consolidate(self, namespace: str, session_id: str) -> ses.JobOut:
        result: ses.JobOut = self._run(c.consolidate(namespace, session_id))
        return result

    def delete_session(self, namespace: str, session_id: str) -> ses.SessionDeleted:
        result: ses.SessionDeleted = self._run(c.delete_session(namespace, session_id))
        return result

    def job(self, namespace: str, job_id: str) -> ses.JobOut:
        result: ses.JobOut = self._run(c.job(namespace, str(job_id)))
        return result

    def wait_for_job(
        self, namespace: str, job_id: str, timeout: float = 120.0, poll: float = 0.5
    ) -> ses.JobOut:
        """Poll a consolidation job until it succeeds or fails (or `timeout` passes)."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.job(namespace, job_id)
            if current.status in ("succeeded", "failed") or time.monotonic() > deadline:
                return current
            time.sleep(poll)

    def whoami(self) -> mem.Whoami:
        result: mem.Whoami = self._run(c.whoami())
        return result

    # --- a namespace as a whole ---
    def policy(self, namespace: str) -> dict[str, Any]:
        """The namespace's policy document, every field filled in (defaults included)."""
        result: dict[str, Any] = self._run(c.policy(namespace))
        return result

    def set_policy(self, namespace: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the namespace's own policy fields (curator); answers the result."""
        result: dict[str, Any] = self._run(c.set_policy(namespace, document))
        return result

    def erase_namespace(self, namespace: str) -> mem.EraseReceipt:
        """Erase every row and Redis key of the namespace; the receipt counts what went."""
        result: mem.EraseReceipt = self._run(c.erase_namespace(namespace))
        return result

    def export(self, namespace: str, *, sessions: bool = False) -> list[dict[str, Any]]:
        """The namespace's export (format hindsight-export v2), one dict per line."""
        result: list[dict[str, Any]] = self._run(c.export(namespace, sessions))
        return result

    # --- lifecycle ---
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Hindsight:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
