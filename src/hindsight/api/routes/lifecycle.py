"""The namespace's lifecycle: its policy, its stats, and feedback on recalls."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter

from hindsight.api.deps import (
    CoreDep,
    CuratorNamespaceDep,
    NamespaceDep,
    PrincipalDep,
    WritableNamespaceDep,
)
from hindsight.wire.feedback import FeedbackIn, FeedbackOut
from hindsight.wire.policy import Policy

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["lifecycle"])


@router.get("/policy", response_model=Policy)
async def get_policy(namespace: NamespaceDep, core: CoreDep) -> Policy:
    """The namespace's policy in force: its own fields, the server's defaults for the rest."""
    return await core.policies.get(namespace)


@router.put("/policy", response_model=Policy)
async def put_policy(
    body: Policy, namespace: CuratorNamespaceDep, principal: PrincipalDep, core: CoreDep
) -> Policy:
    """Replace the namespace's own policy fields (those not sent take the defaults);
    answers the policy now in force. An invalid policy is a 422 naming the field."""
    return await core.policies.put(namespace, body, actor=principal.name, role=principal.role)


@router.post("/recalls/{recall_id}/feedback", response_model=FeedbackOut)
async def feedback(
    recall_id: uuid.UUID,
    body: FeedbackIn,
    # feedback changes what is stored about memories: a write, like observe
    namespace: WritableNamespaceDep,
    principal: PrincipalDep,
    core: CoreDep,
) -> dict[str, Any]:
    """Say which of a recall's results the agent used. Ids must come from that recall's
    results; each (recall, memory) verdict counts once, on the memory (used_count,
    unused_count) and with the recall (recall_feedback), for curators and audits. Ranking
    does not read these counts: its access term counts how often a memory was recalled."""
    return await core.feedback.record(
        namespace, recall_id, body.used, body.unused, actor=principal.name
    )
