"""Distillation: from a conversation (or a session's steps) to the memories worth keeping.

Shared by extraction (a conversation sent by the client) and consolidation (a session's
working memory). Before asking the LLM it recalls the existing memories the conversation
touches and shows them, so a repeated fact becomes a reinforcement and a changed fact a
supersession of the same key, instead of a near-duplicate under a new key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hindsight import limits
from hindsight.llm import LLM
from hindsight.llm.prompts import DISTILL_SYSTEM, distill_user, trusted
from hindsight.services.observing import Observation
from hindsight.services.recall import RecallRequest, RecallService
from hindsight.text.filler import is_filler
from hindsight.text.secrets import redactor

_RELATED_WINDOWS = 10
_RELATED_PER_WINDOW = 5
TRANSCRIPT_MAX_CHARS = 60_000


class Candidate(BaseModel):
    """One memory as the LLM proposes it. Lenient on purpose: a model's small slips
    (an unknown type, importance out of range) are corrected, not fatal."""

    action: Literal["new", "reinforce", "update"] = "new"
    key: str = ""
    value: str = ""
    memory_type: str = "fact"
    importance: float = 0.5
    tags: list[str] = Field(default_factory=list)
    # indexes of the transcript messages it was drawn from, as the model reports them
    sources: list[int] = Field(default_factory=list, alias="from")
    occurred_at: datetime | None = None

    model_config = ConfigDict(populate_by_name=True)

    @field_validator("sources", mode="before")
    @classmethod
    def _sources(cls, v: Any) -> list[int]:
        if not isinstance(v, list):
            return []
        return [i for i in v if isinstance(i, int) and not isinstance(i, bool)]

    @field_validator("occurred_at", mode="before")
    @classmethod
    def _occurred(cls, v: Any) -> datetime | None:
        """ISO 8601 time or date; a naive one is taken as UTC; anything else: unknown."""
        if isinstance(v, datetime):
            moment = v
        elif isinstance(v, str) and v.strip():
            text = v.strip().replace("Z", "+00:00").replace("z", "+00:00")
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                try:
                    day = date.fromisoformat(text[:10])
                except ValueError:
                    return None
                moment = datetime(day.year, day.month, day.day)
        else:
            return None
        if not 1900 <= moment.year <= 2200:
            return None
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)

    @field_validator("memory_type", mode="before")
    @classmethod
    def _type(cls, v: Any) -> str:
        text = str(v or "fact").strip().lower()
        return text if text in limits.MEMORY_TYPES else "fact"

    @field_validator("importance", mode="before")
    @classmethod
    def _importance(cls, v: Any) -> float:
        try:
            return min(1.0, max(0.0, float(v)))
        except (TypeError, ValueError):
            return 0.5

    @field_validator("key", "value", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return str(v or "").replace("\x00", "").strip()

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, v: Any) -> list[str]:
        if not isinstance(v, list):
            return []
        clean = [str(t).replace("\x00", "").strip()[: limits.TAG_MAX_CHARS] for t in v]
        return [t for t in clean if t][: limits.TAGS_MAX]


class DistillOut(BaseModel):
    memories: list[Candidate] = Field(default_factory=list)


@dataclass(frozen=True)
class Kept:
    observation: Observation
    action: str


@dataclass
class Distilled:
    kept: list[Kept] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    existing_shown: int = 0


def _said_in(value: str, content: str) -> bool:
    """Whether a message holds the value, as sent or as the model read it: text bound for
    the LLM is redacted first, so a value drawn from a secret holds the marker instead."""
    value = value.lower()
    if value in content.lower():
        return True
    return "[redacted:" in value and value in redactor().redact(content)[0].lower()


def provenance(c: Candidate, transcript: list[dict[str, Any]]) -> str | None:
    """The role of the untrusted message (tool, web, ...) a candidate was drawn from, or
    None when trusted messages support it. Checked against the text, not only taken from
    the model's `from`: a model fooled by a tool's output may misreport that too."""
    claimed = [transcript[i] for i in c.sources if 0 <= i < len(transcript)]
    holding = [m for m in transcript if c.value and _said_in(c.value, m["content"])]
    untrusted = [m for m in claimed + holding if not trusted(m["role"])]
    if not untrusted or any(trusted(m["role"]) for m in holding):
        return None
    return str(untrusted[0]["role"]).lower()


def screen(
    candidates: list[Candidate],
    *,
    min_importance: float,
    source: str | None,
    transcript: list[dict[str, Any]] | None = None,
) -> Distilled:
    """Keep what is worth keeping, with the reason for everything dropped. A memory drawn
    from an untrusted message of `transcript` takes that message's role as its source."""
    out = Distilled()
    seen: set[tuple[str, str]] = set()
    for c in candidates:
        reason = None
        if not c.key or not c.value:
            reason = "empty key or value"
        elif len(c.key) > limits.KEY_MAX_CHARS or len(c.value) > limits.VALUE_MAX_CHARS:
            reason = "key or value too long"
        elif is_filler(c.value):
            reason = "greeting or filler"
        elif c.importance < min_importance:
            reason = f"importance {c.importance:.2f} below {min_importance:.2f}"
        elif (c.key, c.value) in seen:
            reason = "repeated"
        if reason is not None:
            out.dropped.append({"key": c.key, "value": c.value, "reason": reason})
            continue
        seen.add((c.key, c.value))
        origin = provenance(c, transcript) if transcript else None
        out.kept.append(
            Kept(
                Observation(
                    key=c.key,
                    value=c.value,
                    memory_type=c.memory_type,
                    source=origin or source,
                    importance=c.importance,
                    tags=tuple(c.tags),
                    occurred_at=c.occurred_at,
                ),
                c.action,
            )
        )
    return out


class Distiller:
    def __init__(self, llm: LLM, recall: RecallService) -> None:
        self._llm = llm
        self._recall = recall

    async def related(
        self, namespace: str, transcript: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Existing memories the conversation touches: recall over a sliding window of
        messages, without counting these lookups as accesses."""
        found: dict[Any, dict[str, Any]] = {}
        messages = transcript[-_RELATED_WINDOWS * 3 :]
        for start in range(0, len(messages), 3):
            query = " ".join(m["content"] for m in messages[start : start + 3])[
                : limits.QUERY_MAX_CHARS
            ]
            # messages are not questions: a date said in them is no window to rank by
            request = RecallRequest(query, k=_RELATED_PER_WINDOW, resolve_time=False)
            for hit in (await self._recall.rank(namespace, request)).results:
                found.setdefault(hit.row["id"], hit.row)
        return list(found.values())

    async def distill(
        self,
        namespace: str,
        transcript: list[dict[str, Any]],
        *,
        min_importance: float,
        source: str | None,
        now: datetime | None = None,
    ) -> Distilled:
        """`transcript`: messages with role and content, and `at` (ISO 8601) when it is known
        when each was said; `now`: the time relative words are read against otherwise."""
        existing = await self.related(namespace, transcript)
        trimmed = _trim(transcript)
        answer = await self._llm.complete_json(
            DISTILL_SYSTEM,
            distill_user(trimmed, existing, now or datetime.now(UTC)),
            DistillOut,
        )
        out = screen(
            answer.memories, min_importance=min_importance, source=source, transcript=trimmed
        )
        out.existing_shown = len(existing)
        return out


def _trim(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest messages that fit the prompt budget, in order."""
    kept: list[dict[str, Any]] = []
    total = 0
    for message in reversed(transcript):
        total += len(message["content"])
        if total > TRANSCRIPT_MAX_CHARS and kept:
            break
        kept.append(message)
    kept.reverse()
    return kept
