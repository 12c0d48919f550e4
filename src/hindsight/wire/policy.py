"""The namespace policy document: the rules a namespace may tune, as PUT and GET carry it.

Sections: `lifecycle` (when memories cool, archive, are deleted, demoted and merged),
`ranking` (tier weights, the optional recency, importance and trust factors, and the weight
of a time window read from the query), `capacity`, `trust` (how far each source is trusted,
and below what it is quarantined) and `redaction` (what happens to secrets and personal
data written to the namespace). Every field is optional in a PUT: what is not set takes the
server's default, the HINDSIGHT_* setting that names the field (`hindsight.config`), which
takes its bounds and meaning from here, so each is written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

from hindsight import limits
from hindsight.wire.fields import MemoryType, clean_text

_DAYS = 36_500


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Retention(_Section):
    """How one kind of memory (a memory type, or a tag) ages: each field unset takes the
    namespace's own."""

    cold_after_days: float | None = Field(default=None, gt=0, le=_DAYS)
    archive_after_days: float | None = Field(default=None, gt=0, le=_DAYS)
    archive_below_importance: float | None = Field(default=None, ge=0, le=1)
    delete_below_importance: float | None = Field(default=None, ge=0, le=1)
    delete_after_days: float | None = Field(default=None, gt=0, le=_DAYS)


class LifecyclePolicy(_Section):
    cold_after_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="No access or observation this long: cold."
    )
    archive_after_days: float | None = Field(
        default=None,
        gt=0,
        le=_DAYS,
        description="No access or observation this long, and importance under "
        "archive_below_importance: archived.",
    )
    archive_below_importance: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Only an idle memory of importance under this is archived; a more "
        "important one stays cold, recallable (1: whatever its importance).",
    )
    delete_below_importance: float | None = Field(
        default=None, ge=0, le=1, description="Importance under this (0: never) and ..."
    )
    delete_after_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="... not accessed this long: deleted."
    )
    low_confidence_below: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A periodic pass archives never-recalled memories under this confidence "
        "(0: never) that are older than one period.",
    )
    low_confidence_every_days: float | None = Field(
        default=None, gt=0, le=_DAYS, description="The period of that pass."
    )
    session_demotion_delay_seconds: int | None = Field(
        default=None, ge=0, le=_DAYS * 86400, description="After a session ends, this long..."
    )
    session_demotion_factor: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="... its event and experience memories' importance is multiplied by this.",
    )
    write_below_importance: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A direct write the client sent without an importance, whose rating "
        "(the LLM's when one is configured, else the built-in estimate: greetings, thanks, "
        "acknowledgements and other filler 0.1) is under this, is stored cold or dropped, as "
        "write_below_importance_action says (0: never).",
    )
    write_below_importance_action: Literal["cold", "drop"] | None = Field(
        default=None,
        description="cold: stored, as a cold memory (outcome `stored_cold`); drop: not "
        "stored at all (outcome `dropped`, no id).",
    )
    merge_per_run: int | None = Field(
        default=None,
        ge=0,
        le=100_000,
        description="Memories the retroactive merge checks per pass (0: off).",
    )
    reflection_per_run: int | None = Field(
        default=None,
        ge=0,
        le=100_000,
        description="Reflection in each pass (0: off): at most this many pairs under the same "
        "subject checked for contradictions (settled as at write time), and, with an LLM "
        "configured, the patterns this many recent memories show distilled as memories of "
        "source `reflection`.",
    )
    by_type: dict[MemoryType, Retention] | None = Field(
        default=None,
        max_length=7,
        description="Retention per memory type: {type: {cold_after_days, "
        "archive_after_days, archive_below_importance, delete_below_importance, "
        "delete_after_days}}, each field left out the namespace's own.",
    )
    by_tag: dict[str, Retention] | None = Field(
        default=None,
        max_length=50,
        description="Retention per tag, the same fields, over by_type: a memory with "
        "several such tags follows the first of them listed here.",
    )

    @field_validator("by_tag")
    @classmethod
    def _tags(cls, value: dict[str, Retention] | None) -> dict[str, Retention] | None:
        for tag in value or {}:
            if not tag.strip() or len(tag) > limits.TAG_MAX_CHARS:
                raise ValueError(
                    f"tag {tag[:40]!r}: must be 1 to {limits.TAG_MAX_CHARS} characters"
                )
            clean_text(tag)
        return value


class TierWeights(_Section):
    active: float | None = Field(
        default=None, ge=0, le=1, description="Score factor of an active memory in recall."
    )
    cold: float | None = Field(
        default=None, ge=0, le=1, description="Score factor of a cold memory in recall."
    )


class RankingPolicy(_Section):
    tier_weights: TierWeights | None = None
    recency_weight: float | None = Field(
        default=None, ge=0, le=1, description="Weight w of recency: factor 1 − w + w·exp(−age/τ)."
    )
    recency_tau_days: float | None = Field(default=None, gt=0, le=_DAYS, description="τ.")
    importance_weight: float | None = Field(
        default=None, ge=0, le=1, description="Weight w of importance: factor 1 − w + w·importance."
    )
    trust_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Weight w of the source's trust: factor 1 − w + w·trust (0: no effect).",
    )
    time_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Weight w of a time window read from the query: memories that occurred "
        "outside it score × (1 − w) (0: no effect).",
    )


class CapacityPolicy(_Section):
    max_active_memories: int | None = Field(
        default=None, ge=1, le=1_000_000_000, description="Soft cap on active memories."
    )


class TrustPolicy(_Section):
    sources: dict[str, float] | None = Field(
        default=None,
        description="Trust (0..1) per source name; a PUT adds to or overrides the defaults.",
    )
    default: float | None = Field(
        default=None, ge=0, le=1, description="Trust of any other source name, and of none."
    )
    quarantine_below: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A claim from a source trusted less than this waits for review.",
    )
    echo_window_seconds: float | None = Field(
        default=None,
        ge=0,
        le=30 * 86_400,
        description="An observation of a memory that recall returned to the same API key "
        "this many seconds before, with no new source, is an echo: it changes nothing "
        "(outcome `echoed`). 0: every re-observation reinforces.",
    )
    contradiction_similarity: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A new key naming the same attribute of the same subject as a live "
        "memory (`user.language` / `user.main_language`), at least this similar to it, with "
        "another claim, contradicts it: the newer supersedes the older when its source is "
        "trusted at least as much, else both wait for review (0: off).",
    )

    @field_validator("sources")
    @classmethod
    def _levels(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for name, level in (value or {}).items():
            if not name.strip() or len(name) > 200:
                raise ValueError(f"source name {name[:40]!r}: must be 1 to 200 characters")
            clean_text(name)
            if not 0 <= level <= 1:
                raise ValueError(f"{name}: trust must be between 0 and 1")
        return value

    def of(self, source: str | None) -> float:
        """The trust of `source` (`source_trust`)."""
        assert self.default is not None
        return source_trust(self.sources or {}, self.default, source)


# the most a writer's own source label is trusted: as much as an agent, whatever it names
WRITER_SOURCE_CAP = "agent"


def source_trust(levels: Mapping[str, float], default: float, source: str | None) -> float:
    """The trust of `source`: its own level, else that of the name before its first colon
    (`session:42` is a `session`), else `default` (also for no source)."""
    if source is None:
        return default
    level = levels.get(source)
    if level is None and ":" in source:
        level = levels.get(source.split(":", 1)[0])
    return default if level is None else level


class RedactionPolicy(_Section):
    mode: Literal["redact", "reject", "off"] | None = Field(
        default=None,
        description="redact: secrets are replaced with [REDACTED:kind]; reject: a write "
        "holding one is refused (422, nothing stored); off: text is stored as sent.",
    )
    email: bool | None = Field(default=None, description="Also treat e-mail addresses so.")
    phone: bool | None = Field(default=None, description="Also treat phone numbers so.")


class Policy(_Section):
    """The document as PUT and as GET returns it (GET: every field filled in)."""

    lifecycle: LifecyclePolicy | None = None
    ranking: RankingPolicy | None = None
    capacity: CapacityPolicy | None = None
    trust: TrustPolicy | None = None
    redaction: RedactionPolicy | None = None


def field_info(path: str) -> FieldInfo:
    """The field at a dotted path of the document, e.g. `lifecycle.cold_after_days`."""
    model: type[BaseModel] = Policy
    *sections, name = path.split(".")
    for section in sections:
        annotation = model.model_fields[section].annotation
        # a section is `Model | None`
        model = next(
            a
            for a in getattr(annotation, "__args__", (annotation,))
            if isinstance(a, type) and issubclass(a, BaseModel)
        )
    return model.model_fields[name]
