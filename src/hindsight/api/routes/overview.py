"""What an operator reads (the debug panel at /ui uses these): namespaces at a glance,
the recall log, the sessions of a namespace and their consolidation jobs."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from hindsight import limits
from hindsight.api.deps import CoreDep, NamespaceDep, PrincipalDep, SessionIdDep
from hindsight.services import answers
from hindsight.services.overview import OverviewService
from hindsight.wire.overview import (
    NamespacesOut,
    NamespaceStats,
    NamespaceSummary,
    RecallHour,
    RecallLogPage,
    SessionJobsOut,
    SessionsOut,
    summary,
)
from hindsight.wire.recall import RecallLogOut
from hindsight.wire.sessions import SessionOut

router = APIRouter(prefix="/v1/namespaces", tags=["overview"])


def get_overview(core: CoreDep) -> OverviewService:
    return OverviewService(core.pool, core.recorder, core.settings.namespace_capacity)


OverviewDep = Annotated[OverviewService, Depends(get_overview)]


@router.get("", response_model=NamespacesOut)
async def list_namespaces(principal: PrincipalDep, overview: OverviewDep) -> NamespacesOut:
    """The namespaces this key may use that hold anything, with memories per status, open
    sessions and recent recalls."""
    only = None if principal.is_admin or principal.namespaces is None else principal.namespaces
    rows = await overview.namespaces(sorted(only) if only is not None else None)
    return NamespacesOut(namespaces=[NamespaceSummary.model_validate(summary(r)) for r in rows])


@router.get("/{namespace}/stats", response_model=NamespaceStats)
async def namespace_stats(
    namespace: NamespaceDep, overview: OverviewDep, core: CoreDep
) -> NamespaceStats:
    """One namespace's counts, its recalls per hour over the last day, and its capacity
    (with a warning when over it) and last lifecycle pass."""
    rows = await overview.namespaces([namespace])
    base = (
        summary(rows[0])
        if rows
        else {
            "namespace": namespace,
            "memories": {},
            "open_sessions": 0,
            "recalls_last_hour": 0,
            "recalls_last_day": 0,
        }
    )
    hours = [RecallHour.model_validate(h) for h in await overview.recall_hours(namespace)]
    life = await core.lifecycle.stats(namespace)
    lifecycle = {k: life[k] for k in LIFECYCLE_FIELDS}
    return NamespaceStats.model_validate({**base, "recalls_by_hour": hours, **lifecycle})


LIFECYCLE_FIELDS = (
    "capacity",
    "over_capacity",
    "warnings",
    "last_lifecycle_pass",
    "last_capacity_archived",
)


@router.get("/{namespace}/recalls", response_model=RecallLogPage)
async def recent_recalls(
    namespace: NamespaceDep,
    overview: OverviewDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[uuid.UUID | None, Query(description="next_cursor of a page.")] = None,
    key: Annotated[
        str | None,
        Query(max_length=limits.KEY_MAX_CHARS, description="Recalls that returned this key."),
    ] = None,
    actor: Annotated[
        str | None, Query(max_length=200, description="Recalls made with this API key name.")
    ] = None,
    query: Annotated[
        str | None, Query(max_length=200, description="Recalls whose query contains this.")
    ] = None,
) -> RecallLogPage:
    """Recent recalls, newest first, with what each returned and why: "why did the agent
    say that?"."""
    rows = await overview.recalls(
        namespace, limit=limit, before=cursor, memory_key=key, actor=actor, query=query
    )
    return RecallLogPage(
        recalls=[RecallLogOut.model_validate({**r, "recall_id": r["id"]}) for r in rows],
        next_cursor=rows[-1]["id"] if len(rows) == limit else None,
    )


@router.get("/{namespace}/sessions", response_model=SessionsOut)
async def list_sessions(
    namespace: NamespaceDep,
    overview: OverviewDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> SessionsOut:
    """Sessions, most recently written first, with their live steps and expiry."""
    rows = await overview.sessions(namespace, limit=limit)
    return SessionsOut(
        sessions=[SessionOut.model_validate({**r, "step_count": r["next_step"]}) for r in rows]
    )


@router.get("/{namespace}/sessions/{session_id}/jobs", response_model=SessionJobsOut)
async def session_jobs(
    namespace: NamespaceDep, session_id: SessionIdDep, overview: OverviewDep
) -> SessionJobsOut:
    """The session's consolidation jobs, newest first: what each observed, dropped and why."""
    jobs = await overview.session_jobs(namespace, session_id)
    return SessionJobsOut(session_id=session_id, jobs=[answers.job_out(j) for j in jobs])
