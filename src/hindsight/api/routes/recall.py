"""Recall: ranked, explained retrieval; and the log of past recalls."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response

from hindsight.api.deps import CoreDep, NamespaceDep, PrincipalDep
from hindsight.api.responses import json_response
from hindsight.api.schemas import Components, RecallHit, RecallIn, RecallLogOut, RecallOut
from hindsight.api.time_schemas import TimeAnchorOut, TimeWindowOut
from hindsight.errors import InvalidInput, NotFound
from hindsight.services.recall import RecallRequest
from hindsight.stores.filters import MemoryFilter

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["recall"])


@router.post("/recall", response_model=RecallOut)
async def recall(
    body: RecallIn, namespace: NamespaceDep, principal: PrincipalDep, core: CoreDep
) -> Response:
    """The `k` best memories for `query`, best first, each with its score and the
    components of it: score = relevance × confidence × (1 + α·ln(1 + access_count)), times
    the lifecycle's factors and, when the query names a time ("last May"), the time factor."""
    for low, high in (
        ("created_after", "created_before"),
        ("observed_after", "observed_before"),
        ("occurred_after", "occurred_before"),
    ):
        a, b = getattr(body, low), getattr(body, high)
        if a is not None and b is not None and a >= b:
            raise InvalidInput(f"{low}: must be earlier than {high}")
    request = RecallRequest(
        query=body.query,
        k=body.k,
        filter=MemoryFilter(
            memory_types=tuple(body.memory_types or ()),
            tags_all=tuple(body.tags or ()),
            tags_any=tuple(body.tags_any or ()),
            min_confidence=body.min_confidence,
            created_after=body.created_after,
            created_before=body.created_before,
            observed_after=body.observed_after,
            observed_before=body.observed_before,
            occurred_after=body.occurred_after,
            occurred_before=body.occurred_before,
        ),
        fusion=body.fusion,
        keyword_weight=body.keyword_weight,
        min_relevance=body.min_relevance,
        hops=body.hops or core.settings.recall_hops,
        reference_time=body.reference_time,
        resolve_time=body.resolve_time,
    )
    result = await core.recall.recall(namespace, request, actor=principal.name)
    out = RecallOut(
        recall_id=result.recall_id,
        results=[
            RecallHit.model_validate(
                {**r.row, "score": r.score, "components": Components(**r.components)}
            )
            for r in result.results
        ],
        vector_skipped=result.vector_skipped,
        rerank_skipped=result.rerank_skipped,
    )
    window = result.time_window
    if window is not None:
        out.time_window = TimeWindowOut(
            start=window.start,
            end=window.end,
            expression=window.expression,
            reference_time=window.reference,
            searched_query=result.searched_query or body.query,
            event=window.event,
            anchor=None if window.anchor is None else TimeAnchorOut(**window.anchor),
            vague=window.vague,
        )
    return json_response(out)


@router.get("/recalls/{recall_id}", response_model=RecallLogOut)
async def recall_log(recall_id: uuid.UUID, namespace: NamespaceDep, core: CoreDep) -> RecallLogOut:
    """What a past recall was asked and returned, with every score: why the agent knew it."""
    row = await core.recall.explain(namespace, recall_id)
    if row is None:
        raise NotFound(f"no recall {recall_id} in namespace {namespace!r}")
    return RecallLogOut.model_validate({**row, "recall_id": row["id"]})
