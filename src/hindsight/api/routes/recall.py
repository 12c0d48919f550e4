"""Recall: ranked, explained retrieval; and the log of past recalls."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response

from hindsight.api.deps import CoreDep, NamespaceDep, PrincipalDep
from hindsight.api.responses import json_response
from hindsight.errors import NotFound
from hindsight.services import answers
from hindsight.services.recall import recall_request
from hindsight.wire.recall import RecallIn, RecallLogOut, RecallOut

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["recall"])


@router.post("/recall", response_model=RecallOut)
async def recall(
    body: RecallIn, namespace: NamespaceDep, principal: PrincipalDep, core: CoreDep
) -> Response:
    """The `k` best memories for `query` (and/or the conversation's recent turns,
    `context`), best first, each with its score and the components of it: score =
    relevance × confidence × (1 + α·ln(1 + access_count)), times the lifecycle's factors
    and, when the query names a time ("last May"), the time factor."""
    request = recall_request(body, default_hops=core.settings.recall_hops)
    result = await core.recall.recall(namespace, request, actor=principal.name)
    return json_response(answers.recall_out(result, body.query or ""))


@router.get("/recalls/{recall_id}", response_model=RecallLogOut)
async def recall_log(recall_id: uuid.UUID, namespace: NamespaceDep, core: CoreDep) -> RecallLogOut:
    """What a past recall was asked and returned, with every score: why the agent knew it."""
    row = await core.recall.explain(namespace, recall_id)
    if row is None:
        raise NotFound(f"no recall {recall_id} in namespace {namespace!r}")
    return RecallLogOut.model_validate({**row, "recall_id": row["id"]})
