"""The calls MCP tools make, answered by the services in this process.

Over HTTP the caller's key was checked once, by the gate in front of MCP; a tool call then
goes straight to the services with that principal. The answers are the REST answers
(`services.answers`), the input is checked by the same wire models, and an invalid input
is refused with the same message REST gives — one validation, one auth check, no second
serialization through the REST app.

The method names and arguments are the SDK client's (`AsyncHindsight`), which the stdio
bridge uses instead, so one set of tools serves both.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from hindsight import limits
from hindsight.core import Hindsight
from hindsight.errors import InvalidInput
from hindsight.services import answers, roles
from hindsight.services.auth import Principal
from hindsight.services.curation import forget_policy
from hindsight.services.names import check_session_id
from hindsight.services.observing import observation_from
from hindsight.services.recall import recall_request
from hindsight.wire.errors import describe, summary
from hindsight.wire.extraction import ExtractIn, ExtractOut
from hindsight.wire.feedback import FeedbackIn, FeedbackOut
from hindsight.wire.memories import (
    EraseReceipt,
    ForgetIn,
    ForgetOut,
    HistoryEntry,
    MemoryIn,
    MemoryOut,
    MemoryPage,
    MemoryPatch,
    ObserveResult,
    Rejected,
    ReviewIn,
    Whoami,
)
from hindsight.wire.policy import Policy
from hindsight.wire.recall import RecallIn, RecallOut
from hindsight.wire.sessions import ContextOut, SessionEnded, StepIn, StepOut

M = TypeVar("M", bound=BaseModel)

_LIST_LIMIT = TypeAdapter(Annotated[int, Field(ge=1, le=limits.LIST_LIMIT_MAX)])
_CURSOR = TypeAdapter(Annotated[str | None, Field(max_length=64)])
_RECENT = TypeAdapter(Annotated[int, Field(ge=1, le=limits.STEPS_RECENT_MAX)])
_MAX_CHARS = TypeAdapter(Annotated[int, Field(ge=0, le=limits.CONTEXT_MAX_CHARS)])
_MAX_TOKENS = TypeAdapter(Annotated[int, Field(ge=0, le=limits.CONTEXT_MAX_CHARS // 4)])


def _refused(exc: ValidationError, prefix: tuple[str, ...] = ()) -> InvalidInput:
    described = [describe({**e, "loc": (*prefix, *e["loc"])}) for e in exc.errors()]
    return InvalidInput(summary(described))


def _parsed(model: type[M], fields: Mapping[str, Any]) -> M:
    try:
        return model.model_validate(dict(fields))
    except ValidationError as exc:
        raise _refused(exc) from None


def _checked(name: str, adapter: TypeAdapter[Any], value: Any) -> Any:
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise _refused(exc, (name,)) from None


def _reason(reason: str | None) -> str | None:
    return _parsed(ReviewIn, {"reason": reason}).reason if reason else None


def _memory_id(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise InvalidInput(f"memory_id: {str(value)[:80]!r} is not a memory id") from None


class ServiceClient:
    """One caller's view of the services: every call checks the namespace against the
    caller's key and role exactly as the REST route does."""

    def __init__(self, core: Hindsight, principal: Principal) -> None:
        self._core = core
        self._principal = principal

    def _enter(self, namespace: str, access: roles.Access) -> str:
        return self._principal.enter(namespace, access)

    @property
    def _who(self) -> dict[str, Any]:
        return {"actor": self._principal.name, "role": self._principal.role}

    # --- long-term memory ---

    async def observe(self, namespace: str, key: str, value: str, **fields: Any) -> ObserveResult:
        ns = self._enter(namespace, roles.WRITING)
        body = _parsed(MemoryIn, {"key": key, "value": value, **fields})
        (outcome,) = await self._core.observer.observe(
            ns, [observation_from(body)], **self._who, single=True, rate=True
        )
        return answers.observe_result(outcome)

    async def recall(self, namespace: str, query: str | None = None, **options: Any) -> RecallOut:
        ns = self._enter(namespace, roles.READING)
        body = _parsed(RecallIn, {"query": query, **options})
        request = recall_request(body, default_hops=self._core.settings.recall_hops)
        result = await self._core.recall.recall(ns, request, actor=self._principal.name)
        return answers.recall_out(result, body.query or "")

    async def update(self, namespace: str, memory_id: str, **changes: Any) -> MemoryOut:
        ns = self._enter(namespace, roles.WRITING)
        body = _parsed(MemoryPatch, changes)
        memory = _memory_id(memory_id)
        row = await self._core.curation.update(ns, memory, body.changes(), **self._who)
        return MemoryOut.model_validate(row)

    async def delete(self, namespace: str, memory_id: str) -> None:
        ns = self._enter(namespace, roles.WRITING)
        await self._core.curation.delete(ns, _memory_id(memory_id), **self._who)

    async def history(self, namespace: str, memory_id: str) -> list[HistoryEntry]:
        ns = self._enter(namespace, roles.READING)
        memory = _memory_id(memory_id)
        rows = await self._core.memory_reads.history(ns, memory)
        return answers.history_out(memory, rows).history

    async def extract(
        self,
        namespace: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        dry_run: bool = False,
        min_importance: float | None = None,
        source: str | None = None,
    ) -> ExtractOut:
        ns = self._enter(namespace, roles.WRITING)
        fields: dict[str, Any] = {"messages": [dict(m) for m in messages], "dry_run": dry_run}
        if min_importance is not None:
            fields["min_importance"] = min_importance
        if source is not None:
            fields["source"] = source
        body = _parsed(ExtractIn, fields)
        extraction = await self._core.extraction.extract(
            ns,
            [m.model_dump() for m in body.messages],
            dry_run=body.dry_run,
            min_importance=body.min_importance,
            source=body.source,
            actor=self._principal.name,
        )
        return answers.extract_out(extraction, body.dry_run)

    async def forget(self, namespace: str, **policy: Any) -> ForgetOut:
        ns = self._enter(namespace, roles.WRITING)
        body = _parsed(ForgetIn, policy)
        rows = await self._core.curation.forget(ns, forget_policy(body), **self._who)
        return answers.forget_out(body, rows)

    async def feedback(
        self,
        namespace: str,
        recall_id: str,
        used: list[str] | None = None,
        unused: list[str] | None = None,
    ) -> FeedbackOut:
        # feedback moves ranking: a write, like observe
        ns = self._enter(namespace, roles.WRITING)
        body = _parsed(FeedbackIn, {"used": list(used or []), "unused": list(unused or [])})
        try:
            recall = uuid.UUID(str(recall_id))
        except ValueError:
            raise InvalidInput(f"recall_id: {str(recall_id)[:80]!r} is not a recall id") from None
        verdicts = await self._core.feedback.record(
            ns, recall, body.used, body.unused, actor=self._principal.name
        )
        return FeedbackOut.model_validate(verdicts)

    # --- review and the namespace as a whole ---

    async def whoami(self) -> Whoami:
        return answers.whoami(self._principal)

    async def quarantined(
        self, namespace: str, limit: int = 100, cursor: str | None = None
    ) -> MemoryPage:
        ns = self._enter(namespace, roles.READING)
        rows, next_cursor = await self._core.memory_reads.list_page(
            ns,
            limit=_checked("limit", _LIST_LIMIT, limit),
            cursor=_checked("cursor", _CURSOR, cursor),
            status="quarantined",
        )
        return MemoryPage(
            memories=[MemoryOut.model_validate(r) for r in rows], next_cursor=next_cursor
        )

    async def approve(self, namespace: str, memory_id: str, reason: str | None = None) -> MemoryOut:
        ns = self._enter(namespace, roles.WRITING)
        note = _reason(reason)
        row = await self._core.curation.approve(ns, _memory_id(memory_id), **self._who, note=note)
        return MemoryOut.model_validate(row)

    async def reject(self, namespace: str, memory_id: str, reason: str | None = None) -> Rejected:
        ns = self._enter(namespace, roles.WRITING)
        note = _reason(reason)
        memory = _memory_id(memory_id)
        await self._core.curation.reject(ns, memory, **self._who, note=note)
        return answers.rejected(memory, note)

    async def policy(self, namespace: str) -> dict[str, Any]:
        ns = self._enter(namespace, roles.READING)
        return (await self._core.policies.get(ns)).model_dump(mode="json")

    async def set_policy(self, namespace: str, document: Mapping[str, Any]) -> dict[str, Any]:
        ns = self._enter(namespace, roles.CURATING)
        body = _parsed(Policy, document)
        policy = await self._core.policies.put(ns, body, **self._who)
        return policy.model_dump(mode="json")

    async def export(self, namespace: str, *, sessions: bool = False) -> list[dict[str, Any]]:
        ns = self._enter(namespace, roles.WHOLE_NAMESPACE)
        return [json.loads(line) async for line in self._core.exports.lines(ns, sessions=sessions)]

    async def erase_namespace(self, namespace: str) -> EraseReceipt:
        ns = self._enter(namespace, roles.WHOLE_NAMESPACE)
        receipt = await self._core.erasure.erase_namespace(ns, actor=self._principal.name)
        return EraseReceipt.model_validate(receipt)

    # --- working memory ---

    async def append_step(
        self, namespace: str, session_id: str, content: str, **fields: Any
    ) -> StepOut:
        ns = self._enter(namespace, roles.WRITING)
        sid = check_session_id(session_id)
        body = _parsed(StepIn, {"content": content, **fields})
        appended = await self._core.sessions.append_step(
            ns,
            sid,
            content=body.content,
            role=body.role,
            summary=body.summary,
            metadata=body.metadata,
            ttl_seconds=body.ttl_seconds,
            idempotency_key=body.idempotency_key,
            occurred_at=body.occurred_at,
        )
        return answers.step_out(sid, appended.step)

    async def context(
        self,
        namespace: str,
        session_id: str,
        recent: int = 10,
        max_chars: int = 8000,
        *,
        max_tokens: int | None = None,
    ) -> ContextOut:
        ns = self._enter(namespace, roles.READING)
        sid = check_session_id(session_id)
        ctx = await self._core.sessions.context(
            ns,
            sid,
            recent=_checked("recent", _RECENT, recent),
            max_chars=_checked("max_chars", _MAX_CHARS, max_chars),
            max_tokens=None
            if max_tokens is None
            else _checked("max_tokens", _MAX_TOKENS, max_tokens),
        )
        return answers.context_out(sid, ctx)

    async def end_session(self, namespace: str, session_id: str) -> SessionEnded:
        ns = self._enter(namespace, roles.WRITING)
        row, job = await self._core.sessions.end(ns, check_session_id(session_id))
        return answers.session_ended(row, job)
