"""A namespace as a whole: erase it (with a receipt) and export it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from hindsight.api.deps import AdminNamespaceDep, CoreDep, PrincipalDep
from hindsight.wire.memories import EraseReceipt

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["namespaces"])


@router.delete("", response_model=EraseReceipt)
async def erase_namespace(
    namespace: AdminNamespaceDep, principal: PrincipalDep, core: CoreDep
) -> dict[str, Any]:
    """Erase every row of the namespace from every table (memories, their history,
    recall log, jobs, working memory, keyword statistics, embedding-cache entries no other
    namespace uses) and every Redis key; the receipt counts what went, per store. Admin only.
    Stop the namespace's writers first: a write after the erase starts it afresh."""
    return await core.erasure.erase_namespace(namespace, actor=principal.name)


@router.get(
    ":export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
async def export_namespace(
    namespace: AdminNamespaceDep,
    core: CoreDep,
    sessions: Annotated[bool, Query(description="Also export working-memory sessions.")] = False,
) -> StreamingResponse:
    """The namespace as JSON lines (format `hindsight-export`, version 2): a header, every
    memory with its history, optionally the sessions with their steps, and an `end` line
    with the counts. `hindsight import FILE --namespace NEW` restores it. Admin only."""
    return StreamingResponse(
        core.exports.lines(namespace, sessions=sessions),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{namespace}.jsonl"'},
    )
