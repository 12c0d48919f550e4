"""Consolidation jobs, for clients to poll."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from hindsight.api.deps import CoreDep, NamespaceDep
from hindsight.services import answers
from hindsight.wire.sessions import JobOut

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["jobs"])


@router.get("/jobs/{job_id}", response_model=JobOut)
async def get_job(job_id: uuid.UUID, namespace: NamespaceDep, core: CoreDep) -> JobOut:
    """A consolidation job: pending, running, succeeded (with what it did) or failed (why)."""
    return answers.job_out(await core.consolidation.get(namespace, job_id))
