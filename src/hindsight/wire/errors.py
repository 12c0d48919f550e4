"""The one shape every error takes on the wire: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

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


class ErrorBody(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorOut(BaseModel):
    error: ErrorBody
