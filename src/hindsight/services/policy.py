"""The namespace policy: one JSON document of rules a namespace may tune.

Sections: `lifecycle` (when memories cool, archive, are deleted, demoted and merged),
`ranking` (tier weights, the optional recency, importance and trust factors, and the weight
of a time window read from the query),
`capacity`, `trust` (how far each source is trusted, and below what it is quarantined) and
`redaction` (what happens to secrets and personal data written to the namespace).
Every field is optional in a PUT: what is not set takes the server's default (the
HINDSIGHT_* settings), so the stored document holds only a namespace's own choices.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Literal

from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.errors import InvalidInput
from hindsight.stores import policies as store

_DAYS = 36_500


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LifecyclePolicy(_Section):
    cold_after_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="No access or observation this long: cold."
    )
    archive_after_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="No access or observation this long: archived."
    )
    delete_below_importance: float | None = Field(
        default=None, ge=0, le=1, description="Importance under this (0: never) and ..."
    )
    delete_after_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="... not accessed this long: deleted."
    )
    low_confidence_below: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A periodic pass archives never-recalled memories under this confidence "
        "(0: never) that are older than one period.",
    )
    low_confidence_every_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="The period of that pass."
    )
    session_demotion_delay_seconds: int | None = Field(
        default=None, ge=0, le=_DAYS * 86400, description="After a session ends, this long..."
    )
    session_demotion_factor: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="... its event and experience memories' importance is multiplied by this.",
    )
    merge_per_run: int | None = Field(
        default=None,
        ge=0,
        le=100_000,
        description="Memories the retroactive merge checks per pass (0: off).",
    )


class TierWeights(_Section):
    active: float | None = Field(default=None, ge=0, le=1)
    cold: float | None = Field(default=None, ge=0, le=1)


class RankingPolicy(_Section):
    tier_weights: TierWeights | None = None
    recency_weight: float | None = Field(
        default=None, ge=0, le=1, description="Weight w of recency: factor 1 − w + w·exp(−age/τ)."
    )
    recency_tau_days: float | None = Field(default=None, gt=0, le=_DAYS, description="τ.")
    importance_weight: float | None = Field(
        default=None, ge=0, le=1, description="Weight w of importance: factor 1 − w + w·importance."
    )
    trust_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Weight w of the source's trust: factor 1 − w + w·trust (0: no effect).",
    )
    time_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Weight w of a time window read from the query: memories that occurred "
        "outside it score × (1 − w) (0: no effect).",
    )


class CapacityPolicy(_Section):
    max_active_memories: int | None = Field(
        default=None, ge=1, le=1_000_000_000, description="Soft cap on active memories."
    )


class TrustPolicy(_Section):
    sources: dict[str, float] | None = Field(
        default=None,
        description="Trust (0..1) per source name; a PUT adds to or overrides the defaults.",
    )
    default: float | None = Field(
        default=None, ge=0, le=1, description="Trust of any other source name, and of none."
    )
    quarantine_below: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A claim from a source trusted less than this waits for review.",
    )

    @field_validator("sources")
    @classmethod
    def _levels(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for name, level in (value or {}).items():
            if not name.strip() or len(name) > 200:
                raise ValueError(f"source name {name[:40]!r}: must be 1 to 200 characters")
            if not 0 <= level <= 1:
                raise ValueError(f"{name}: trust must be between 0 and 1")
        return value

    def of(self, source: str | None) -> float:
        """The trust of `source` (a name not listed, or none, has the default)."""
        assert self.default is not None
        if source is None or self.sources is None:
            return self.default
        return self.sources.get(source, self.default)


class RedactionPolicy(_Section):
    mode: Literal["redact", "reject", "off"] | None = Field(
        default=None,
        description="redact: secrets are replaced with [REDACTED:kind]; reject: a write "
        "holding one is refused (422, nothing stored); off: text is stored as sent.",
    )
    email: bool | None = Field(default=None, description="Also treat e-mail addresses so.")
    phone: bool | None = Field(default=None, description="Also treat phone numbers so.")


class Policy(_Section):
    """The document as PUT and as GET returns it (GET: every field filled in)."""

    lifecycle: LifecyclePolicy | None = None
    ranking: RankingPolicy | None = None
    capacity: CapacityPolicy | None = None
    trust: TrustPolicy | None = None
    redaction: RedactionPolicy | None = None


def defaults(settings: Settings) -> dict[str, Any]:
    s = settings
    return {
        "lifecycle": {
            "cold_after_days": s.cold_after_days,
            "archive_after_days": s.archive_after_days,
            "delete_below_importance": s.delete_below_importance,
            "delete_after_days": s.delete_after_days,
            "low_confidence_below": s.low_confidence_below,
            "low_confidence_every_days": s.low_confidence_every_days,
            "session_demotion_delay_seconds": s.session_demotion_delay_seconds,
            "session_demotion_factor": s.session_demotion_factor,
            "merge_per_run": s.merge_per_run,
        },
        "ranking": {
            "tier_weights": {"active": 1.0, "cold": s.cold_tier_weight},
            "recency_weight": s.recency_weight,
            "recency_tau_days": s.recency_tau_days,
            "importance_weight": s.importance_weight,
            "trust_weight": s.trust_weight,
            "time_weight": s.time_weight,
        },
        "capacity": {"max_active_memories": s.namespace_capacity},
        "trust": {
            "sources": dict(s.source_trust),
            "default": s.trust_default,
            "quarantine_below": s.quarantine_below,
        },
        "redaction": {"mode": s.redaction, "email": s.redact_email, "phone": s.redact_phone},
    }


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for name, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(name), dict):
            out[name] = _merge(out[name], value)
        elif value is not None:
            out[name] = value
    return out


def effective(settings: Settings, stored: dict[str, Any]) -> Policy:
    """The defaults with the namespace's own fields over them, checked as a whole."""
    try:
        policy = Policy.model_validate(_merge(defaults(settings), stored))
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"{path}: {first['msg']}") from None
    life = policy.lifecycle
    assert life is not None and life.cold_after_days and life.archive_after_days
    if life.archive_after_days <= life.cold_after_days:
        raise InvalidInput(
            f"lifecycle.archive_after_days: must be more than cold_after_days "
            f"({life.cold_after_days:g}); memories cool before they are archived"
        )
    return policy


class PolicyService:
    """Policies are cached per process: recall and every write read one. The cache holds
    while the policies' version (migration 0022), which the service moves with every
    change it makes, stays where it was, and the version is read again at most every
    `ttl` seconds: one round trip per process every `ttl` seconds instead of one per
    namespace. A PUT is seen at once by this process and within `ttl` seconds by other
    replicas; a change made around the service (psql) once the cached policy is
    `max_age` seconds old."""

    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        ttl: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        max_age: float = 60.0,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._ttl = ttl
        self._max_age = max_age
        self._clock = clock
        # namespace -> (the version it was read at, when, its policy)
        self._cache: dict[str, tuple[str, float, Policy]] = {}
        self._version: str | None = None  # None: not read yet, or no version row
        self._checked = -math.inf
        self._puts = 0  # PUTs by this process: a read that started before one is stale
        self._defaults: Policy | None = None

    async def _current_version(self) -> str | None:
        now = self._clock()
        if now - self._checked >= self._ttl:
            async with self._pool.connection() as conn:
                version = await store.version(conn)
            if version != self._version:
                self._cache.clear()
            self._version, self._checked = version, now
        return self._version

    def _effective(self, stored: dict[str, Any] | None) -> Policy:
        if stored:
            return effective(self._settings, stored)
        if self._defaults is None:  # most namespaces set nothing
            self._defaults = effective(self._settings, {})
        return self._defaults

    def _remember(self, namespace: str, version: str | None, at: float, policy: Policy) -> None:
        # read at an older version than the one now known: it may predate a change
        if version is None or version != self._version:
            return
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[namespace] = (version, at, policy)

    async def get(self, namespace: str) -> Policy:
        version = await self._current_version()
        now = self._clock()
        hit = self._cache.get(namespace)
        if hit is not None and hit[0] == version and now - hit[1] < self._max_age:
            return hit[2]
        puts = self._puts
        # read after the version: at least as new as what the version says
        async with self._pool.connection() as conn:
            stored = await store.get(conn, namespace)
        policy = self._effective(stored)
        if puts == self._puts:  # else a PUT here may have landed after the read
            self._remember(namespace, version, now, policy)
        return policy

    async def put(self, namespace: str, document: Policy, *, actor: str) -> Policy:
        """Replace the namespace's own fields with `document`'s; nothing stored if the
        result is invalid."""
        own = document.model_dump(exclude_none=True)
        policy = effective(self._settings, own)
        async with self._pool.connection() as conn:
            await store.put(conn, namespace, own, actor=actor)
        self._puts += 1
        # seen at once here; the version it moved empties the cache at the next check
        self._remember(namespace, self._version, self._clock(), policy)
        return policy
