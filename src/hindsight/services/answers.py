"""What the services' results look like on the wire: the answers REST returns and MCP tools
give, built in one place so the two can never say different things about the same result.
"""

from __future__ import annotations

import uuid
from typing import Any

from hindsight.services.auth import Principal
from hindsight.services.extraction import Extraction
from hindsight.services.observing import Outcome
from hindsight.services.recall import RecallResult
from hindsight.services.sessions import Context
from hindsight.text.secrets import marker_counts
from hindsight.wire.extraction import Dropped, Extracted, ExtractOut
from hindsight.wire.memories import (
    ForgetIn,
    ForgetOut,
    HistoryEntry,
    HistoryOut,
    MemoryOut,
    ObserveResult,
    Rejected,
    Whoami,
)
from hindsight.wire.recall import Components, ConversationOut, RecallHit, RecallOut
from hindsight.wire.sessions import ContextOut, EarlierStep, JobOut, SessionEnded, StepOut
from hindsight.wire.times import TimeAnchorOut, TimeWindowOut


def observe_result(o: Outcome) -> ObserveResult:
    return ObserveResult(
        id=o.id,
        key=o.key,
        outcome=o.outcome,  # type: ignore[arg-type]
        confidence=o.confidence,
        observation_count=o.observation_count,
        memory_type=o.memory_type,  # type: ignore[arg-type]
        requested_key=o.requested_key,
        similarity=o.similarity,
        redactions=o.redactions,
        trust=o.trust,
        confidence_capped=o.confidence_capped,
        reason=o.reason,
        importance=o.importance,
        importance_by=o.importance_by,  # type: ignore[arg-type]
    )


def recall_out(result: RecallResult, query: str) -> RecallOut:
    out = RecallOut(
        recall_id=result.recall_id,
        results=[
            RecallHit.model_validate(
                {**r.row, "score": r.score, "components": Components(**r.components)}
            )
            for r in result.results
        ],
        vector_skipped=result.vector_skipped,
        rerank_skipped=result.rerank_skipped,
        conversation=(
            None if result.conversation is None else ConversationOut(**result.conversation)
        ),
    )
    window = result.time_window
    if window is not None:
        out.time_window = TimeWindowOut(
            start=window.start,
            end=window.end,
            expression=window.expression,
            reference_time=window.reference,
            searched_query=result.searched_query or query,
            event=window.event,
            anchor=None if window.anchor is None else TimeAnchorOut(**window.anchor),
            vague=window.vague,
        )
    return out


def history_out(memory_id: uuid.UUID, rows: list[dict[str, Any]]) -> HistoryOut:
    entries = []
    for r in rows:
        deleted = r["change"] in ("deleted", "expired")
        entries.append(
            HistoryEntry(
                **r,
                value=r["old_value"] if deleted else r["new_value"],
                confidence=r["old_confidence"] if deleted else r["new_confidence"],
                redactions=marker_counts(r["new_value"]),
            )
        )
    return HistoryOut(memory_id=memory_id, history=entries)


def rejected(memory_id: uuid.UUID, note: str | None) -> Rejected:
    return Rejected(id=memory_id, reason="rejected by a curator" + (f": {note}" if note else ""))


def forget_out(body: ForgetIn, rows: list[dict[str, Any]]) -> ForgetOut:
    return ForgetOut(
        dry_run=body.dry_run,
        action=body.action,
        count=len(rows),
        memories=[MemoryOut.model_validate(r) for r in rows],
    )


def extract_out(extraction: Extraction, dry_run: bool) -> ExtractOut:
    kept = extraction.distilled.kept
    outcomes: list[Outcome | None] = (
        list(extraction.outcomes) if extraction.outcomes is not None else [None] * len(kept)
    )
    return ExtractOut(
        model=extraction.model,
        dry_run=dry_run,
        memories=[
            Extracted(
                key=k.observation.key,
                value=k.observation.value,
                memory_type=k.observation.memory_type,
                importance=k.observation.importance,
                tags=list(k.observation.tags),
                occurred_at=k.observation.occurred_at,
                action=k.action,
                result=observe_result(o) if o is not None else None,
            )
            for k, o in zip(kept, outcomes, strict=True)
        ],
        dropped=[Dropped(**d) for d in extraction.distilled.dropped],
        existing_memories_shown=extraction.distilled.existing_shown,
    )


def step_out(session_id: str, row: dict[str, Any]) -> StepOut:
    redactions = marker_counts(row["content"], row["summary"])
    return StepOut.model_validate({**row, "session_id": session_id, "redactions": redactions})


def context_out(session_id: str, ctx: Context) -> ContextOut:
    return ContextOut(
        session_id=session_id,
        recent=[step_out(session_id, r) for r in ctx.recent],
        earlier=[EarlierStep.model_validate(e) for e in ctx.earlier],
        omitted_steps=ctx.omitted,
    )


def job_out(row: dict[str, Any]) -> JobOut:
    return JobOut.model_validate({**row, "job_id": row["id"]})


def session_ended(row: dict[str, Any], job: dict[str, Any]) -> SessionEnded:
    return SessionEnded.model_validate(
        {**row, "step_count": row["next_step"], "consolidation": job_out(job)}
    )


def whoami(principal: Principal) -> Whoami:
    namespaces = (
        None if principal.namespaces is None or principal.is_admin else sorted(principal.namespaces)
    )
    return Whoami(
        name=principal.name,
        namespaces=namespaces,
        is_admin=principal.is_admin,
        role=principal.role.value,
    )
