"""Filters on long-term memories, shared by list, recall and forget, rendered as SQL
conditions.

The occurred_* bounds read `coalesce(occurred_at, created_at)`: a memory that says nothing
about when it happened is taken to have happened when it was recorded, which is true of a
client that stores things as they happen and keeps memories stored before occurred_at
existed inside the windows that cover them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hindsight.db.models import LIVE_STATUSES


@dataclass(frozen=True)
class MemoryFilter:
    memory_types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    tags_any: tuple[str, ...] = ()
    min_confidence: float | None = None
    min_importance: float | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    observed_after: datetime | None = None
    observed_before: datetime | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    key: str | None = None
    key_prefix: str | None = None
    # one status, several (default: the live ones), or None: any
    status: str | tuple[str, ...] | None = LIVE_STATUSES

    def as_json(self) -> dict[str, Any]:
        """The filters that were set, for the recall log."""
        out: dict[str, Any] = {}
        for name in ("memory_types", "tags", "tags_any"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        for name in ("min_confidence", "min_importance", "key", "key_prefix"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        for name in (
            "created_after",
            "created_before",
            "observed_after",
            "observed_before",
            "occurred_after",
            "occurred_before",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = value.isoformat()
        return out

    def within(self, start: datetime, end: datetime) -> MemoryFilter | None:
        """These filters narrowed to what occurred in [start, end); None when nothing can.
        In UTC: PostgreSQL refuses offsets past ±15:59, which a client's timezone may have."""
        start, end = start.astimezone(UTC), end.astimezone(UTC)
        after = max(start, self.occurred_after) if self.occurred_after else start
        before = min(end, self.occurred_before) if self.occurred_before else end
        if after >= before:
            return None
        return dataclasses.replace(self, occurred_after=after, occurred_before=before)


OCCURRED = "coalesce({p}occurred_at, {p}created_at)"
# The columns filter_sql reads: a subquery standing in for long_term_memory must select them.
FILTER_COLUMNS = (
    "expires_at",
    "live",
    "quarantined",
    "status",
    "memory_type",
    "tags",
    "confidence",
    "importance",
    "created_at",
    "last_observed",
    "occurred_at",
    "mem_key",
)
FILTER_COLUMNS_SQL = ", ".join(f"m.{c}" for c in FILTER_COLUMNS)  # as read through alias m
# The live rule as a condition on m.status, for the statements that scan a namespace outside
# recall's arms (the lifecycle's rules, forgetting, merging, the near-duplicate check).
# Recall names the generated column `live`, to use the live-only partial indexes it narrows
# with (migration 0024); naming it in these statements would offer the planner those
# indexes too and change their plans (seen: keyset batches read through the created_at
# index and sorted, instead of in id order up to the batch).
LIVE_BY_STATUS = f"m.status IN ({', '.join(repr(s) for s in LIVE_STATUSES)})"


def filter_sql(f: MemoryFilter, params: dict[str, Any], alias: str = "") -> str:
    """` AND ...` conditions for `f`, adding their values to `params` (named placeholders)."""
    p = f"{alias}." if alias else ""
    parts: list[str] = []

    def add(condition: str, name: str, value: Any) -> None:
        params[name] = value
        parts.append(condition)

    # past its hard expiry a memory is never returned, whatever else is asked
    parts.append(f"({p}expires_at IS NULL OR {p}expires_at > now())")
    # the partial indexes on (namespace, mem_key) are over the computed `live` and
    # `quarantined` (migration 0020): a key lookup can use them only if they are named
    statuses = (f.status,) if isinstance(f.status, str) else (f.status or ())
    if set(statuses) == set(LIVE_STATUSES):
        parts.append(f"{p}live")
    elif statuses == ("quarantined",):
        parts.append(f"{p}quarantined")
    else:
        if isinstance(f.status, tuple):
            add(f"{p}status = ANY(%(f_status)s::text[])", "f_status", list(f.status))
        elif f.status is not None:
            add(f"{p}status = %(f_status)s", "f_status", f.status)
        if statuses and set(statuses) <= set(LIVE_STATUSES):
            parts.append(f"{p}live")
    if f.memory_types:
        add(f"{p}memory_type = ANY(%(f_types)s::text[])", "f_types", list(f.memory_types))
    if f.tags:
        add(f"{p}tags @> %(f_tags)s::text[]", "f_tags", list(f.tags))
    if f.tags_any:
        add(f"{p}tags && %(f_tags_any)s::text[]", "f_tags_any", list(f.tags_any))
    if f.min_confidence is not None:
        add(f"{p}confidence >= %(f_min_conf)s", "f_min_conf", f.min_confidence)
    if f.min_importance is not None:
        add(f"{p}importance >= %(f_min_imp)s", "f_min_imp", f.min_importance)
    parts.append(created_sql(f, params, alias))
    parts.append(observed_sql(f, params, alias))
    parts.append(occurred_sql(f, params, alias))
    if f.key is not None:
        add(f"{p}mem_key = %(f_key)s", "f_key", f.key)
    if f.key_prefix is not None:
        # starts_with() instead of LIKE: no escaping of % and _ in user input
        add(f"starts_with({p}mem_key, %(f_key_prefix)s)", "f_key_prefix", f.key_prefix)
    return "".join(" AND " + c for c in parts if c)


def _window(
    column: str, names: tuple[str, str], bounds: tuple[Any, Any], params: dict[str, Any]
) -> str:
    conditions = []
    for name, bound, op in zip(names, bounds, (">=", "<"), strict=True):
        if bound is not None:
            params[name] = bound
            conditions.append(f"{column} {op} %({name})s")
    return " AND ".join(conditions)


def created_sql(f: MemoryFilter, params: dict[str, Any], alias: str = "") -> str:
    """The created_* bounds of `f` as conditions ('' when neither is set)."""
    p = f"{alias}." if alias else ""
    return _window(
        f"{p}created_at", ("f_c_after", "f_c_before"), (f.created_after, f.created_before), params
    )


def observed_sql(f: MemoryFilter, params: dict[str, Any], alias: str = "") -> str:
    """The observed_* bounds of `f` as conditions ('' when neither is set)."""
    p = f"{alias}." if alias else ""
    return _window(
        f"{p}last_observed",
        ("f_o_after", "f_o_before"),
        (f.observed_after, f.observed_before),
        params,
    )


def occurred_sql(f: MemoryFilter, params: dict[str, Any], alias: str = "") -> str:
    """The occurred_* bounds of `f` as conditions ('' when neither is set)."""
    return _window(
        OCCURRED.format(p=f"{alias}." if alias else ""),
        ("f_oc_after", "f_oc_before"),
        (f.occurred_after, f.occurred_before),
        params,
    )
