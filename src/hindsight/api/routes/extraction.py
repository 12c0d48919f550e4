"""Extraction: the memories worth keeping from a conversation, observed unless a dry run."""

from __future__ import annotations

from fastapi import APIRouter

from hindsight.api.deps import CoreDep, PrincipalDep, WritableNamespaceDep
from hindsight.services import answers
from hindsight.wire.extraction import ExtractIn, ExtractOut

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["extraction"])


@router.post("/memories:extract", response_model=ExtractOut)
async def extract(
    body: ExtractIn, namespace: WritableNamespaceDep, principal: PrincipalDep, core: CoreDep
) -> ExtractOut:
    """Ask the configured LLM what in `messages` is worth remembering. Existing related
    memories are shown to it, so repeats reinforce and changes supersede the same keys.
    Greetings, filler and memories under `min_importance` are dropped (and listed).
    503 when no LLM is configured."""
    extraction = await core.extraction.extract(
        namespace,
        [m.model_dump() for m in body.messages],
        dry_run=body.dry_run,
        min_importance=body.min_importance,
        source=body.source,
        actor=principal.name,
    )
    return answers.extract_out(extraction, body.dry_run)
