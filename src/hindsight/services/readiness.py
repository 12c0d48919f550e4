"""Whether this process can serve (`/readyz`): PostgreSQL reachable with the schema at
head decides; Redis and the search indexes are reported, never a reason to be unready."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight.db import migrate
from hindsight.db.pool import Connection
from hindsight.services.lifecycle import LifecycleService
from hindsight.services.search_indexes import IndexKeeper
from hindsight.stores import diagnostics
from hindsight.stores.hot_steps import HotSteps


@dataclass(frozen=True)
class Readiness:
    ready: bool
    status: str  # ready | degraded | not ready
    checks: dict[str, Any]
    degraded: list[str]
    warnings: list[str] = field(default_factory=list)


async def readiness(
    pool: AsyncConnectionPool[Connection],
    hot: HotSteps,
    indexes: IndexKeeper | None,
    lifecycle: LifecycleService,
) -> Readiness:
    checks: dict[str, Any] = {}
    try:
        async with pool.connection(timeout=2.0) as conn:
            revision = await diagnostics.schema_revision(conn)
        checks["postgres"] = "ok"
        head = migrate.head_revision()
        checks["schema"] = (
            "current" if revision == head else f"at {revision or 'none'}, needs {head}"
        )
    except Exception as exc:
        checks["postgres"] = f"unreachable: {type(exc).__name__}"
        checks["schema"] = "unknown"
    if not hot.configured:
        checks["redis"] = "not configured"
    else:
        checks["redis"] = "ok" if await hot.ping() else "unreachable"
    # missing search indexes slow recall down (exact search) but stop nothing
    checks["search_indexes"] = indexes.state if indexes else "not checked"
    # Only PostgreSQL decides readiness: without Redis everything is served from it, and a
    # 503 over a cache outage would make a load balancer pull every replica at once.
    ready = checks["postgres"] == "ok" and checks["schema"] == "current"
    degraded = [name for name in ("redis",) if checks[name] not in ("ok", "not configured")]
    status = "not ready" if not ready else ("degraded" if degraded else "ready")
    warnings = []
    if checks["schema"] == "current":  # a warning, never a reason to be unready
        for ns in await lifecycle.capacity_warnings():
            warnings.append(
                f"namespace {ns['namespace']!r} had {ns['active_count']} active memories, over "
                f"its capacity of {ns['capacity']}; the lifecycle archived "
                f"{ns['capacity_archived']} of the lowest value"
            )
    return Readiness(ready, status, checks, degraded, warnings)
