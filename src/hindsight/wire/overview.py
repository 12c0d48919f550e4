"""Response bodies of the operator's read endpoints (namespaces, recall log, sessions)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from hindsight.wire.recall import RecallLogOut
from hindsight.wire.sessions import JobOut, SessionOut


class NamespaceSummary(BaseModel):
    namespace: str
    memories: dict[str, int] = Field(description="Memories per status.")
    open_sessions: int = Field(description="Active sessions not yet expired.")
    recalls_last_hour: int
    recalls_last_day: int
    capacity: int = Field(description="Soft cap on active memories (its policy's).")


class NamespacesOut(BaseModel):
    namespaces: list[NamespaceSummary]


class RecallHour(BaseModel):
    hour: datetime
    recalls: int
    mean_ms: float | None


class NamespaceStats(NamespaceSummary):
    recalls_by_hour: list[RecallHour] = Field(description="Last 24 hours, oldest first.")
    capacity: int = Field(description="Soft cap on active memories (the namespace's policy).")
    over_capacity: bool
    warnings: list[str]
    last_lifecycle_pass: datetime | None
    last_capacity_archived: int = Field(description="Archived by the last capacity pass.")


class RecallLogPage(BaseModel):
    recalls: list[RecallLogOut]
    next_cursor: uuid.UUID | None = Field(description="Pass as `cursor` for older recalls.")


class SessionsOut(BaseModel):
    sessions: list[SessionOut]


class SessionJobsOut(BaseModel):
    session_id: str
    jobs: list[JobOut] = Field(description="Newest first.")


def summary(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "memories": {k: int(v) for k, v in row["memories"].items()}}
