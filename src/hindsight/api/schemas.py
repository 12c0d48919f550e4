"""Request and response bodies of the REST API (also the OpenAPI schema at /docs)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from hindsight import limits
from hindsight.api.time_schemas import OccurredAt, TimeWindowOut, UtcTime
from hindsight.api.validation import (
    IdempotencyKey,
    Key,
    Metadata,
    Query,
    Role,
    Source,
    StepContent,
    StepSummary,
    StoredJson,
    Tag,
    Value,
)

if TYPE_CHECKING:
    # Imported when used: these models are also the SDK's, which runs without the server's
    # dependencies (the services pull in psycopg and pgvector).
    from hindsight.services.memory import Observation

MemoryType = Literal[
    "fact", "preference", "experience", "reflection", "relation", "event", "summary"
]
Status = Literal["active", "cold", "archived", "quarantined"]
# what a PATCH may set: a quarantined memory leaves quarantine only by a curator's review
SettableStatus = Literal["active", "cold", "archived"]


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


class Strict(BaseModel):
    """Unknown fields are refused, so a misspelt field is an error rather than ignored."""

    model_config = ConfigDict(extra="forbid")


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
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
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

    def observation(self) -> Observation:
        from hindsight.services.memory import Observation

        return Observation(
            key=self.key,
            value=self.value,
            memory_type=self.memory_type,
            source=self.source,
            confidence=self.confidence,
            importance=self.importance,
            tags=self.tags,
            metadata=self.metadata,
            verified=self.verified,
            permanent=self.permanent,
            expires_at=expiry(self.expires_at, self.ttl_seconds),
            occurred_at=self.occurred_at,
        )


class BatchIn(Strict):
    memories: list[MemoryIn] = Field(min_length=1, max_length=limits.BATCH_MAX)
    dedup: bool = Field(
        default=True,
        description="false: a new key is always a memory of its own, never merged into a "
        "near-identical one (for key/value stores such as the LangGraph adapter).",
    )


class ObserveResult(BaseModel):
    id: uuid.UUID
    key: str = Field(description="Key of the memory the item landed in.")
    outcome: Literal["created", "reinforced", "superseded", "quarantined", "released"] = Field(
        description="quarantined: stored for review, not recalled (see `reason`); released: a "
        "quarantined claim this observation confirmed independently, now active."
    )
    confidence: float
    observation_count: int
    memory_type: MemoryType
    trust: float | None = Field(default=None, description="The trust of the item's source.")
    confidence_capped: bool = Field(
        default=False, description="The initial confidence was lowered to the source's trust."
    )
    reason: str | None = Field(default=None, description="Why it was quarantined or released.")
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
    not_accessed_days: float | None = Field(
        default=None,
        gt=0,
        le=36_500,
        description="Not recalled for this many days (never recalled: since created).",
    )
    not_observed_days: float | None = Field(
        default=None, gt=0, le=36_500, description="Not observed again for this many days."
    )
    memory_types: list[MemoryType] | None = Field(default=None, max_length=5)
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
    change: str
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


# --- recall -----------------------------------------------------------------------------


class RecallIn(Strict):
    query: Query
    k: int = Field(default=10, ge=1, le=limits.K_MAX)
    memory_types: list[MemoryType] | None = Field(default=None, max_length=5)
    tags: list[Tag] | None = Field(
        default=None, max_length=limits.TAGS_MAX, description="Memories with all these tags."
    )
    tags_any: list[Tag] | None = Field(
        default=None, max_length=limits.TAGS_MAX, description="Memories with any of these tags."
    )
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    created_after: AwareDatetime | None = None
    created_before: AwareDatetime | None = None
    observed_after: AwareDatetime | None = None
    observed_before: AwareDatetime | None = None
    min_relevance: float = Field(default=0.0, ge=0.0, le=1.0)
    fusion: Literal["linear", "rrf"] | None = None
    keyword_weight: float | None = Field(default=None, ge=0.0, le=1.0)
    hops: int | None = Field(
        default=None,
        ge=1,
        le=2,
        description="2: also search with the best hit added to the query, for questions "
        "that need two memories (default HINDSIGHT_RECALL_HOPS).",
    )
    occurred_after: UtcTime = Field(
        default=None, description="Memories that occurred then or later (else: created)."
    )
    occurred_before: UtcTime = Field(
        default=None, description="Memories that occurred before this (else: created)."
    )
    reference_time: AwareDatetime | None = Field(
        default=None,
        description='When the question is asked: "last May" is read against it, in its '
        "timezone (default: now, UTC).",
    )
    resolve_time: bool | None = Field(
        default=None,
        description="Rank memories that occurred in the time the query names first "
        "(default HINDSIGHT_RESOLVE_TIME).",
    )


class Components(BaseModel):
    similarity: float = Field(description="Cosine similarity of query and memory.")
    keyword: float = Field(description="BM25 keyword match, 0..1 of the query's IDF mass.")
    relevance: float = Field(
        description="Fusion of similarity and keyword, with the reranker's share when one is set."
    )
    confidence: float
    access_count: int = Field(description="Access count the score used (before this recall).")
    access_boost: float = Field(description="1 + α·ln(1 + access_count), at most access_boost_max.")
    access_boost_max: float | None = Field(
        default=None,
        description="Ceiling of the access boost: accesses reorder memories whose relevance "
        "is this close, never a clearly more relevant one (HINDSIGHT_ACCESS_BOOST_MAX).",
    )
    vector_rank: int | None
    keyword_rank: int | None
    fusion: str
    hop: int | None = Field(default=None, description="2: found by following `via`.")
    via: uuid.UUID | None = Field(default=None, description="The hit the second hop followed.")
    hop_discount: float | None = None
    status: str | None = Field(default=None, description="Tier: active or cold.")
    tier_weight: float | None = Field(default=None, description="The policy's weight of it.")
    recency: float | None = Field(
        default=None, description="exp(−age/τ), age since the last access or observation."
    )
    recency_factor: float | None = Field(default=None, description="1 − w + w·recency.")
    importance: float | None = None
    importance_factor: float | None = Field(default=None, description="1 − w + w·importance.")
    trust: float | None = Field(default=None, description="The policy's trust of the source.")
    trust_factor: float | None = Field(default=None, description="1 − w + w·trust.")
    rerank: float | None = Field(
        default=None, description="The reranker's score, 0..1 (only when a reranker is set)."
    )
    rerank_weight: float | None = Field(
        default=None,
        description="w in relevance = (1 − w)·relevance_before_rerank + w·rerank "
        "(HINDSIGHT_RERANK_WEIGHT).",
    )
    relevance_before_rerank: float | None = Field(
        default=None, description="Fusion of similarity and keyword, before reranking."
    )
    time: datetime | None = Field(
        default=None, description="When it occurred (else was created), if the query named a time."
    )
    time_factor: float | None = Field(default=None, description="1 inside the window, else 1 − w.")


class RecallHit(BaseModel):
    id: uuid.UUID
    key: str
    value: str
    memory_type: MemoryType
    confidence: float
    observation_count: int
    access_count: int
    importance: float
    tags: list[str]
    metadata: StoredJson
    source: str | None
    created_at: datetime
    last_observed: datetime
    occurred_at: datetime | None = None
    score: float
    components: Components


class RecallOut(BaseModel):
    recall_id: uuid.UUID
    results: list[RecallHit]
    vector_skipped: str | None = Field(
        default=None,
        description="Set when the query could not be embedded (the embedding endpoint is "
        "down or failing): the results were ranked by keywords alone, and this says why.",
    )
    rerank_skipped: str | None = Field(
        default=None,
        description="Set when a reranker is configured but failed or timed out: the "
        "results are ranked without it, and this says why.",
    )
    time_window: TimeWindowOut | None = Field(
        default=None, description="The time the query named, if any: it ranked the results."
    )


class RecallLogOut(BaseModel):
    recall_id: uuid.UUID
    query: str
    k: int
    filters: dict[str, Any]
    results: list[dict[str, Any]]
    actor: str | None
    duration_ms: float | None
    created_at: datetime


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


# --- extraction and consolidation --------------------------------------------------------


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


# --- errors -----------------------------------------------------------------------------


class ErrorBody(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorOut(BaseModel):
    error: ErrorBody


# --- namespaces -------------------------------------------------------------------------


class EraseReceipt(BaseModel):
    id: str = Field(description="Receipt id, for your records.")
    namespace: str
    erased_at: datetime
    actor: str
    postgres: dict[str, int] = Field(description="Rows deleted per table.")
    redis: dict[str, Any] = Field(description="Keys unlinked, and whether Redis is configured.")
    total: int
