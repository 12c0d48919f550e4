"""Each namespace's policy in force: the server's defaults with the namespace's own fields
over them (the document is `hindsight.wire.policy.Policy`; the stored document holds only
a namespace's own choices), cached per process."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from psycopg_pool import AsyncConnectionPool
from pydantic import ValidationError

from hindsight.config import POLICY_SETTINGS, Settings
from hindsight.db.pool import Connection
from hindsight.errors import Forbidden, InvalidInput
from hindsight.services.roles import Role
from hindsight.stores import policies as store
from hindsight.wire.policy import Policy


def defaults(settings: Settings) -> dict[str, Any]:
    """Every field of the document, from the setting that is its default."""
    out: dict[str, Any] = {"ranking": {"tier_weights": {"active": 1.0}}}
    for name, path in POLICY_SETTINGS.items():
        *sections, field = path.split(".")
        node = out
        for section in sections:
            node = node.setdefault(section, {})
        value = getattr(settings, name)
        node[field] = dict(value) if isinstance(value, dict) else value
    return out


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
    scopes = {"lifecycle": (life.cold_after_days, life.archive_after_days)}
    for section, kinds in (("by_type", life.by_type), ("by_tag", life.by_tag)):
        for kind, own in (kinds or {}).items():
            scopes[f"lifecycle.{section}.{kind}"] = (
                own.cold_after_days or life.cold_after_days,
                own.archive_after_days or life.archive_after_days,
            )
    for path, (cold, archive) in scopes.items():
        if archive <= cold:
            raise InvalidInput(
                f"{path}.archive_after_days: must be more than cold_after_days "
                f"({cold:g}); memories cool before they are archived"
            )
    return policy


# how strict each redaction mode is: a namespace may be stricter than the server, not laxer
_REDACTION_STRICTNESS = {"off": 0, "redact": 1, "reject": 2}


def floors_lowered(settings: Settings, policy: Policy) -> list[str]:
    """What in `policy` is laxer than the operator's settings (the floor a curator keeps):
    the redaction mode and what it covers, the quarantine threshold, and a source (or the
    default) the settings quarantine made trusted enough to pass it."""
    out: list[str] = []
    redaction, trust = policy.redaction, policy.trust
    assert redaction is not None and trust is not None
    mode = redaction.mode or settings.redaction
    if _REDACTION_STRICTNESS[mode] < _REDACTION_STRICTNESS[settings.redaction]:
        out.append(
            f"redaction.mode: {mode!r} is laxer than the server's HINDSIGHT_REDACTION "
            f"{settings.redaction!r}"
        )
    for kind, floor in (("email", settings.redact_email), ("phone", settings.redact_phone)):
        if floor and getattr(redaction, kind) is False:
            out.append(f"redaction.{kind}: the server's HINDSIGHT_REDACT_{kind.upper()} is on")
    if trust.quarantine_below is not None and trust.quarantine_below < settings.quarantine_below:
        out.append(
            f"trust.quarantine_below: {trust.quarantine_below:g} is under the server's "
            f"HINDSIGHT_QUARANTINE_BELOW {settings.quarantine_below:g}"
        )
    # raising a source the operator quarantines over the threshold lowers the floor as
    # surely as lowering the threshold does
    threshold = trust.quarantine_below if trust.quarantine_below is not None else 0.0
    for name, level in sorted(settings.source_trust.items()):
        if level < settings.quarantine_below and trust.of(name) >= threshold:
            out.append(
                f"trust.sources.{name}: {trust.of(name):g} lets through a source the server's "
                f"HINDSIGHT_SOURCE_TRUST ({level:g}) quarantines"
            )
    if settings.trust_default < settings.quarantine_below and trust.of(None) >= threshold:
        out.append(
            f"trust.default: {trust.of(None):g} lets through what the server's "
            f"HINDSIGHT_TRUST_DEFAULT ({settings.trust_default:g}) quarantines"
        )
    return out


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

    async def put(
        self, namespace: str, document: Policy, *, actor: str, role: Role = Role.ADMIN
    ) -> Policy:
        """Replace the namespace's own fields with `document`'s; nothing stored if the
        result is invalid, or if it lowers an operator's floor and `role` is not admin."""
        own = document.model_dump(exclude_none=True)
        policy = effective(self._settings, own)
        if not role.at_least(Role.ADMIN):
            below = floors_lowered(self._settings, policy)
            if below:
                raise Forbidden(
                    "; ".join(below) + ": the server's settings are the operator's floor, "
                    f"which only an admin may lower; this API key has the {role.value} role"
                )
        async with self._pool.connection() as conn:
            await store.put(conn, namespace, own, actor=actor)
        self._puts += 1
        # seen at once here; the version it moved empties the cache at the next check
        self._remember(namespace, self._version, self._clock(), policy)
        return policy
