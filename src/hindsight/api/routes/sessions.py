"""Working memory: the steps of a session."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response, status

from hindsight import limits
from hindsight.api.deps import CoreDep, NamespaceDep, SessionIdDep, WritableNamespaceDep
from hindsight.api.responses import json_response
from hindsight.errors import InvalidInput
from hindsight.services import answers
from hindsight.wire.fields import clean_text
from hindsight.wire.sessions import (
    ContextOut,
    JobOut,
    SessionDeleted,
    SessionEnded,
    SessionOut,
    StepIn,
    StepOut,
    StepPatch,
    StepsOut,
)

router = APIRouter(prefix="/v1/namespaces/{namespace}/sessions/{session_id}", tags=["sessions"])


@router.post("/steps", response_model=StepOut, status_code=201)
async def append_step(
    body: StepIn,
    namespace: WritableNamespaceDep,
    session_id: SessionIdDep,
    core: CoreDep,
    idempotency_key: Annotated[
        str | None, Header(max_length=limits.IDEMPOTENCY_KEY_MAX_CHARS)
    ] = None,
) -> Response:
    """Append a step; the server assigns the next `step_index`. With an idempotency key
    (body field or `Idempotency-Key` header), a retry returns the first step with 200."""
    key = body.idempotency_key or idempotency_key
    if body.idempotency_key and idempotency_key and body.idempotency_key != idempotency_key:
        raise InvalidInput("idempotency_key: the body and the Idempotency-Key header disagree")
    if key is not None:
        try:
            clean_text(key)
        except ValueError as exc:
            raise InvalidInput(f"idempotency_key: {exc}") from None
    appended = await core.sessions.append_step(
        namespace,
        session_id,
        content=body.content,
        role=body.role,
        summary=body.summary,
        metadata=body.metadata,
        ttl_seconds=body.ttl_seconds,
        idempotency_key=key,
        occurred_at=body.occurred_at,
    )
    return json_response(
        answers.step_out(session_id, appended.step),
        status.HTTP_200_OK if appended.replayed else status.HTTP_201_CREATED,
    )


@router.get("/steps", response_model=StepsOut)
async def recent_steps(
    namespace: NamespaceDep,
    session_id: SessionIdDep,
    core: CoreDep,
    recent: Annotated[int, Query(ge=1, le=limits.STEPS_RECENT_MAX)] = 20,
    before: Annotated[int | None, Query(ge=0, description="Only steps below this index.")] = None,
) -> Response:
    """The newest `recent` live steps, in step order (empty for an unknown session). Page
    back through a long session with `before` = the first index of the previous page."""
    rows = await core.sessions.recent(namespace, session_id, recent, before=before)
    return json_response(
        StepsOut(session_id=session_id, steps=[answers.step_out(session_id, r) for r in rows])
    )


@router.get("/context", response_model=ContextOut)
async def context(
    namespace: NamespaceDep,
    session_id: SessionIdDep,
    core: CoreDep,
    recent: Annotated[int, Query(ge=1, le=limits.STEPS_RECENT_MAX)] = 10,
    max_chars: Annotated[int | None, Query(ge=0, le=limits.CONTEXT_MAX_CHARS)] = None,
    max_tokens: Annotated[int | None, Query(ge=0, le=limits.CONTEXT_MAX_CHARS // 4)] = None,
) -> Response:
    """What to put in a prompt: the newest `recent` steps whole, and before them older
    steps as summaries (their content while unsummarised), within `max_chars` (default
    8000) or `max_tokens` (estimated: 4 characters a token, 1 for a Chinese, Japanese or
    Korean character)."""
    if max_chars is not None and max_tokens is not None:
        raise InvalidInput("max_chars, max_tokens: give one budget, not both")
    ctx = await core.sessions.context(
        namespace,
        session_id,
        recent=recent,
        max_chars=8_000 if max_chars is None else max_chars,
        max_tokens=max_tokens,
    )
    return json_response(answers.context_out(session_id, ctx))


@router.delete("/steps:last", response_model=StepOut)
async def pop_step(
    namespace: WritableNamespaceDep, session_id: SessionIdDep, core: CoreDep
) -> StepOut:
    """Remove the newest live step and answer it (404 when there is none, 409 once the
    session has ended); the next append takes its index again. Not idempotent: each call
    removes one more step."""
    return answers.step_out(session_id, await core.sessions.pop_last(namespace, session_id))


@router.patch("/steps/{step_index}", response_model=StepOut)
async def update_step(
    step_index: int,
    body: StepPatch,
    namespace: WritableNamespaceDep,
    session_id: SessionIdDep,
    core: CoreDep,
) -> StepOut:
    """Set (or clear, with null) the summary the context read uses for this step."""
    row = await core.sessions.set_summary(namespace, session_id, step_index, body.summary)
    return answers.step_out(session_id, row)


def _session(row: dict[str, Any]) -> SessionOut:
    return SessionOut.model_validate({**row, "step_count": row["next_step"]})


@router.get("", response_model=SessionOut)
async def get_session(
    namespace: NamespaceDep, session_id: SessionIdDep, core: CoreDep
) -> SessionOut:
    return _session(await core.sessions.session(namespace, session_id))


@router.post(":end", response_model=SessionEnded)
async def end_session(
    namespace: WritableNamespaceDep, session_id: SessionIdDep, core: CoreDep
) -> SessionEnded:
    """End the session: it takes no more steps, keeps them until they expire, and is
    consolidated into long-term memory by a background job (`consolidation`; poll
    `GET /jobs/{job_id}`)."""
    row, job = await core.sessions.end(namespace, session_id)
    return answers.session_ended(row, job)


@router.post(":consolidate", response_model=JobOut, status_code=202)
async def consolidate(
    namespace: WritableNamespaceDep, session_id: SessionIdDep, core: CoreDep
) -> JobOut:
    """Queue a consolidation of the steps not consolidated yet (running it again after it
    succeeded finds nothing new and changes nothing)."""
    return answers.job_out(await core.sessions.consolidate(namespace, session_id))


@router.delete("", response_model=SessionDeleted)
async def delete_session(
    namespace: WritableNamespaceDep, session_id: SessionIdDep, core: CoreDep
) -> SessionDeleted:
    """Delete the session and all its steps, from Postgres and Redis."""
    steps = await core.sessions.delete(namespace, session_id)
    return SessionDeleted(session_id=session_id, deleted_steps=steps)
