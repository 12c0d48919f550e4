"""Bodies of the lifecycle calls: recall feedback and namespace stats (the policy document
is `hindsight.wire.policy.Policy`)."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field

from hindsight import limits


class FeedbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    used: list[uuid.UUID] = Field(
        default_factory=list, max_length=limits.K_MAX, description="Results the agent used."
    )
    unused: list[uuid.UUID] = Field(
        default_factory=list, max_length=limits.K_MAX, description="Results it did not use."
    )


class FeedbackMemory(BaseModel):
    id: uuid.UUID
    used: bool
    used_count: int = Field(
        description="Recalls in which the agent said it used this memory (not read by ranking)."
    )
    unused_count: int = Field(description="Recalls in which it said it did not.")


class FeedbackOut(BaseModel):
    recall_id: uuid.UUID
    recorded: int = Field(description="Verdicts stored now (a repeated one counts once).")
    memories: list[FeedbackMemory]
