"""Long-term memories: observe (batch or one), list, read, edit, delete, history, and the
review of quarantined ones (approve, reject)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response, status

from hindsight import limits
from hindsight.api.deps import CoreDep, NamespaceDep, PrincipalDep, WritableNamespaceDep
from hindsight.services import answers
from hindsight.services.curation import forget_policy
from hindsight.services.observing import observation_from
from hindsight.wire.fields import MemoryType
from hindsight.wire.memories import (
    BatchIn,
    BatchOut,
    ForgetIn,
    ForgetOut,
    HistoryOut,
    MemoryIn,
    MemoryOut,
    MemoryPage,
    MemoryPatch,
    ObserveResult,
    Rejected,
    ReviewIn,
)
from hindsight.wire.times import UtcTime

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["memories"])

# the outcomes that created a memory: 201
CREATED = ("created", "stored_cold")


@router.post(
    "/memories:batch",
    response_model=BatchOut,
    responses={
        200: {"description": "Every item reinforced or superseded an existing memory."},
        201: {"description": "At least one memory was created."},
    },
)
async def observe_batch(
    body: BatchIn,
    namespace: WritableNamespaceDep,
    principal: PrincipalDep,
    core: CoreDep,
    response: Response,
) -> BatchOut:
    """Store or reinforce up to 1,000 memories in one transaction; one result per item,
    in order."""
    outcomes = await core.observer.observe(
        namespace,
        [observation_from(m) for m in body.memories],
        actor=principal.name,
        role=principal.role,
        dedup=body.dedup,
        rate=True,
    )
    if any(o.outcome in CREATED for o in outcomes):
        response.status_code = status.HTTP_201_CREATED
    return BatchOut(results=[answers.observe_result(o) for o in outcomes])


@router.post("/memories", response_model=ObserveResult, status_code=201)
async def observe_one(
    body: MemoryIn,
    namespace: WritableNamespaceDep,
    principal: PrincipalDep,
    core: CoreDep,
    response: Response,
) -> ObserveResult:
    """Store or reinforce one memory (201 when created, 200 otherwise)."""
    (outcome,) = await core.observer.observe(
        namespace,
        [observation_from(body)],
        actor=principal.name,
        role=principal.role,
        single=True,
        rate=True,
    )
    if outcome.outcome not in CREATED:
        response.status_code = status.HTTP_200_OK
    return answers.observe_result(outcome)


@router.get("/memories", response_model=MemoryPage)
async def list_memories(
    namespace: NamespaceDep,
    core: CoreDep,
    limit: Annotated[int, Query(ge=1, le=limits.LIST_LIMIT_MAX)] = 100,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
    memory_type: Annotated[list[MemoryType] | None, Query()] = None,
    tag: Annotated[list[str] | None, Query(max_length=limits.TAGS_MAX)] = None,
    min_confidence: Annotated[float | None, Query(ge=0, le=1)] = None,
    min_importance: Annotated[float | None, Query(ge=0, le=1)] = None,
    key: Annotated[str | None, Query(max_length=limits.KEY_MAX_CHARS)] = None,
    key_prefix: Annotated[str | None, Query(max_length=limits.KEY_MAX_CHARS)] = None,
    status_: Annotated[
        Literal["active", "cold", "archived", "quarantined", "all"] | None, Query(alias="status")
    ] = None,
    occurred_after: Annotated[UtcTime, Query()] = None,
    occurred_before: Annotated[UtcTime, Query()] = None,
) -> MemoryPage:
    """Memories in creation order. Follow `next_cursor` to visit every one exactly once.
    By default the live ones (active and cold); `status=archived` lists the archive and
    `status=quarantined` the review queue. `occurred_after`/`occurred_before` bound when
    they happened (occurred_at, else when they were recorded)."""
    rows, next_cursor = await core.memory_reads.list_page(
        namespace,
        limit=limit,
        cursor=cursor,
        memory_types=tuple(memory_type or ()),
        tags=tuple(tag or ()),
        min_confidence=min_confidence,
        min_importance=min_importance,
        key=key,
        key_prefix=key_prefix,
        status=status_,
        occurred_after=occurred_after,
        occurred_before=occurred_before,
    )
    return MemoryPage(memories=[MemoryOut.model_validate(r) for r in rows], next_cursor=next_cursor)


@router.get("/memories/{memory_id}", response_model=MemoryOut)
async def get_memory(memory_id: uuid.UUID, namespace: NamespaceDep, core: CoreDep) -> MemoryOut:
    return MemoryOut.model_validate(await core.memory_reads.get(namespace, memory_id))


@router.patch("/memories/{memory_id}", response_model=MemoryOut)
async def update_memory(
    memory_id: uuid.UUID,
    body: MemoryPatch,
    namespace: WritableNamespaceDep,
    principal: PrincipalDep,
    core: CoreDep,
) -> MemoryOut:
    """Edit fields. A new value is a new claim: re-embedded, and its confidence starts
    over unless the edit sets one. The change is recorded in history."""
    changes = body.changes()
    row = await core.curation.update(
        namespace, memory_id, changes, actor=principal.name, role=principal.role
    )
    return MemoryOut.model_validate(row)


@router.delete("/memories/{memory_id}", status_code=204)
async def delete_memory(
    memory_id: uuid.UUID, namespace: WritableNamespaceDep, principal: PrincipalDep, core: CoreDep
) -> Response:
    """Delete a memory; its history (ending with a `deleted` entry) is kept."""
    await core.curation.delete(namespace, memory_id, actor=principal.name, role=principal.role)
    return Response(status_code=204)


@router.post("/memories/{memory_id}:approve", response_model=MemoryOut)
async def approve_memory(
    memory_id: uuid.UUID,
    namespace: WritableNamespaceDep,
    principal: PrincipalDep,
    core: CoreDep,
    body: ReviewIn | None = None,
) -> MemoryOut:
    """A curator approves a quarantined memory: it becomes the active memory of its key,
    and the one it contended with (e.g. a verified memory) is archived. 409 when the memory
    is not quarantined."""
    row = await core.curation.approve(
        namespace,
        memory_id,
        actor=principal.name,
        role=principal.role,
        note=body.reason if body else None,
    )
    return MemoryOut.model_validate(row)


@router.post("/memories/{memory_id}:reject", response_model=Rejected)
async def reject_memory(
    memory_id: uuid.UUID,
    namespace: WritableNamespaceDep,
    principal: PrincipalDep,
    core: CoreDep,
    body: ReviewIn | None = None,
) -> Rejected:
    """A curator rejects a quarantined memory: it is erased like a deleted one, and its
    history ends with a `rejected` tombstone carrying the reason. 409 when the memory is
    not quarantined."""
    note = body.reason if body else None
    await core.curation.reject(
        namespace, memory_id, actor=principal.name, role=principal.role, note=note
    )
    return answers.rejected(memory_id, note)


@router.post("/memories:forget", response_model=ForgetOut)
async def forget(
    body: ForgetIn, namespace: WritableNamespaceDep, principal: PrincipalDep, core: CoreDep
) -> ForgetOut:
    """Run a forgetting policy: archive (default) or delete the active memories matching
    every criterion given, least confident and least used first. Permanent memories are
    never forgotten. `dry_run` lists them and changes nothing."""
    policy = forget_policy(body)
    rows = await core.curation.forget(namespace, policy, actor=principal.name, role=principal.role)
    return answers.forget_out(body, rows)


@router.get("/memories/{memory_id}/history", response_model=HistoryOut)
async def memory_history(
    memory_id: uuid.UUID, namespace: NamespaceDep, core: CoreDep
) -> HistoryOut:
    """Every change, oldest first, with the value and confidence the memory had after it."""
    rows = await core.memory_reads.history(namespace, memory_id)
    return answers.history_out(memory_id, rows)
