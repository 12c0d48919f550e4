"""The one shape every error takes on the wire: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel


def field_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """('body', 'memories', 3, 'key') -> 'memories[3].key'."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "body"


def describe(error: Mapping[str, Any]) -> str:
    """One validation error as `field: what to fix`."""
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    if error.get("type") == "json_invalid":
        detail = (error.get("ctx") or {}).get("error")
        return f"body: not valid JSON ({detail})" if detail else "body: not valid JSON"
    if error.get("type") == "extra_forbidden":
        message = "unknown field; check its spelling against /docs"
    if error.get("type") == "missing":
        message = "required"
    if error.get("type") == "timezone_aware":
        message = (
            "needs a timezone: add one, e.g. 2024-05-03T14:00:00Z or 2024-05-03T14:00:00+02:00"
        )
    return f"{field_path(error.get('loc', ()))}: {message}"


def summary(described: Sequence[str]) -> str:
    """The first few errors in one message: enough to fix, short enough to read."""
    message = "; ".join(described[:5])
    if len(described) > 5:
        message += f"; and {len(described) - 5} more"
    return message


class ErrorBody(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorOut(BaseModel):
    error: ErrorBody
