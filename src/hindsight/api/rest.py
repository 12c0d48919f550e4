"""The REST API: its routes under /v1, the probes, the error shape and the offline docs."""

from __future__ import annotations

from fastapi import FastAPI

from hindsight.api import docs, errors
from hindsight.api.routes import (
    extraction,
    health,
    jobs,
    lifecycle,
    memories,
    metrics,
    namespaces,
    overview,
    recall,
    sessions,
)


def install(app: FastAPI) -> None:
    errors.install(app)
    docs.install(app)
    for routes in (
        health,
        memories,
        recall,
        sessions,
        extraction,
        jobs,
        lifecycle,
        overview,
        metrics,
        namespaces,
    ):
        app.include_router(routes.router)
