"""How an MCP tool turns its call into a result: ids checked before they go into a URL,
errors as tool errors with the message REST gives, models as JSON."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

import psycopg
from mcp.server.mcpserver.exceptions import ToolError
from psycopg_pool import PoolTimeout
from pydantic import BaseModel

from hindsight.client import APIError, TransportError
from hindsight.errors import HindsightError

T = TypeVar("T")


def checked_id(value: str) -> str:
    """A memory id as it goes into a URL: a UUID, never a path (`../sessions/x`)."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ToolError(
            f"memory_id: {value[:80]!r} is not a memory id; pass the `id` (a UUID) that "
            "observe or recall returned"
        ) from None


async def answered(awaitable: Awaitable[T]) -> T:
    """The service's errors (raised in this process, or answered by a remote service)
    become tool errors with the same message; the session lives on."""
    try:
        return await awaitable
    except (APIError, HindsightError) as exc:
        raise ToolError(exc.message) from exc
    except TransportError as exc:
        raise ToolError(f"the Hindsight service is unreachable: {exc}") from exc
    except (psycopg.OperationalError, PoolTimeout) as exc:
        raise ToolError("PostgreSQL is unreachable or busy; try again shortly") from exc


def dump(value: BaseModel | Sequence[BaseModel] | None) -> Any:
    if value is None:
        return {"ok": True}
    if isinstance(value, Sequence):
        return [v.model_dump(mode="json") for v in value]
    return value.model_dump(mode="json")


def given(**values: Any) -> dict[str, Any]:
    """Only the options the caller set, so REST applies its own defaults."""
    return {k: v for k, v in values.items() if v is not None}
