"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from hindsight.api.deps import CoreDep, PrincipalDep
from hindsight.services import answers
from hindsight.services.readiness import readiness
from hindsight.wire.memories import Whoami

# tags per route, not on the router: they add up, and /docs lists an operation once per tag
router = APIRouter()


@router.get("/healthz", tags=["health"])
async def healthz() -> dict[str, str]:
    """The process is alive."""
    return {"status": "ok"}


@router.get("/v1/whoami", response_model=Whoami, tags=["auth"])
async def whoami(principal: PrincipalDep) -> Whoami:
    """The API key's name, role and the namespaces it may use."""
    return answers.whoami(principal)


@router.get("/readyz", tags=["health"])
async def readyz(core: CoreDep) -> JSONResponse:
    """PostgreSQL reachable and schema current: 200 (Redis down: still 200, status
    `degraded`, naming it); otherwise 503 saying which."""
    r = await readiness(core.pool, core.hot, core.indexes, core.lifecycle)
    return JSONResponse(
        {"status": r.status, "checks": r.checks, "degraded": r.degraded, "warnings": r.warnings},
        status_code=200 if r.ready else 503,
    )
