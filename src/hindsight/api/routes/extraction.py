"""Extraction: the memories worth keeping from a conversation, observed unless a dry run."""

from __future__ import annotations

from fastapi import APIRouter

from hindsight.api.deps import CoreDep, PrincipalDep, WritableNamespaceDep
from hindsight.api.routes.memories import observe_result
from hindsight.services.observing import Outcome
from hindsight.wire.extraction import Dropped, Extracted, ExtractIn, ExtractOut

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
    kept = extraction.distilled.kept
    outcomes: list[Outcome | None] = (
        list(extraction.outcomes) if extraction.outcomes is not None else [None] * len(kept)
    )
    return ExtractOut(
        model=extraction.model,
        dry_run=body.dry_run,
        memories=[
            Extracted(
                key=k.observation.key,
                value=k.observation.value,
                memory_type=k.observation.memory_type,
                importance=k.observation.importance,
                tags=list(k.observation.tags),
                occurred_at=k.observation.occurred_at,
                action=k.action,
                result=observe_result(o) if o is not None else None,
            )
            for k, o in zip(kept, outcomes, strict=True)
        ],
        dropped=[Dropped(**d) for d in extraction.distilled.dropped],
        existing_memories_shown=extraction.distilled.existing_shown,
    )
