"""Recall's request and response bodies, with every component of a score explained."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, Field

from hindsight import limits
from hindsight.wire.fields import (
    MemoryType,
    Query,
    Role,
    StoredJson,
    Strict,
    Tag,
)
from hindsight.wire.times import TimeWindowOut, UtcTime

# --- recall -----------------------------------------------------------------------------


class TurnIn(Strict):
    """One turn of the conversation so far, as chat APIs and working-memory steps have it."""

    role: Role = Field(
        description="Who said it: user (or a speaker's name), assistant, system or tool. "
        "The user's turns count twice the others'."
    )
    content: Query


class RecallIn(Strict):
    query: Query | None = Field(
        default=None,
        description="What to recall: a question, or the conversation so far as a transcript "
        '("User: ...\\nAssistant: ...", which is then searched turn by turn). Give this, '
        "`context`, or both.",
    )
    context: list[TurnIn] | None = Field(
        default=None,
        max_length=limits.CONTEXT_TURNS_MAX,
        description="The conversation's recent turns, oldest first; `query`, if given, is "
        "the latest. Searched as a conversation: each turn weighted (the user's over the "
        "assistant's, the latest over older ones), filler dropped.",
    )
    conversation: bool | None = Field(
        default=None,
        description="false: search the query and context as one text, even when they are a "
        "conversation (default HINDSIGHT_RECALL_CONVERSATION).",
    )
    k: int = Field(default=10, ge=1, le=limits.K_MAX)
    memory_types: list[MemoryType] | None = Field(default=None, max_length=7)
    tags: list[Tag] | None = Field(
        default=None, max_length=limits.TAGS_MAX, description="Memories with all these tags."
    )
    tags_any: list[Tag] | None = Field(
        default=None, max_length=limits.TAGS_MAX, description="Memories with any of these tags."
    )
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    min_importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Only memories at least this important."
    )
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
    specificity: float | None = Field(
        default=None,
        description="Mean IDF of the memory's own terms as a share of the namespace's "
        "highest (0..1): low for small talk made of words most memories share.",
    )
    specificity_factor: float | None = Field(
        default=None,
        description="specificity^γ, γ = HINDSIGHT_SPECIFICITY_WEIGHT (1 for a memory "
        "without terms).",
    )
    vector_rank: int | None
    keyword_rank: int | None
    fusion: str
    keyword_of: Literal["query", "memory"] | None = Field(
        default=None,
        description="What `keyword` is a share of: the query's BM25 mass (a question), or "
        "the memory's (a conversation: how much of the memory it talks about).",
    )
    conversation_turns: int | None = Field(
        default=None, description="Turns of a conversation searched (see `conversation`)."
    )
    keyword_weight: float | None = Field(
        default=None,
        description="w, the keyword arm's share in fusion (HINDSIGHT_KEYWORD_WEIGHT; by "
        "default 0.7 with the built-in embedder, 0.4 with a model).",
    )
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


class TurnOut(BaseModel):
    role: str
    weight: float = Field(description="Its share in both arms' search, the latest user turn 1.")
    content: str = Field(description="The turn as searched (speaker tag and quotes removed).")


class ConversationOut(BaseModel):
    turns: list[TurnOut] = Field(description="The turns searched, oldest first.")
    from_query: bool = Field(
        description="The turns were read from a query that is a transcript (else `context`)."
    )


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
    conversation: ConversationOut | None = Field(
        default=None,
        description="Set when a conversation was searched (`context`, or a query that is a "
        "transcript): its turns and their weights. Filler and older turns beyond the "
        "newest 16 (4,000 characters) are left out.",
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
