"""Every error the API returns has one shape: {"error": {"code", "message", "details"}}.

One handler per kind of error; routes never catch to translate.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from hindsight import limits
from hindsight.api.body_limit import too_large
from hindsight.errors import HindsightError, RateLimited, Unavailable
from hindsight.observability import metrics
from hindsight.wire.errors import describe, field_path, summary

log = logging.getLogger(__name__)


def error_response(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message, "details": details}},
        status_code=status,
        headers=headers,
    )


def _body_hint(request: Request, error: dict[str, Any]) -> str | None:
    """A body that is not the object the call expects: most often JSON sent without its
    Content-Type (FastAPI then sees text), or a batch's list sent without its wrapper."""
    if error.get("type") != "model_attributes_type" or tuple(error.get("loc", ())) != ("body",):
        return None
    if "application/json" not in request.headers.get("content-type", ""):
        return "body: not read as JSON; send the header Content-Type: application/json"
    if isinstance(error.get("input"), list):
        wrapper = '{"memories": [...]}' if request.url.path.endswith(":batch") else "an object"
        return f"body: a JSON array where {wrapper} is expected; wrap the list"
    return None


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = list(exc.errors())
    described = [_body_hint(request, e) or describe(e) for e in errors]
    message = summary(described)
    details = [
        {"field": field_path(e.get("loc", ())), "message": d, "type": e.get("type")}
        for e, d in zip(errors, described, strict=True)
    ]
    return error_response(422, "invalid_input", message, details)


async def _hindsight(request: Request, exc: HindsightError) -> JSONResponse:
    headers = None
    if isinstance(exc, Unavailable | RateLimited) and exc.retry_after is not None:
        headers = {"Retry-After": str(exc.retry_after)}
    if exc.status >= 500:
        log.warning("%s %s: %s", request.method, request.url.path, exc.message)
    return error_response(exc.status, exc.code, exc.message, exc.details, headers)


async def _database_down(request: Request, exc: psycopg.OperationalError) -> JSONResponse:
    log.warning("database error on %s %s: %s", request.method, request.url.path, exc)
    metrics.STORE_ERRORS.labels("postgres", "request").inc()
    return error_response(
        503,
        "unavailable",
        "PostgreSQL is unreachable; try again shortly",
        headers={"Retry-After": "2"},
    )


async def _pool_timeout(request: Request, exc: Exception) -> JSONResponse:
    metrics.STORE_ERRORS.labels("postgres", "pool_timeout").inc()
    return error_response(
        503,
        "unavailable",
        "all database connections are busy or PostgreSQL is down; try again shortly",
        headers={"Retry-After": "1"},
    )


async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    codes = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
    message = str(exc.detail)
    if exc.status_code == 400 and message == "There was an error parsing the body":
        if isinstance(exc.__cause__, RecursionError):
            return error_response(
                422,
                "invalid_input",
                f"body: JSON nested too deeply; at most {limits.JSON_MAX_DEPTH} levels of "
                "objects and arrays are accepted",
            )
        # FastAPI's answer to a body that is not UTF-8 (JSON errors already reach _validation)
        return error_response(
            422, "invalid_input", "body: not valid UTF-8; send JSON encoded as UTF-8"
        )
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such endpoint: {request.method} {request.url.path}; see /docs"
    if exc.status_code == 413:
        message = too_large(None, request.url.path)
    if exc.status_code == 405:
        headers = {k.lower(): v for k, v in (getattr(exc, "headers", None) or {}).items()}
        allowed = headers.get("allow", "")
        message = f"{request.method} is not allowed on {request.url.path}"
        if allowed:
            message += f"; it takes {allowed} (see /docs)"
    return error_response(
        exc.status_code,
        codes.get(exc.status_code, "http_error"),
        message,
        headers=getattr(exc, "headers", None),
    )


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, "internal_error", "internal error; the server log has details")


def install(app: FastAPI) -> None:
    from psycopg_pool import PoolTimeout

    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    app.add_exception_handler(HindsightError, _hindsight)  # type: ignore[arg-type]
    app.add_exception_handler(psycopg.OperationalError, _database_down)  # type: ignore[arg-type]
    app.add_exception_handler(PoolTimeout, _pool_timeout)
    app.add_exception_handler(StarletteHTTPException, _http)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)
