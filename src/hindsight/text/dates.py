"""Calendar arithmetic shared by the time-expression readers (English in `timeexpr`,
Chinese and Japanese in `timeexpr_cjk`, event-anchored in `anchored`). Windows are
[start, end) in the reference time's own timezone: calendar days are the client's."""

from __future__ import annotations

from datetime import date, datetime, timedelta, tzinfo

Window = tuple[datetime, datetime]


def midnight(d: date, tz: tzinfo | None) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=tz)


def days(d: date, n: int, tz: tzinfo | None) -> Window:
    return midnight(d, tz), midnight(d + timedelta(days=n), tz)


def month(year: int, month: int, tz: tzinfo | None, months: int = 1) -> Window:
    end_year, end_month = divmod(year * 12 + month - 1 + months, 12)
    return datetime(year, month, 1, tzinfo=tz), datetime(end_year, end_month + 1, 1, tzinfo=tz)


def shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    y, m = divmod(year * 12 + month - 1 + by, 12)
    return y, m + 1


def year(year: int, tz: tzinfo | None) -> Window:
    return datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz)


def monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def calendar_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def back(ref: datetime, unit: str, n: int) -> datetime:
    """`ref` moved n days, weeks, months or years into the past (a negative n: the
    future); a month's day past the 28th is clamped to the 28th in another month."""
    if unit == "day":
        return ref - timedelta(days=n)
    if unit == "week":
        return ref - timedelta(weeks=n)
    y, m = shift_month(ref.year, ref.month, -n * (12 if unit == "year" else 1))
    day = min(ref.day, 28) if (y, m) != (ref.year, ref.month) else ref.day
    return ref.replace(year=y, month=m, day=day)


def ago(ref: datetime, unit: str, n: int, slack: int = 0) -> Window:
    """N units ago: that day, the week around that day, that calendar month or year;
    `slack` units more on either side for a vague count ("a few weeks ago")."""
    tz = ref.tzinfo
    if unit == "day":
        return days(ref.date() - timedelta(days=n + slack), 1 + 2 * slack, tz)
    if unit == "week":
        centre = ref.date() - timedelta(weeks=n)
        return days(centre - timedelta(days=3 + 7 * slack), 7 + 14 * slack, tz)
    if unit == "month":
        y, m = shift_month(ref.year, ref.month, -n - slack)
        return month(y, m, tz, 1 + 2 * slack)
    return year(ref.year - n - slack, tz)[0], year(ref.year - n + slack, tz)[1]


def named_month(ref: datetime, number: int, which: str) -> Window:
    """A month named without a year: `this` year's, the `next` one to come, the `last`
    one that is over, or (`in`) the latest one that has begun."""
    if which == "this":
        y = ref.year
    elif which == "next":
        y = ref.year if number > ref.month else ref.year + 1
    elif which == "last":
        y = ref.year if number < ref.month else ref.year - 1
    else:
        y = ref.year if number <= ref.month else ref.year - 1
    return month(y, number, ref.tzinfo)


def season(ref: datetime, first: int, which: str) -> Window:
    """The three months from month `first` (northern hemisphere: 3 spring, 6 summer,
    9 autumn, 12 winter), each season named by the year it begins in (winter 2023:
    December 2023 to February 2024): the `last` one that is over, `this` one (under way,
    or else this year's: for winter the coming one), or (`in`) the latest that has begun."""
    begun = ref.year if ref.month >= first else ref.year - 1
    if which == "last":
        y = begun if month(begun, first, ref.tzinfo, 3)[1] <= ref else begun - 1
    elif which == "this":
        y = begun if first == 12 and ref.month <= 2 else ref.year
    else:
        y = begun
    return month(y, first, ref.tzinfo, 3)


def latest_day(ref: datetime, m: int, d: int, y: int | None) -> date | None:
    """A day of a month; without a year, the latest one not after the reference day."""
    if y is not None:
        return calendar_day(y, m, d)
    found = calendar_day(ref.year, m, d)
    if found is None or found > ref.date():
        found = calendar_day(ref.year - 1, m, d)
    return found
