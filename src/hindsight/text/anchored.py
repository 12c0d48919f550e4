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

# Chinese and Japanese: the time words are found first, and the event is the clause next to
# them (back to the previous punctuation mark, at most _CJK_EVENT_MAX characters). A pattern
# that matched the event too had to try every start in a long unpunctuated query: 0.8 s for
# 4,000 characters of Chinese.
_CJK_EVENT_MAX = 40
_CJK_BREAK = re.compile(r"[，。？！、；：,.?!;:\s]")
_CJK_OFFSETS = [
    re.compile(rf"(?:之|以)?(?P<dir>前|后|後)[的の]?那?{cjk.COUNT}?{cjk.UNIT}(?:里|裡|内|內)?"),
    re.compile(rf"の{cjk.COUNT}?{cjk.UNIT}(?P<dir>前|後)"),
    re.compile(rf"(?:て|で)から(?:の)?{cjk.COUNT}?{cjk.UNIT}(?:間)?"),
]
_CJK_SINCE_AFTER = re.compile(r"以来|以來|以降|(?:て|で)から")
_CJK_SINCE_BEFORE = re.compile(r"自从|自從")
# after 自从 <event>, what ends the event
_CJK_SINCE_END = re.compile(r"以来|以來|之后|之後|以后|以後|后|後")
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


def _clause_before(text: str, end: int) -> str:
    start = max(0, end - _CJK_EVENT_MAX)
    breaks = [m.end() for m in _CJK_BREAK.finditer(text, start, end)]
    return text[breaks[-1] if breaks else start : end]


def _find_cjk(text: str) -> Anchored | None:
    for pattern in _CJK_OFFSETS:
        for m in pattern.finditer(text):
            event = _clause_before(text, m.start())
            if len(event) < 2:
                continue
            count = cjk.number(m["count"])[0] if m["count"] else 1
            direction = _DIRECTIONS[m.groupdict().get("dir") or "后"]
            return Anchored(event, count, cjk.UNITS[m["unit"]], direction, m[0], m.span())
    since = _CJK_SINCE_BEFORE.search(text)
    if since is not None:
        clause = text[since.end() : since.end() + _CJK_EVENT_MAX]
        stop = _CJK_BREAK.search(clause)
        clause = clause[: stop.start()] if stop else clause
        end = _CJK_SINCE_END.search(clause, 2)
        event = clause[: end.start()] if end else clause
        if len(event) >= 2:
            # the time word after the event, else 自从 before it
            span = (since.end() + end.start(), since.end() + end.end()) if end else since.span()
            return Anchored(event, 1, "", "since", text[span[0] : span[1]], span)
    for m in _CJK_SINCE_AFTER.finditer(text):
        event = _clause_before(text, m.start())
        if len(event) >= 2:
            return Anchored(event, 1, "", "since", m[0], m.span())
    return None
