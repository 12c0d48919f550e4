"""Chinese and Japanese time expressions, read against a reference time (pure: no servers)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from hindsight import limits
from hindsight.text import anchored
from hindsight.text.timeexpr import resolve

# Wednesday 12 June 2024, 15:00 in Beijing
REF = datetime(2024, 6, 12, 15, 0, tzinfo=timezone(timedelta(hours=8)))


@pytest.mark.parametrize(
    ("text", "start", "end", "expression"),
    [
        ("我昨天做了什么", "2024-06-11", "2024-06-12", "昨天"),
        ("今天有什么安排", "2024-06-12", "2024-06-13", "今天"),
        ("大前天去了哪里", "2024-06-09", "2024-06-10", "大前天"),
        ("小明2023年8月做了什么？", "2023-08-01", "2023-09-01", "2023年8月"),
        ("小明8月做了什么", "2023-08-01", "2023-09-01", "8月"),  # the latest August begun
        ("五月份去了哪里", "2024-05-01", "2024-06-01", "五月份"),
        ("十二月", "2023-12-01", "2024-01-01", "十二月"),
        ("去年5月", "2023-05-01", "2023-06-01", "去年5月"),
        ("今年三月", "2024-03-01", "2024-04-01", "今年三月"),
        ("２０２３年５月", "2023-05-01", "2023-06-01", "２０２３年５月"),
        ("5月3号吃了什么", "2024-05-03", "2024-05-04", "5月3号"),
        ("2023年5月3日", "2023-05-03", "2023-05-04", "2023年5月3日"),
        ("2023年读了哪些书", "2023-01-01", "2024-01-01", "2023年"),
        ("去年", "2023-01-01", "2024-01-01", "去年"),
        ("前年", "2022-01-01", "2023-01-01", "前年"),
        ("小明上个月做了什么", "2024-05-01", "2024-06-01", "上个月"),
        ("这个月", "2024-06-01", "2024-07-01", "这个月"),
        ("上周我去了哪里", "2024-06-03", "2024-06-10", "上周"),
        ("上个星期", "2024-06-03", "2024-06-10", "上个星期"),
        ("上周末吃了什么", "2024-06-08", "2024-06-10", "上周末"),
        ("上周三", "2024-06-05", "2024-06-06", "上周三"),  # the Wednesday of last week
        ("周五", "2024-06-07", "2024-06-08", "周五"),  # the latest Friday before today
        ("星期天", "2024-06-09", "2024-06-10", "星期天"),
        ("三天前", "2024-06-09", "2024-06-10", "三天前"),
        ("两周前买了什么", "2024-05-26", "2024-06-02", "两周前"),
        ("一个月前", "2024-05-01", "2024-06-01", "一个月前"),
        ("几天前", "2024-06-08", "2024-06-11", "几天前"),
        ("前几天", "2024-06-08", "2024-06-11", "前几天"),
        ("最近三个月", "2024-03-12T15:00", "2024-06-12T15:00", "最近三个月"),
        ("过去两周里", "2024-05-29T15:00", "2024-06-12T15:00", "过去两周里"),
        ("去年夏天", "2023-06-01", "2023-09-01", "去年夏天"),
        ("冬天", "2023-12-01", "2024-03-01", "冬天"),
        ("5月以来", "2024-05-01", "2024-06-12T15:00", "5月以来"),
        ("自从去年以来", "2023-01-01", "2024-06-12T15:00", "自从去年以来"),
        # Japanese
        ("先週の水曜日", "2024-06-05", "2024-06-06", "先週の水曜日"),
        ("先月は何をしましたか", "2024-05-01", "2024-06-01", "先月"),
        ("3日前", "2024-06-09", "2024-06-10", "3日前"),
        ("2週間前", "2024-05-26", "2024-06-02", "2週間前"),
        ("3ヶ月前", "2024-03-01", "2024-04-01", "3ヶ月前"),
        ("去年の夏", "2023-06-01", "2023-09-01", "去年の夏"),
        ("一昨日", "2024-06-10", "2024-06-11", "一昨日"),
    ],
)
def test_reads_the_window(text: str, start: str, end: str, expression: str) -> None:
    window = resolve(text, REF)
    assert window is not None, text
    tz = REF.tzinfo
    assert window.start == datetime.fromisoformat(start).replace(tzinfo=tz)
    assert window.end == datetime.fromisoformat(end).replace(tzinfo=tz)
    assert window.expression == expression


@pytest.mark.parametrize(
    "text",
    [
        "用户的生日是哪天",
        "猫叫什么名字",
        "用户住在哪个城市",
        "三个月的课程",
        "2023年前",
        "几月出生",
    ],
)
def test_no_time_no_window(text: str) -> None:
    assert resolve(text, REF) is None


def test_the_expression_is_cut_from_the_query() -> None:
    window = resolve("小明2023年8月做了什么？", REF)
    assert window is not None
    assert window.without("小明2023年8月做了什么？") == "小明 做了什么？"


# --- anchored on an event, in Chinese and Japanese: the event comes first -----------------

WEDDING = datetime(2024, 5, 18, 16, 0, tzinfo=timezone(timedelta(hours=8)))


@pytest.mark.parametrize(
    ("text", "event", "start", "end", "cut"),
    [
        ("婚礼前一周我做了什么", "婚礼", "2024-05-11", "2024-05-18", "前一周"),
        ("婚礼之前的两周", "婚礼", "2024-05-04", "2024-05-11", "之前的两周"),
        ("婚礼前一天", "婚礼", "2024-05-17", "2024-05-18", "前一天"),
        ("小明在领养小狗之后的一个月里做了什么？", "小明在领养小狗", "2024-05-19", "2024-06-19",
         "之后的一个月里"),
        ("小明领养小狗后的那个月做了什么", "小明领养小狗", "2024-05-19", "2024-06-19",
         "后的那个月"),
        ("自从搬家以来读了哪些书", "搬家", "2024-05-18", None, "以来"),
        ("自从我们搬到上海以来读了哪些书", "我们搬到上海", "2024-05-18", None, "以来"),
        ("自从搬家，我读了什么", "搬家", "2024-05-18", None, "自从"),
        ("搬家以来读了哪些书", "搬家", "2024-05-18", None, "以来"),
        ("结婚式の一週間前に何をしましたか", "结婚式", "2024-05-11", "2024-05-18", "の一週間前"),
        ("犬を飼い始めてから一ヶ月で何をしましたか", "犬を飼い始め", "2024-05-19", "2024-06-19",
         "てから一ヶ月"),
        ("引っ越してから読んだ本は", "引っ越し", "2024-05-18", None, "てから"),
    ],
)  # fmt: skip
def test_an_expression_anchored_on_an_event(
    text: str, event: str, start: str, end: str | None, cut: str
) -> None:
    found = anchored.find(text)
    assert found is not None and found.event == event
    window = found.window(WEDDING, REF)
    assert window is not None
    tz = REF.tzinfo
    assert window.start == datetime.fromisoformat(start).replace(tzinfo=tz)
    assert window.end == (datetime.fromisoformat(end).replace(tzinfo=tz) if end else REF)
    # the expression (what a stripped query loses) is the time words only: the event may
    # hold the question's only subject
    assert window.expression == cut and text[slice(*window.span)] == cut


@pytest.mark.parametrize("text", ["以前的同事叫什么", "周杰是什么时候去的里斯本？", "前面那家店"])
def test_no_event_no_anchor(text: str) -> None:
    assert anchored.find(text) is None


@pytest.mark.parametrize("text", ["我最近读了什么书", "近来在忙什么", "最近何をしていますか"])
def test_vague_times_are_the_past_month_marked_vague(text: str) -> None:
    window = resolve(text, REF)
    assert window is not None and window.vague
    assert (window.start, window.end) == (REF - timedelta(days=30), REF)


def test_nearest_is_not_recent_and_a_span_wins_over_vague() -> None:
    assert resolve("离我家最近的超市在哪", REF) is None
    window = resolve("最近三个月读了什么", REF)
    assert window is not None and not window.vague and window.expression == "最近三个月"


def test_a_long_query_is_read_in_linear_time() -> None:
    """The longest query recall takes, in Chinese without a mark or a time: a pattern that
    matched the event along with the time words took 0.8 s on it; the answer is no anchor."""
    text = ("用户住在上海每天骑自行车上班" * 300)[: limits.QUERY_MAX_CHARS]
    started = time.process_time()
    assert anchored.find(text) is None and resolve(text, REF) is None
    # a bound on complexity, not a speed target: 0.2 ms now, 0.8 s when quadratic
    assert time.process_time() - started < 0.1
