"""The keyword arguments the clients' methods take, typed: the bodies and filters of the
REST calls, as the server's schemas accept them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypedDict


class MemoryFields(TypedDict, total=False):
    memory_type: Literal[
        "fact", "preference", "experience", "reflection", "relation", "event", "summary"
    ]
    source: str
    confidence: float
    importance: float
    tags: list[str]
    metadata: dict[str, Any]
    verified: bool
    permanent: bool
    expires_at: str | None  # ISO 8601 with a timezone; None (in an update): never expires
    ttl_seconds: int
    # when it happened: an aware datetime or ISO 8601 with a timezone; None (in an update):
    # unknown
    occurred_at: datetime | str | None


class MemoryChanges(MemoryFields, total=False):
    key: str
    value: str
    status: Literal["active", "cold", "archived"]


class Turn(TypedDict):
    """A turn of the conversation so far: role user (or a speaker's name), assistant,
    system or tool; content what was said."""

    role: str
    content: str


class RecallOptions(TypedDict, total=False):
    # the conversation's recent turns, oldest first (the query, if any, is the latest)
    context: list[Turn]
    conversation: bool  # False: search query and context as one text
    k: int
    memory_types: list[str]
    tags: list[str]
    tags_any: list[str]
    min_confidence: float
    min_importance: float
    created_after: datetime
    created_before: datetime
    observed_after: datetime
    observed_before: datetime
    min_relevance: float
    fusion: Literal["linear", "rrf"]
    keyword_weight: float
    hops: int
    occurred_after: datetime | str
    occurred_before: datetime | str
    reference_time: datetime | str  # when the question is asked ("last May" is read against it)
    resolve_time: bool


class ListFilters(TypedDict, total=False):
    memory_type: list[str]
    tag: list[str]
    min_confidence: float
    min_importance: float
    key: str
    key_prefix: str
    status: Literal["active", "cold", "archived", "quarantined", "all"]
    occurred_after: datetime
    occurred_before: datetime


class StepFields(TypedDict, total=False):
    role: str
    summary: str
    metadata: dict[str, Any]
    ttl_seconds: int
    idempotency_key: str
    occurred_at: datetime | str


class ForgetPolicy(TypedDict, total=False):
    max_confidence: float
    max_importance: float
    not_accessed_days: float
    not_observed_days: float
    memory_types: list[str]
    action: Literal["archive", "delete"]
    dry_run: bool
    limit: int
    occurred_after: datetime
    occurred_before: datetime
