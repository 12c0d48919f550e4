"""Time expressions anchored on an event: "two weeks before the wedding", "the month after
Mia adopted the beagle", "since the move". Pure: the anchor is a memory, which recall finds
(a search for the event's words) and whose `occurred_at` (else `created_at`) this module
turns into a window.

Understood (case-insensitive), where N is a number word or digits and the unit is day,
week, month or year:
- N units before / after <event>: the Nth unit before the event's day ("a week before":
  the seven days up to it; "two weeks before": the seven days before those), or after it
- the unit before / after <event> (N = 1)
- since <event>: from the event's day to the reference time

The event is the rest of the clause: the words up to the next punctuation mark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from hindsight.text.dates import back, midnight
from hindsight.text.timeexpr import _COUNT, TimeWindow, _count

_EVENT = r"(?P<event>[^?.!,;:]*\w)"
_OFFSET = re.compile(
    rf"\b(?:(?:in|during|over)\s+)?(?:the\s+)?(?:{_COUNT}\s+)?(?P<unit>day|week|month|year)s?"
    rf"\s+(?P<dir>before|after)\s+{_EVENT}",
    re.IGNORECASE,
)
_SINCE = re.compile(rf"\b(?P<dir>since)\s+{_EVENT}", re.IGNORECASE)


@dataclass(frozen=True)
class Anchored:
    """An expression read from a query, waiting for its anchor's time."""

    event: str  # the words that name the event ("the wedding")
    count: int
    unit: str  # day, week, month or year; "" for since
    direction: str  # before, after or since
    expression: str
    span: tuple[int, int]

    def window(self, anchor: datetime, reference: datetime) -> TimeWindow | None:
        """The window, given when the event occurred; None when it would be empty."""
        tz = reference.tzinfo
        day = midnight(anchor.astimezone(tz).date(), tz)
        if self.direction == "since":
            start, end = day, reference
        elif self.direction == "before":
            start = back(day, self.unit, self.count)
            end = back(day, self.unit, self.count - 1)
        else:
            after = day + timedelta(days=1)
            start = back(after, self.unit, 1 - self.count)
            end = back(after, self.unit, -self.count)
        if start >= end:
            return None
        return TimeWindow(start, end, self.expression, self.span, reference, self.event)


def find(text: str) -> Anchored | None:
    """The first event-anchored expression in `text`, or None."""
    m = _OFFSET.search(text) or _SINCE.search(text)
    if m is None:
        return None
    groups = m.groupdict()
    count = _count(groups["count"])[0] if groups.get("count") else 1
    event = re.sub(r"\s+", " ", m["event"]).strip()
    return Anchored(
        event=event,
        count=count,
        unit=(groups.get("unit") or "").lower(),
        direction=m["dir"].lower(),
        expression=m[0].strip(),
        span=(m.start(), m.end()),
    )
