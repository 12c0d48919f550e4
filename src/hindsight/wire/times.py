"""The wire types about when things happened: `occurred_at` on memories and steps, and the
time window recall read from a query.

Every time must carry a timezone (a naive one is a 422 saying to add one): "10:00" means
nothing to a service whose clients live in many zones.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, Field


def in_utc(moment: datetime | None) -> datetime | None:
    # PostgreSQL refuses offsets past ±15:59, which ISO 8601 lets a client send
    if moment is None:
        return None
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("is out of range once in UTC") from None


# a bound on when memories occurred, compared in SQL
UtcTime = Annotated[AwareDatetime | None, AfterValidator(in_utc)]

OccurredAt = Annotated[
    AwareDatetime | None,
    AfterValidator(in_utc),
    Field(
        description="When the thing happened (ISO 8601 with a timezone), as opposed to when "
        "it was recorded. Unset: unknown; time filters and the time factor then use "
        "created_at."
    ),
]


class TimeWindowOut(BaseModel):
    start: datetime = Field(description="The window's start (inclusive).")
    end: datetime = Field(description="Its end (exclusive).")
    expression: str = Field(description="The words of the query it was read from.")
    reference_time: datetime = Field(description="The time it was read against.")
    searched_query: str = Field(description="The query the search arms were given.")
    event: str | None = Field(
        default=None,
        description='For a time anchored on an event ("two weeks before the wedding"): '
        "the words naming the event.",
    )
    anchor: TimeAnchorOut | None = Field(
        default=None, description="The memory found for the event, whose time anchors it."
    )
    vague: bool = Field(
        default=False,
        description='A vague time ("recently", 最近): the past 30 days, weighed at '
        "HINDSIGHT_VAGUE_TIME_STRENGTH of a date's weight.",
    )


class TimeAnchorOut(BaseModel):
    id: str = Field(description="The anchoring memory.")
    key: str
    time: datetime = Field(description="When it occurred (else was created).")
