"""What may be shown to a caller of something that failed: never a credential, never the
data that was being processed. The full story goes to the server log only."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from hindsight.errors import HindsightError


def url(value: str) -> str:
    """A URL without what may hold a credential: its user:password@ and its query."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return "(a URL that cannot be parsed)"
    if not parts.netloc:  # no scheme: "api.openai.com", or "user:pw@host/v1?key=..."
        return value.rpartition("@")[2].partition("?")[0].partition("#")[0]
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def failure(exc: BaseException) -> str:
    """An exception described by its kind, without the values it was about: a pydantic
    error without `input_value`, a database error by its SQLSTATE, not its DETAIL (which
    quotes rows)."""
    name = type(exc).__name__
    if isinstance(exc, HindsightError):
        return f"{name} ({exc.code})"
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False, include_context=False)[:5]
        )
        return f"{name}: {problems}"
    sqlstate = getattr(exc, "sqlstate", None)
    if sqlstate:
        return f"{name} (SQLSTATE {sqlstate})"
    return f"{name} (details in the server log)"
