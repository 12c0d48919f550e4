"""Bodies of working memory (sessions and their steps) and of the consolidation jobs that
ending a session starts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hindsight import limits
from hindsight.wire.fields import (
    IdempotencyKey,
    Metadata,
    Role,
    StepContent,
    StepSummary,
    StoredJson,
    Strict,
)
from hindsight.wire.times import OccurredAt

# --- working memory ---------------------------------------------------------------------


class StepIn(Strict):
    content: StepContent
    role: Role = "user"
    summary: StepSummary | None = None
    metadata: Metadata = Field(default_factory=dict)
    ttl_seconds: int | None = Field(default=None, ge=1, le=limits.TTL_MAX_SECONDS)
    idempotency_key: IdempotencyKey | None = Field(
        default=None, description="Or the Idempotency-Key header: a retry returns the first step."
    )
    occurred_at: OccurredAt = None


class StepOut(BaseModel):
    session_id: str
    step_index: int
    role: str
    content: str
    summary: str | None
    metadata: StoredJson
    created_at: datetime
    expires_at: datetime
    occurred_at: datetime | None = None
    redactions: dict[str, int] = Field(
        default_factory=dict,
        description="Secrets or personal data replaced with [REDACTED:kind], per kind.",
    )


class StepsOut(BaseModel):
    session_id: str
    steps: list[StepOut]


class StepPatch(Strict):
    summary: StepSummary | None


class EarlierStep(BaseModel):
    step_index: int
    role: str
    text: str
    summarized: bool
    created_at: datetime


class ContextOut(BaseModel):
    session_id: str
    recent: list[StepOut]
    earlier: list[EarlierStep]
    omitted_steps: int


class SessionOut(BaseModel):
    session_id: str
    status: Literal["active", "ended"]
    step_count: int
    live_steps: int | None = None
    metadata: StoredJson = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    ended_at: datetime | None
    expires_at: datetime


class SessionDeleted(BaseModel):
    session_id: str
    deleted_steps: int


# --- consolidation jobs ----------------------------------------------------------------


class JobOut(BaseModel):
    job_id: uuid.UUID
    session_id: str
    trigger: str
    status: Literal["pending", "running", "succeeded", "failed"]
    method: str | None
    from_step: int | None
    through_step: int | None
    attempts: int
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class SessionEnded(SessionOut):
    consolidation: JobOut
