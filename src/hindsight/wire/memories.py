"""Request and response bodies of the REST API (also the OpenAPI schema at /docs)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, Field, model_validator

from hindsight import limits
from hindsight.wire.fields import (
    Key,
    MemoryType,
    Metadata,
    SettableStatus,
    Source,
    Status,
    StoredJson,
    Strict,
    Tag,
    Value,
)
from hindsight.wire.times import OccurredAt, UtcTime

MEMORY_TTL_MAX_SECONDS = 100 * 365 * 24 * 3600


def check_expiry(expires_at: datetime | None, ttl_seconds: int | None) -> None:
    if expires_at is not None and ttl_seconds is not None:
        raise ValueError("expires_at: give expires_at or ttl_seconds, not both")
    if expires_at is not None and expires_at <= datetime.now(UTC):
        raise ValueError("expires_at: must be in the future (delete the memory instead)")


def expiry(expires_at: datetime | None, ttl_seconds: int | None) -> datetime | None:
    if ttl_seconds is not None:
        return datetime.now(UTC) + timedelta(seconds=ttl_seconds)
    # in UTC: PostgreSQL refuses offsets past ±15:59, which ISO 8601 lets a client send
    return expires_at.astimezone(UTC) if expires_at is not None else None


# --- long-term memory -------------------------------------------------------------------


class MemoryIn(Strict):
    key: Key = Field(description="What the claim is about, e.g. `user.favorite_color`.")
    value: Value = Field(description="The claim, e.g. `blue`.")
    memory_type: MemoryType = "fact"
    source: Source | None = Field(default=None, description="Who or what reported it.")
    confidence: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Initial confidence when the key is new or its value changes "
        "(default from HINDSIGHT_INITIAL_CONFIDENCE). Ignored on reinforcement.",
    )
    importance: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="How much it would matter to get this wrong later. Not sent: rated by "
        "the LLM when one is configured, else estimated (filler such as greetings and thanks "
        "0.1, anything else 0.5); an estimate under the policy's "
        "lifecycle.write_below_importance is stored cold or dropped.",
    )
    tags: list[Tag] = Field(default_factory=list, max_length=limits.TAGS_MAX)
    metadata: Metadata = Field(default_factory=dict)
    verified: bool = False
    permanent: bool = False
    expires_at: AwareDatetime | None = Field(
        default=None, description="Hard expiry: never returned after it, then deleted."
    )
    ttl_seconds: int | None = Field(
        default=None, ge=1, le=MEMORY_TTL_MAX_SECONDS, description="Or: expires this long from now."
    )
    occurred_at: OccurredAt = None

    @model_validator(mode="after")
    def _one_expiry(self) -> MemoryIn:
        check_expiry(self.expires_at, self.ttl_seconds)
        return self


class BatchIn(Strict):
    memories: list[MemoryIn] = Field(min_length=1, max_length=limits.BATCH_MAX)
    dedup: bool = Field(
        default=True,
        description="false: a new key is always a memory of its own, never merged into a "
        "near-identical one (for key/value stores such as the LangGraph adapter).",
    )


class ObserveResult(BaseModel):
    id: uuid.UUID | None = Field(description="The memory's id (null only when `dropped`).")
    key: str = Field(description="Key of the memory the item landed in.")
    outcome: Literal[
        "created",
        "reinforced",
        "superseded",
        "quarantined",
        "released",
        "echoed",
        "stored_cold",
        "dropped",
    ] = Field(
        description="superseded: replaced the memory's old value, or (with `reason` naming "
        "it) archived a live memory under another key that this one contradicts; "
        "quarantined: stored for review, not recalled (see `reason`; a contradiction the "
        "source may not settle sends both memories); released: a "
        "quarantined claim this observation confirmed independently, now active; echoed: "
        "recall had just returned this memory to the same API key, so storing it back is "
        "not new evidence and changed nothing (see `reason`); stored_cold: created, but "
        "cold, its estimated importance under the policy's write_below_importance; dropped: "
        "not stored, for the same reason (with write_below_importance_action drop)."
    )
    confidence: float
    observation_count: int
    memory_type: MemoryType
    trust: float | None = Field(default=None, description="The trust of the item's source.")
    confidence_capped: bool = Field(
        default=False, description="The initial confidence was lowered to the source's trust."
    )
    reason: str | None = Field(
        default=None,
        description="Why it was quarantined, released, echoed, stored cold or dropped, or "
        "which memory under another key it contradicted and superseded.",
    )
    requested_key: str | None = Field(
        default=None,
        description="Set when the item's own key was new but its memory near-identical to "
        "memory `key`, which it reinforced instead of creating a twin.",
    )
    similarity: float | None = Field(default=None, description="Similarity to that memory.")
    redactions: dict[str, int] = Field(
        default_factory=dict,
        description="Secrets or personal data replaced with [REDACTED:kind], per kind.",
    )
    importance: float | None = Field(
        default=None,
        description="The importance this item gave its claim (a reinforced memory keeps the "
        "higher of its own and this one).",
    )
    importance_by: Literal["client", "builtin", "llm", "builtin_fallback"] | None = Field(
        default=None,
        description="Who rated it: client (sent with the item), builtin (the built-in "
        "estimate: no LLM configured), llm (the configured LLM, HINDSIGHT_WRITE_IMPORTANCE_LLM)"
        ", builtin_fallback (the LLM failed or missed "
        "HINDSIGHT_WRITE_IMPORTANCE_TIMEOUT_SECONDS: the built-in estimate).",
    )


class ReviewIn(Strict):
    reason: str | None = Field(
        default=None, max_length=1000, description="Why: kept in the memory's history."
    )


class Rejected(BaseModel):
    id: uuid.UUID
    decision: Literal["rejected"] = "rejected"
    reason: str = Field(description="As recorded on the memory's `rejected` tombstone.")


class BatchOut(BaseModel):
    results: list[ObserveResult]


class MemoryOut(BaseModel):
    id: uuid.UUID
    key: str
    value: str
    memory_type: MemoryType
    confidence: float
    importance: float
    access_count: int
    observation_count: int
    source: str | None
    verified: bool
    permanent: bool
    status: Status
    tags: list[str]
    metadata: StoredJson
    created_at: datetime
    updated_at: datetime
    last_observed: datetime
    last_accessed: datetime | None
    expires_at: datetime | None = None
    occurred_at: datetime | None = None


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    next_cursor: str | None


class MemoryPatch(Strict):
    key: Key | None = None
    value: Value | None = None
    memory_type: MemoryType | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    source: Source | None = None
    tags: list[Tag] | None = Field(default=None, max_length=limits.TAGS_MAX)
    metadata: Metadata | None = None
    verified: bool | None = None
    permanent: bool | None = None
    status: SettableStatus | None = None
    expires_at: AwareDatetime | None = Field(default=None, description="null: never expires.")
    ttl_seconds: int | None = Field(default=None, ge=1, le=MEMORY_TTL_MAX_SECONDS)
    occurred_at: OccurredAt = Field(default=None, description="null: unknown.")

    @model_validator(mode="after")
    def _something(self) -> MemoryPatch:
        if not self.model_fields_set:
            raise ValueError("nothing to change: send at least one field")
        for name in self.model_fields_set:
            if getattr(self, name) is None and name not in ("source", "expires_at", "occurred_at"):
                raise ValueError(f"{name}: may not be null")
        check_expiry(self.expires_at, self.ttl_seconds)
        return self

    def changes(self) -> dict[str, Any]:
        """The fields sent, with a TTL turned into the expiry it sets."""
        out = {name: getattr(self, name) for name in self.model_fields_set}
        if "ttl_seconds" in out:
            out["expires_at"] = expiry(None, out.pop("ttl_seconds"))
        elif "expires_at" in out:
            out["expires_at"] = expiry(out["expires_at"], None)
        return out


class ForgetIn(Strict):
    max_confidence: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Memories with at most this confidence."
    )
    max_importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Memories with at most this importance."
    )
    not_accessed_days: float | None = Field(
        default=None,
        gt=0,
        le=36_500,
        description="Not recalled for this many days (never recalled: since created).",
    )
    not_observed_days: float | None = Field(
        default=None, gt=0, le=36_500, description="Not observed again for this many days."
    )
    memory_types: list[MemoryType] | None = Field(default=None, max_length=7)
    action: Literal["archive", "delete"] = Field(
        default="archive", description="archive keeps them (restore with PATCH status)."
    )
    dry_run: bool = Field(default=False, description="Only list what would be forgotten.")
    limit: int = Field(default=1000, ge=1, le=limits.FORGET_LIMIT_MAX)
    occurred_after: UtcTime = Field(
        default=None, description="Only those that occurred then or later (else: created)."
    )
    occurred_before: UtcTime = Field(
        default=None, description="Only those that occurred before this (else: created)."
    )


class ForgetOut(BaseModel):
    dry_run: bool
    action: str
    count: int
    memories: list[MemoryOut]


class Whoami(BaseModel):
    name: str
    namespaces: list[str] | None = Field(description="null: every namespace.")
    is_admin: bool
    role: str = Field(description="reader, writer, curator or admin.")


class HistoryEntry(BaseModel):
    sequence: int
    change: str = Field(
        description="created, reinforced, superseded, updated, archived, restored, deleted, "
        "cooled, warmed, expired, quarantined, approved, released, rejected, or "
        "contradiction (this memory and another under a different key cannot both be true: "
        "`reason` names the other, by id and key, and what was done)."
    )
    key: str
    memory_type: str
    value: str | None = Field(description="Value after the change (before it, if deleted).")
    confidence: float | None = Field(description="Confidence after the change.")
    old_value: str | None
    new_value: str | None
    old_confidence: float | None
    new_confidence: float | None
    observation_count: int | None
    source: str | None
    actor: str | None
    reason: str | None = Field(default=None, description="Why (lifecycle changes).")
    changed_at: datetime
    redactions: dict[str, int] = Field(
        default_factory=dict,
        description="Secrets or personal data replaced with [REDACTED:kind], per kind.",
    )


class HistoryOut(BaseModel):
    memory_id: uuid.UUID
    history: list[HistoryEntry]


# --- namespaces -------------------------------------------------------------------------


class EraseReceipt(BaseModel):
    id: str = Field(description="Receipt id, for your records.")
    namespace: str
    erased_at: datetime
    actor: str
    postgres: dict[str, int] = Field(description="Rows deleted per table.")
    redis: dict[str, Any] = Field(description="Keys unlinked, and whether Redis is configured.")
    total: int
