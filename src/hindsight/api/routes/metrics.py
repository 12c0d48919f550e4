"""Prometheus metrics. They name every namespace's size, so a scrape needs a key that may
use every namespace, unless HINDSIGHT_METRICS_PUBLIC opens it."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from hindsight.api.deps import CoreDep
from hindsight.callers import client_address
from hindsight.errors import Forbidden
from hindsight.observability import metrics

router = APIRouter(tags=["health"])


@router.get("/metrics", response_class=Response)
async def prometheus(request: Request, core: CoreDep) -> Response:
    """Metrics in the Prometheus text format, summed over worker processes."""
    address = client_address(request.scope)
    if core.settings.metrics_public:
        core.auth.count_client(address)
    else:
        principal = await core.auth.authenticate(request.headers.get("authorization"), address)
        if not (principal.is_admin or principal.namespaces is None):
            raise Forbidden(
                "/metrics shows every namespace: use a key for all namespaces, or set "
                "HINDSIGHT_METRICS_PUBLIC=true"
            )
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
