"""Consolidation jobs, for clients to poll."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter

from hindsight.api.deps import CoreDep, NamespaceDep
from hindsight.wire.sessions import JobOut

router = APIRouter(prefix="/v1/namespaces/{namespace}", tags=["jobs"])


def job_out(row: dict[str, Any]) -> JobOut:
    return JobOut.model_validate({**row, "job_id": row["id"]})


@router.get("/jobs/{job_id}", response_model=JobOut)
async def get_job(job_id: uuid.UUID, namespace: NamespaceDep, core: CoreDep) -> JobOut:
    """A consolidation job: pending, running, succeeded (with what it did) or failed (why)."""
    return job_out(await core.consolidation.get(namespace, job_id))
