"""Reading an answer and deciding to try again: the errors a call raises, which failures
are transient, and how long to wait before the next attempt. The sync and async clients
share this; they only differ in how they send and sleep."""

from __future__ import annotations

import random
from typing import Any

import httpx

from hindsight.client._call import Call

# HTTP statuses that mean "not done, try again": the server refused before acting.
TRANSIENT_STATUSES = frozenset({429, 502, 503, 504})
# ... except these error codes, which no wait makes pass: the operator must configure
# something first (e.g. extraction without an LLM)
PERMANENT_CODES = frozenset({"not_configured"})


class APIError(Exception):
    """The service answered with an error. `message` is the server's own, saying what to fix."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class TransportError(Exception):
    """The service could not be reached (after retries), or its answer was cut off."""


def error_from(response: httpx.Response) -> APIError:
    try:
        body = response.json()
        error = body.get("error", {}) if isinstance(body, dict) else {}
        return APIError(
            response.status_code,
            str(error.get("code", "error")),
            str(error.get("message", response.text)),
            error.get("details"),
        )
    except ValueError:
        return APIError(response.status_code, "error", response.text or response.reason_phrase)


def backoff(attempt: int, response: httpx.Response | None) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's Retry-After if it sent
    one, else exponential with jitter."""
    if response is not None:
        after = response.headers.get("retry-after")
        if after and after.replace(".", "", 1).isdigit():
            return min(float(after), 30.0)
    return float(min(8.0, 0.25 * 2.0**attempt) * (0.5 + random.random() / 2))


def retryable(call: Call, *, response: httpx.Response | None, error: Exception | None) -> bool:
    """Transient only: the server said so (429, 502, 503, 504), or the request never left
    (cannot connect). A timeout or a dropped connection after sending is retried only for
    calls that are safe to repeat."""
    if response is not None:
        return (
            response.status_code in TRANSIENT_STATUSES
            and error_from(response).code not in PERMANENT_CODES
        )
    if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
        return True
    return call.idempotent and isinstance(error, httpx.TransportError)


def result(call: Call, response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise error_from(response)
    if response.status_code == 204 or not response.content:
        return call.parse(None)
    return call.parse(response.text if call.lines else response.json())
