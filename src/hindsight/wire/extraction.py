"""Bodies of extraction: a conversation in, the memories a model found in it out."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, Field

from hindsight import limits
from hindsight.wire.fields import Role, Source, StepContent, Strict
from hindsight.wire.memories import ObserveResult


class Message(Strict):
    role: Role
    content: StepContent
    # kept in the client's timezone: "yesterday" means its day, not UTC's
    occurred_at: AwareDatetime | None = Field(
        default=None, description="When it was said (ISO 8601 with a timezone)."
    )


class ExtractIn(Strict):
    messages: list[Message] = Field(min_length=1, max_length=limits.EXTRACT_MESSAGES_MAX)
    dry_run: bool = Field(default=False, description="Only say what would be kept.")
    min_importance: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Drop memories less important than this "
        "(default HINDSIGHT_EXTRACTION_MIN_IMPORTANCE).",
    )
    source: Source | None = Field(default=None, description="Recorded as each memory's source.")


class Extracted(BaseModel):
    key: str
    value: str
    memory_type: str
    importance: float
    tags: list[str]
    occurred_at: datetime | None = Field(default=None, description="When, as the model read it.")
    action: str = Field(description="What the model proposed: new, reinforce or update.")
    result: ObserveResult | None = Field(
        default=None, description="What observing it did (absent on a dry run)."
    )


class Dropped(BaseModel):
    key: str
    value: str
    reason: str


class ExtractOut(BaseModel):
    model: str
    dry_run: bool
    memories: list[Extracted]
    dropped: list[Dropped]
    existing_memories_shown: int
