"""Time expressions in questions, read against a reference time (pure: no servers)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from hindsight.text import anchored
from hindsight.text.timeexpr import resolve

# Wednesday 12 June 2024, 15:00 in a client two hours east of UTC
REF = datetime(2024, 6, 12, 15, 0, tzinfo=timezone(timedelta(hours=2)))


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=REF.tzinfo)


@pytest.mark.parametrize(
    ("text", "start", "end", "expression"),
    [
        ("what did I do yesterday?", "2024-06-11", "2024-06-12", "yesterday"),
        ("anything today", "2024-06-12", "2024-06-13", "today"),
        ("what happened last night", "2024-06-11", "2024-06-12", "last night"),
        ("the day before yesterday", "2024-06-10", "2024-06-11", "the day before yesterday"),
        ("plans for tomorrow", "2024-06-13", "2024-06-14", "tomorrow"),
        ("what did I read last week", "2024-06-03", "2024-06-10", "last week"),
        ("meetings this week", "2024-06-10", "2024-06-17", "this week"),
        ("what's on next week", "2024-06-17", "2024-06-24", "next week"),
        ("bills last month", "2024-05-01", "2024-06-01", "last month"),
        ("trips this month", "2024-06-01", "2024-07-01", "this month"),
        ("what did we cook last year", "2023-01-01", "2024-01-01", "last year"),
        ("goals this year", "2024-01-01", "2025-01-01", "this year"),
        ("what did I do last weekend?", "2024-06-08", "2024-06-10", "last weekend"),
        ("3 days ago", "2024-06-09", "2024-06-10", "3 days ago"),
        ("what did I buy two weeks ago", "2024-05-26", "2024-06-02", "two weeks ago"),
        ("a month ago", "2024-05-01", "2024-06-01", "a month ago"),
        ("two years ago", "2022-01-01", "2023-01-01", "two years ago"),
        ("a couple of months ago", "2024-03-01", "2024-06-01", "a couple of months ago"),
        ("what did I do last May?", "2024-05-01", "2024-06-01", "last May"),
        ("what did I do in May?", "2024-05-01", "2024-06-01", "in May"),
        ("what happened in July?", "2023-07-01", "2023-08-01", "in July"),
        ("last June", "2023-06-01", "2023-07-01", "last June"),
        ("what did Dave do in April 2023?", "2023-04-01", "2023-05-01", "in April 2023"),
        ("sep 2022 trips", "2022-09-01", "2022-10-01", "sep 2022"),
        ("what did I do in 2023", "2023-01-01", "2024-01-01", "in 2023"),
        ("what happened on 3 March 2024?", "2024-03-03", "2024-03-04", "on 3 March 2024"),
        ("the 3rd of March", "2024-03-03", "2024-03-04", "the 3rd of March"),
        ("March 3", "2024-03-03", "2024-03-04", "March 3"),
        ("on March 3rd, 2023", "2023-03-03", "2023-03-04", "on March 3rd, 2023"),
        ("on 20 December", "2023-12-20", "2023-12-21", "on 20 December"),
        ("the receipt from 2024-01-15", "2024-01-15", "2024-01-16", "2024-01-15"),
        ("what did I eat last Monday", "2024-06-10", "2024-06-11", "last Monday"),
        ("on Friday", "2024-06-07", "2024-06-08", "on Friday"),
        ("last summer", "2023-06-01", "2023-09-01", "last summer"),
        ("in the spring", "2024-03-01", "2024-06-01", "in the spring"),
        ("next May", "2025-05-01", "2025-06-01", "next May"),
    ],
)
def test_expressions_resolve_to_calendar_windows_in_the_reference_timezone(
    text: str, start: str, end: str, expression: str
) -> None:
    window = resolve(text, REF)
    assert window is not None, text
    assert (window.start, window.end) == (day(start), day(end)), text
    assert window.expression == expression
    assert window.start.utcoffset() == timedelta(hours=2)
    assert window.reference == REF


def test_windows_that_end_at_the_reference_time() -> None:
    for text, start in (
        ("earlier this month", "2024-06-01"),
        ("since May", "2024-05-01"),
        ("since last Monday", "2024-06-10"),
    ):
        window = resolve(text, REF)
        assert window is not None and (window.start, window.end) == (day(start), REF), text
    rolling = resolve("what did I do in the past two weeks", REF)
    assert rolling is not None and (rolling.start, rolling.end) == (REF - timedelta(weeks=2), REF)


def test_last_may_is_the_most_recent_may_before_the_reference() -> None:
    april = datetime(2024, 4, 10, tzinfo=UTC)
    may = datetime(2024, 5, 20, tzinfo=UTC)
    assert resolve("last May", april).start == datetime(2023, 5, 1, tzinfo=UTC)  # type: ignore[union-attr]
    assert resolve("last May", may).start == datetime(2023, 5, 1, tzinfo=UTC)  # type: ignore[union-attr]
    assert resolve("in May", may).start == datetime(2024, 5, 1, tzinfo=UTC)  # type: ignore[union-attr]
    # a date without a year is the latest one on or before the reference day
    assert resolve("June 20", REF).start == day("2023-06-20")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    [
        "what is my favourite colour?",
        "two weeks before the wedding",
        "this may help",
        "May I ask where she lives?",
        "When did Mia adopt the beagle?",
        "my 2 cats",
        "February 30",
        "",
    ],
)
def test_nothing_found_is_none(text: str) -> None:
    assert resolve(text, REF) is None


def test_the_expression_can_be_cut_out_of_the_query() -> None:
    window = resolve("What did I do last May?", REF)
    assert window is not None and window.without("What did I do last May?") == "What did I do?"
    alone = resolve("last week", REF)
    assert alone is not None and alone.without("last week") == "last week"  # nothing else left


def test_the_default_reference_is_now_in_utc_and_a_naive_one_is_utc() -> None:
    window = resolve("today")
    assert window is not None and window.start.tzinfo is not None
    now = datetime.now(UTC)
    assert window.start <= now < window.end
    naive = resolve("yesterday", datetime(2024, 6, 12, 1, 0))
    assert naive is not None and naive.start == datetime(2024, 6, 11, tzinfo=UTC)


# --- anchored on an event: the anchor's time comes from a memory -------------------------

WEDDING = datetime(2024, 5, 18, 16, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "event", "start", "end"),
    [
        ("what did I do the week before the wedding?", "the wedding", "2024-05-11", "2024-05-18"),
        ("what did I do two weeks before the wedding", "the wedding", "2024-05-04", "2024-05-11"),
        ("where was I a day after the wedding", "the wedding", "2024-05-19", "2024-05-20"),
        ("what did Mia do in the month after she got married?", "she got married",
         "2024-05-19", "2024-06-19"),
        ("what have I read since the wedding, roughly?", "the wedding", "2024-05-18", None),
    ],
)  # fmt: skip
def test_an_expression_anchored_on_an_event(
    text: str, event: str, start: str, end: str | None
) -> None:
    found = anchored.find(text)
    assert found is not None and found.event == event
    window = found.window(WEDDING, REF)
    assert window is not None and window.event == event
    assert window.start == day(start)
    assert window.end == (day(end) if end else REF)
    assert event in window.expression and text[slice(*window.span)] == window.expression


def test_dates_are_not_anchors_and_plain_questions_have_none() -> None:
    for text in ("what did I do last May?", "where does my sister live", "before bed I read"):
        assert anchored.find(text) is None, text


def test_the_month_after_an_event_late_in_a_month_starts_the_next_day() -> None:
    found = anchored.find("what did I do in the month after the move?")
    assert found is not None
    window = found.window(datetime(2024, 1, 30, 12, tzinfo=UTC), REF)
    assert window is not None
    assert (window.start, window.end) == (day("2024-01-31"), day("2024-02-28"))


@pytest.mark.parametrize(
    "text", ["what did I read recently?", "anything new lately", "what am I into these days"]
)
def test_vague_times_are_the_past_month_marked_vague(text: str) -> None:
    window = resolve(text, REF)
    assert window is not None
    assert (window.start, window.end) == (REF - timedelta(days=30), REF)
    assert window.vague


def test_a_date_is_not_vague() -> None:
    window = resolve("what did I read last week?", REF)
    assert window is not None and not window.vague
