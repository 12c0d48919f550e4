"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from hindsight.api.deps import CoreDep, PrincipalDep
from hindsight.api.schemas import Whoami
from hindsight.db import migrate
from hindsight.stores import diagnostics

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is alive."""
    return {"status": "ok"}


@router.get("/v1/whoami", response_model=Whoami, tags=["auth"])
async def whoami(principal: PrincipalDep) -> Whoami:
    """The API key's name, role and the namespaces it may use."""
    namespaces = (
        None if principal.namespaces is None or principal.is_admin else sorted(principal.namespaces)
    )
    return Whoami(
        name=principal.name,
        namespaces=namespaces,
        is_admin=principal.is_admin,
        role=principal.role.value,
    )


@router.get("/readyz")
async def readyz(core: CoreDep) -> JSONResponse:
    """PostgreSQL reachable and schema current: 200 (Redis down: still 200, status
    `degraded`, naming it); otherwise 503 saying which."""
    checks: dict[str, Any] = {}
    try:
        async with core.pool.connection(timeout=2.0) as conn:
            revision = await diagnostics.schema_revision(conn)
        checks["postgres"] = "ok"
        head = migrate.head_revision()
        checks["schema"] = (
            "current" if revision == head else f"at {revision or 'none'}, needs {head}"
        )
    except Exception as exc:
        checks["postgres"] = f"unreachable: {type(exc).__name__}"
        checks["schema"] = "unknown"
    if not core.hot.configured:
        checks["redis"] = "not configured"
    else:
        checks["redis"] = "ok" if await core.hot.ping() else "unreachable"
    # missing search indexes slow recall down (exact search) but stop nothing
    checks["search_indexes"] = core.indexes.state if core.indexes else "not checked"
    # Only PostgreSQL decides readiness: without Redis everything is served from it, and a
    # 503 over a cache outage would make a load balancer pull every replica at once.
    ready = checks["postgres"] == "ok" and checks["schema"] == "current"
    degraded = [name for name in ("redis",) if checks[name] not in ("ok", "not configured")]
    status = "not ready" if not ready else ("degraded" if degraded else "ready")
    warnings = []
    if checks["schema"] == "current":  # a warning, never a reason to be unready
        for ns in await core.lifecycle.capacity_warnings():
            warnings.append(
                f"namespace {ns['namespace']!r} had {ns['active_count']} active memories, over "
                f"its capacity of {ns['capacity']}; the lifecycle archived "
                f"{ns['capacity_archived']} of the lowest value"
            )
    return JSONResponse(
        {"status": status, "checks": checks, "degraded": degraded, "warnings": warnings},
        status_code=200 if ready else 503,
    )
