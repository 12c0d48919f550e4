"""One error hierarchy for the whole service.

Services raise these; the HTTP layer maps each class to a status code in one place
(`hindsight.api.errors`), and MCP tools turn them into tool errors with the same message.
Foreign exceptions (psycopg, redis, openai) are translated at the edge that calls them.
"""

from __future__ import annotations

from typing import Any


class HindsightError(Exception):
    """Base class. `code` is a stable machine-readable string, `message` is for humans."""

    code = "error"
    status = 500

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(HindsightError):
    code = "invalid_input"
    status = 422


class NotFound(HindsightError):
    code = "not_found"
    status = 404


class Conflict(HindsightError):
    code = "conflict"
    status = 409


class Unauthorized(HindsightError):
    code = "unauthorized"
    status = 401


class Forbidden(HindsightError):
    code = "forbidden"
    status = 403


class Unavailable(HindsightError):
    """A dependency we cannot do without is down; the client should retry later."""

    code = "unavailable"
    status = 503

    def __init__(self, message: str, *, retry_after: int | None = 1, details: Any = None) -> None:
        super().__init__(message, details=details)
        # None: waiting does not help, so no Retry-After is sent
        self.retry_after = retry_after


class RateLimited(HindsightError):
    """The caller sent more requests than its limit allows; it may retry after a while."""

    code = "rate_limited"
    status = 429

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotConfigured(Unavailable):
    """A feature needs configuration the operator has not given (e.g. an LLM endpoint).
    Still a 503 (the service cannot do this now), but a permanent one: no Retry-After, and
    the SDKs do not retry it, since only the operator's change makes it pass."""

    code = "not_configured"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message, retry_after=None, details=details)


class ProviderError(HindsightError):
    """An embedding or LLM endpoint answered with something we cannot use."""

    code = "provider_error"
    status = 502


class ConfigurationError(HindsightError):
    """Start-up cannot continue; the message says what to change."""

    code = "configuration_error"
