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

Chinese and Japanese put the event first, and the rest of the clause before the time:
- <event>(之)前 / (之)后的 N 天, 周, 个月, 年 ("婚礼前一周", "领养小狗之后的一个月"); Japanese
  <event>の N 日 / 週間 / ヶ月 / 年 前 / 後 ("結婚式の一週間前"), <event>後の N units
  ("猫を飼い始めた後の一ヶ月")
- 自从 <event> (以来 / 之后), <event>以来; Japanese <event>てから (since), <event>てから
  N units (after)
There the event often holds the question's only subject ("小明领养小狗之后的一个月做了什么"),
so the expression is the time words only: what `TimeWindow.without` cuts from a query
(recall's `time_strip_query`) leaves the event's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from hindsight.text import timeexpr_cjk as cjk
from hindsight.text.dates import back, midnight
from hindsight.text.timeexpr import _COUNT, TimeWindow, _count

_EVENT = r"(?P<event>[^?.!,;:]*\w)"
_OFFSET = re.compile(
    rf"\b(?:(?:in|during|over)\s+)?(?:the\s+)?(?:{_COUNT}\s+)?(?P<unit>day|week|month|year)s?"
    rf"\s+(?P<dir>before|after)\s+{_EVENT}",
    re.IGNORECASE,
)
_SINCE = re.compile(rf"\b(?P<dir>since)\s+{_EVENT}", re.IGNORECASE)

# the clause before the time words (lazy: the first 前 / 后 that a unit follows ends it)
_CJK_EVENT = r"(?P<event>[^，。？！、；：,.?!;:\s]{2,}?)"
_CJK_OFFSET = re.compile(
    rf"{_CJK_EVENT}(?P<time>(?:之|以)?(?P<dir>前|后|後)[的の]?那?{cjk.COUNT}?{cjk.UNIT}"
    r"(?:里|裡|内|內)?)"
)
_JA_OFFSET = re.compile(rf"{_CJK_EVENT}(?P<time>の{cjk.COUNT}?{cjk.UNIT}(?P<dir>前|後))")
_JA_AFTER = re.compile(rf"{_CJK_EVENT}(?P<time>(?:て|で)から(?:の)?{cjk.COUNT}?{cjk.UNIT}(?:間)?)")
_CJK_SINCE = re.compile(
    rf"(?P<since>自从|自從){_CJK_EVENT}(?P<time>以来|以來|之后|之後|以后|以後|后|後)?"
    rf"|{_CJK_EVENT.replace('event', 'event2')}(?P<time2>以来|以來|以降|(?:て|で)から)"
)
_DIRECTIONS = {"前": "before", "后": "after", "後": "after"}


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
        return _find_cjk(text)
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


def _find_cjk(text: str) -> Anchored | None:
    for pattern in (_CJK_OFFSET, _JA_OFFSET, _JA_AFTER):
        m = pattern.search(text)
        if m is not None:
            count = cjk.number(m["count"])[0] if m["count"] else 1
            direction = _DIRECTIONS.get(m.groupdict().get("dir") or "后", "after")
            span = m.span("time")
            return Anchored(
                m["event"], count, cjk.UNITS[m["unit"]], direction, text[span[0] : span[1]], span
            )
    m = _CJK_SINCE.search(text)
    if m is None:
        return None
    event, time = ("event", "time") if m["since"] else ("event2", "time2")
    # the time word after the event, else 自从 before it
    span = m.span(time) if m[time] else m.span("since")
    return Anchored(m[event], 1, "", "since", text[span[0] : span[1]], span)
