"""Time expressions in a question, resolved to a window against a reference time.

"what did I do last May?" asked on 10 June 2024 means May 2024; asked on 10 April 2024 it
means May 2023. Recall turns the first expression it finds into a window [start, end) in
the reference time's own timezone (calendar days are the client's, not the server's), and
ranks by it. Pure Python: English here, Chinese and Japanese in `hindsight.text.timeexpr_cjk`;
`resolve` answers None when nothing is found.

Understood (case-insensitive):
- today, tonight, this morning, yesterday, last night, the day before yesterday, tomorrow
- this / last / next week, month, year, weekend; earlier this week / month / year
- the past / last N days, weeks, months, years (a rolling window ending at the reference)
- N days / weeks / months / years ago ("two weeks ago", "a couple of months ago")
- last / this / next / in / during / since <month> ("last May", "in May": the most recent
  May that began before the reference; "last May": the most recent one that has ended)
- <month> <year> ("May 2023"), in / during <year> ("in 2023")
- a date: 3 March 2024, the 3rd of March, March 3, March 3rd, 2024, 2024-03-03 (without a
  year: the most recent one on or before the reference day)
- last / on / this past / next <weekday> ("last Monday": the most recent Monday before
  the reference day)
- last / this / in (the) spring, summer, autumn, fall, winter (northern-hemisphere
  seasons: March–May, June–August, September–November, December–February)
- "since <any of the above>": from its start to the reference time

Expressions anchored on an event ("two weeks before the wedding") are read by
`hindsight.text.anchored`: the anchor is a memory, not a date. Vague ones ("recently",
"lately", "these days") are the past 30 days, marked `vague` (recall weighs them less: a
nudge toward the recent, not a claim about when); not understood: "a while ago".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hindsight.text import dates, timeexpr_cjk
from hindsight.text.dates import Window

_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11,
    "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
# vague counts, each with how many units of slack on either side
_VAGUE = {"a couple of": (2, 1), "couple of": (2, 1), "a few": (3, 1), "few": (3, 1)}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")(?:\.|\b)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"(?P<year>(?:19|20)\d\d)(?!\d)"
_COUNT = (
    r"(?P<count>\d{1,3}|" + "|".join(sorted([*_VAGUE, *_NUMBERS], key=len, reverse=True)) + r")"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_SEASON = r"(?P<season>" + "|".join(_SEASONS) + r")"


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in the reference's timezone, and the words it was read from."""

    start: datetime
    end: datetime
    expression: str
    span: tuple[int, int]  # where the expression stands in the text
    reference: datetime  # what it was read against
    # for an expression anchored on an event (`hindsight.text.anchored`): its words, and
    # the memory found for them
    event: str | None = None
    anchor: dict[str, Any] | None = None
    # "recently": the window is a guess, which recall weighs less than a date
    vague: bool = False

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def without(self, text: str) -> str:
        """The text with the expression cut out ("what did I do last May?" -> "what did I
        do?"); the text unchanged when nothing else would be left."""
        cut = text[: self.span[0]] + " " + text[self.span[1] :]
        cut = re.sub(r"\s+([?.!,;:])", r"\1", re.sub(r"\s+", " ", cut)).strip()
        return cut if re.search(r"\w", cut) else text


Rule = Callable[[re.Match[str], datetime], Window | None]


def _count(word: str) -> tuple[int, int]:
    word = re.sub(r"\s+", " ", word.lower())
    if word in _VAGUE:
        return _VAGUE[word]
    return (int(word) if word.isdigit() else _NUMBERS[word]), 0


def _dated(m: re.Match[str], ref: datetime) -> Window | None:
    """A day of a month, with or without a year (then the latest one not after `ref`)."""
    year = int(m["year"]) if m["year"] else None
    found = dates.latest_day(ref, _MONTHS[m["month"].lower()], int(m["day"]), year)
    return None if found is None else dates.days(found, 1, ref.tzinfo)


def _iso(m: re.Match[str], ref: datetime) -> Window | None:
    found = dates.calendar_day(int(m["y"]), int(m["m"]), int(m["d"]))
    return None if found is None else dates.days(found, 1, ref.tzinfo)


def _named_month(m: re.Match[str], ref: datetime) -> Window | None:
    month, which = _MONTHS[m["month"].lower()], (m["which"] or "in").lower()
    if m["month"] == "may" and which == "this" and not m["year"]:
        return None  # "this may help": the verb, not the month
    if m["year"]:
        return dates.month(int(m["year"]), month, ref.tzinfo)
    return dates.named_month(ref, month, which if which in ("this", "next", "last") else "in")


def _in_year(m: re.Match[str], ref: datetime) -> Window:
    return dates.year(int(m["year"]), ref.tzinfo)


def _day_word(m: re.Match[str], ref: datetime) -> Window:
    back = {
        "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
        "yesterday": 1, "last night": 1, "the day before yesterday": 2, "tomorrow": -1,
    }[re.sub(r"\s+", " ", m["word"].lower())]  # fmt: skip
    return dates.days(ref.date() - timedelta(days=back), 1, ref.tzinfo)


def _unit(m: re.Match[str], ref: datetime) -> Window:
    """this / last / next / earlier this week, month, year or weekend."""
    which, unit, tz = re.sub(r"\s+", " ", m["which"].lower()), m["unit"].lower(), ref.tzinfo
    by = {"last": -1, "next": 1}.get(which, 0)
    if unit == "week":
        start = dates.midnight(dates.monday(ref.date()) + timedelta(weeks=by), tz)
        window = start, start + timedelta(weeks=1)
    elif unit == "weekend":
        monday = dates.monday(ref.date())
        # the last weekend is the latest one that is over; this one is this week's
        saturday = monday + timedelta(days=5 + 7 * by) if by >= 0 else monday - timedelta(days=2)
        window = dates.days(saturday, 2, tz)
    elif unit == "month":
        window = dates.month(*dates.shift_month(ref.year, ref.month, by), tz)
    else:
        window = dates.year(ref.year + by, tz)
    if which == "earlier this":
        return window[0], ref
    return window


def _rolling(m: re.Match[str], ref: datetime) -> Window:
    """the past / last N units: the N units up to the reference time."""
    n, slack = _count(m["count"] or "1")
    return dates.back(ref, m["unit"].lower(), n + slack), ref


def _ago(m: re.Match[str], ref: datetime) -> Window:
    """N units ago: that day, the week around that day, that calendar month or year."""
    n, slack = _count(m["count"])
    return dates.ago(ref, m["unit"].lower(), n, slack)


def _weekday(m: re.Match[str], ref: datetime) -> Window:
    target = _WEEKDAYS.index(m["weekday"].lower())
    if (m["which"] or "").lower() == "next":
        ahead = (target - ref.weekday()) % 7 or 7
        return dates.days(ref.date() + timedelta(days=ahead), 1, ref.tzinfo)
    back = (ref.weekday() - target) % 7 or 7
    return dates.days(ref.date() - timedelta(days=back), 1, ref.tzinfo)


def _season(m: re.Match[str], ref: datetime) -> Window:
    which = re.sub(r"\s+", " ", m["which"].lower())
    which = which if which in ("last", "this") else "in"
    return dates.season(ref, _SEASONS[m["season"].lower()], which)


VAGUE_DAYS = 30


def vague(m: re.Match[str], ref: datetime) -> Window:
    """ "recently", "lately", 最近: the past VAGUE_DAYS days, up to the reference time."""
    return ref - timedelta(days=VAGUE_DAYS), ref


def _rule(pattern: str, handler: Rule) -> tuple[re.Pattern[str], Rule]:
    return re.compile(pattern, re.IGNORECASE), handler


_RULES = [
    _rule(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b", _iso),
    _rule(rf"\b(?:on\s+)?(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?", _dated),
    _rule(rf"\b(?:on\s+)?{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?", _dated),
    _rule(
        rf"\b(?:(?P<which>last|this|next|in|during|since|back in|early|late|mid)[\s-]+)?"
        rf"{_MONTH}(?:\s+(?:of\s+)?{_YEAR})",
        _named_month,
    ),
    _rule(
        rf"\b(?P<which>last|this|next|in|during|since|back in|early|late|mid)[\s-]+{_MONTH}"
        r"(?P<year>)",
        _named_month,
    ),
    _rule(rf"\b(?:in|during|throughout|since|back in)\s+{_YEAR}", _in_year),
    _rule(
        r"\b(?P<word>the\s+day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|"
        r"last\s+night|this\s+(?:morning|afternoon|evening))\b",
        _day_word,
    ),
    _rule(
        rf"\b(?:in\s+|over\s+|during\s+)?the\s+(?:past|last)\s+(?:{_COUNT}\s+)?{_UNIT}\b",
        _rolling,
    ),
    _rule(rf"\b(?:in\s+|over\s+)?(?:the\s+)?past\s+(?:{_COUNT}\s+)?{_UNIT}\b", _rolling),
    _rule(rf"\blast\s+{_COUNT}\s+{_UNIT}\b", _rolling),
    _rule(
        r"\b(?P<which>earlier\s+this|this|last|next)\s+(?P<unit>weekend|week|month|year)\b",
        _unit,
    ),
    _rule(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", _ago),
    _rule(rf"\b(?:(?P<which>last|this\s+past|on|next)\s+){_WEEKDAY}\b", _weekday),
    _rule(rf"\b(?P<which>last|this|in|during|in\s+the|over\s+the)\s+{_SEASON}\b", _season),
    _rule(
        r"\b(?:recently|lately|of\s+late|these\s+days|in\s+recent\s+(?:days|weeks|times))\b", vague
    ),
]
_SINCE = re.compile(r"\bsince\s+$", re.IGNORECASE)


def resolve(text: str, reference: datetime | None = None) -> TimeWindow | None:
    """The first time expression in `text` as a window, or None. `reference` is when the
    question is asked (default: now, UTC); a naive one is taken as UTC."""
    ref = reference or datetime.now(UTC)
    if ref.tzinfo is None:
        ref = ref.replace(tzinfo=UTC)
    found: list[tuple[int, int, Window, Rule]] = []
    for pattern, handler in [*_RULES, *timeexpr_cjk.RULES, (timeexpr_cjk.VAGUE, vague)]:
        for m in pattern.finditer(text):
            try:
                window = handler(m, ref)
            except (ValueError, OverflowError):  # past the calendar's ends (year 1 or 9999)
                continue
            if window is not None and window[0] < window[1]:
                found.append((m.start(), m.end(), window, handler))
    if not found:
        return None
    start, end, (lo, hi), handler = min(found, key=lambda f: (f[0], -f[1]))
    since = _SINCE.search(text, 0, start) or timeexpr_cjk.SINCE_BEFORE.search(text, 0, start)
    if since is not None:
        start = since.start()
    until_now = timeexpr_cjk.SINCE_AFTER.match(text, end)
    if until_now is not None:
        end = until_now.end()
    since_start = re.match(r"since\b", text[start:], re.IGNORECASE)
    if (since is not None or until_now is not None or since_start) and lo < ref:
        hi = ref
    expression = text[start:end].strip()
    return TimeWindow(lo, hi, expression, (start, end), ref, vague=handler is vague)
