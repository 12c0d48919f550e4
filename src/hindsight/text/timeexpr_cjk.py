"""Chinese and Japanese time expressions, for `hindsight.text.timeexpr.resolve`: the same
windows as the English ones, read from text without spaces (so no word boundaries: each
pattern is the whole expression, and the earliest, then longest, match wins).

Understood, with numbers in digits (also full-width) or in Chinese numerals (一 … 九十九,
两; 几 is a vague "a few", as in English):
- days: 今天 今日 今晚 今早, 昨天 昨日 昨晚, 前天 一昨日, 大前天, 明天 明日
- weeks: 这周 本周 这个星期 这礼拜 今週, 上周 上个星期 上礼拜 先週, 下周 下个星期 来週,
  and their weekends (上周末 = last weekend)
- months: 这个月 本月 今月, 上个月 上月 先月, 下个月 下月 来月
- years: 今年, 去年 昨年, 前年 (two years back), 明年 来年
- N天前, N周前, N个星期前, N个月前, N年前, 前几天; Japanese N日前, N週間前, Nヶ月前
  (also か月, カ月), N年前 (the same windows as "N days ago" …)
- 最近 / 过去 / 近 N 天, 周, 个月, 年; Japanese ここ / この N 日間 … (rolling: up to the
  reference time)
- 2023年5月, 去年5月, 今年三月, 5月 / 五月 / 5月份 (the latest May that has begun),
  2023年5月3日, 5月3日 / 5月3号 (without a year: the latest one on or before the reference
  day), 2023年 (the year)
- 周一 … 周日, 星期一 … 星期天, 礼拜三, with 上 / 这 / 本 / 下 (上周三: the Wednesday of
  last week; bare: the latest one before the reference day); Japanese 先週の水曜日, 水曜日
- 春天 夏天 秋天 冬天 (also 春季 …), with 去年 / 今年 / 明年 (去年夏天: the summer that began
  last year); Japanese 去年の夏, 今年の春
- vague: 最近, 近来, 近期, 这段时间, 这阵子; Japanese 最近, このごろ, 近頃 (as "recently": the
  past 30 days, marked vague)
- any of the above followed by 以来 / 以來 / 以降 (with or without 自从 before it): from its
  start to the reference time
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from hindsight.text import dates
from hindsight.text.dates import Window

Rule = Callable[[re.Match[str], datetime], Window | None]

_DIGITS = "一二三四五六七八九"
_NUMBER = r"[0-9０-９]{1,3}|[一二两兩三四五六七八九十]{1,3}|几|幾"
# no digit just before a count or a month: "2023年前" is not "23 years ago"
COUNT = rf"(?<![0-9０-９])(?P<count>{_NUMBER})"
_MONTH = (
    r"(?<![0-9０-９])(?P<month>1[0-2]|0?[1-9]|１[０-２]|０?[１-９]|十[一二]?|[一二三四五六七八九])"
    r"月(?:份)?"
)
_DAY = (
    r"(?P<day>[0-3]?[0-9]|[０-３]?[０-９]|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九])"
    r"(?:日|号|號)"
)
_YEAR = r"(?<![0-9０-９])(?P<year>(?:19|20)[0-9]{2}|(?:１９|２０)[０-９]{2})年"
UNITS = {
    "天": "day", "日": "day", "日間": "day", "周": "week", "星期": "week", "个星期": "week",
    "個星期": "week", "礼拜": "week", "个礼拜": "week", "週": "week", "週間": "week",
    "个月": "month", "個月": "month", "ヶ月": "month", "か月": "month", "カ月": "month",
    "ヵ月": "month", "ケ月": "month", "年": "year",
}  # fmt: skip
UNIT = "(?P<unit>" + "|".join(sorted(UNITS, key=len, reverse=True)) + ")"
_YEAR_WORDS = {"前年": -2, "去年": -1, "昨年": -1, "今年": 0, "明年": 1, "来年": 1, "來年": 1}
_WHICH_YEAR = "(?P<which>" + "|".join(_YEAR_WORDS) + ")"
_DAY_WORDS = {
    "今天": 0, "今日": 0, "今晚": 0, "今早": 0, "今夜": 0, "今朝": 0, "昨天": 1, "昨日": 1,
    "昨晚": 1, "昨夜": 1, "前天": 2, "一昨日": 2, "おととい": 2, "大前天": 3, "明天": -1,
    "明日": -1,
}  # fmt: skip
_WEEK_WORDS = {
    "这周": 0, "這週": 0, "本周": 0, "这个星期": 0, "这星期": 0, "这礼拜": 0, "今週": 0,
    "上周": -1, "上週": -1, "上个星期": -1, "上個星期": -1, "上星期": -1, "上礼拜": -1,
    "先週": -1, "下周": 1, "下週": 1, "下个星期": 1, "下星期": 1, "下礼拜": 1, "来週": 1,
}  # fmt: skip
_MONTH_WORDS = {
    "这个月": 0, "這個月": 0, "本月": 0, "这月": 0, "今月": 0, "上个月": -1, "上個月": -1,
    "上月": -1, "先月": -1, "下个月": 1, "下個月": 1, "下月": 1, "来月": 1,
}  # fmt: skip
_WEEKDAYS = {
    "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
    "月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5,
}  # fmt: skip
_SEASONS = {"春": 3, "夏": 6, "秋": 9, "冬": 12}


def _alternatives(words: dict[str, int]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


def number(word: str) -> tuple[int, int]:
    """A count and its slack: "3" and "三" are (3, 0), "十二" (12, 0), "几" (3, 1)."""
    if word in ("几", "幾"):
        return 3, 1
    if word.isdigit():  # also full-width digits
        return int(word), 0
    if word in ("两", "兩"):
        return 2, 0
    tens, _, ones = word.partition("十")
    if "十" not in word:
        return _DIGITS.index(word) + 1, 0
    high = _DIGITS.index(tens) + 1 if tens else 1
    return high * 10 + (_DIGITS.index(ones) + 1 if ones else 0), 0


def _day_word(m: re.Match[str], ref: datetime) -> Window:
    return dates.days(ref.date() - timedelta(days=_DAY_WORDS[m[0]]), 1, ref.tzinfo)


def _week(m: re.Match[str], ref: datetime) -> Window:
    monday = dates.monday(ref.date()) + timedelta(weeks=_WEEK_WORDS[m["which"]])
    if m["weekend"]:
        return dates.days(monday + timedelta(days=5), 2, ref.tzinfo)
    return dates.days(monday, 7, ref.tzinfo)


def _month_word(m: re.Match[str], ref: datetime) -> Window:
    return dates.month(*dates.shift_month(ref.year, ref.month, _MONTH_WORDS[m[0]]), ref.tzinfo)


def _year_word(m: re.Match[str], ref: datetime) -> Window:
    return dates.year(ref.year + _YEAR_WORDS[m["which"]], ref.tzinfo)


def _ago(m: re.Match[str], ref: datetime) -> Window:
    n, slack = number(m["count"])
    return dates.ago(ref, UNITS[m["unit"]], n, slack)


def _rolling(m: re.Match[str], ref: datetime) -> Window:
    n, slack = number(m["count"])
    return dates.back(ref, UNITS[m["unit"]], n + slack), ref


def _year_of(m: re.Match[str], ref: datetime) -> int | None:
    if m.groupdict().get("year"):
        return int(m["year"])
    if m.groupdict().get("which"):
        return ref.year + _YEAR_WORDS[m["which"]]
    return None


def _month_of(word: str) -> int:
    return number(word)[0]


def _dated(m: re.Match[str], ref: datetime) -> Window | None:
    found = dates.latest_day(ref, _month_of(m["month"]), number(m["day"])[0], _year_of(m, ref))
    return None if found is None else dates.days(found, 1, ref.tzinfo)


def _named_month(m: re.Match[str], ref: datetime) -> Window | None:
    month = _month_of(m["month"])
    if not 1 <= month <= 12:
        return None
    year = _year_of(m, ref)
    if year is None:  # the latest one that has begun
        return dates.named_month(ref, month, "in")
    return dates.month(year, month, ref.tzinfo)


def _in_year(m: re.Match[str], ref: datetime) -> Window:
    return dates.year(int(m["year"]), ref.tzinfo)


def _weekday(m: re.Match[str], ref: datetime) -> Window:
    target = _WEEKDAYS[m["weekday"]]
    which = m["which"]
    if which:
        monday = dates.monday(ref.date()) + timedelta(weeks=_WEEK_PREFIX[which])
        return dates.days(monday + timedelta(days=target), 1, ref.tzinfo)
    back = (ref.weekday() - target) % 7 or 7
    return dates.days(ref.date() - timedelta(days=back), 1, ref.tzinfo)


def _season(m: re.Match[str], ref: datetime) -> Window:
    first = _SEASONS[m["season"]]
    year = _year_of(m, ref)
    if year is None:
        return dates.season(ref, first, "in")
    return dates.month(year, first, ref.tzinfo, 3)


def _rule(pattern: str, handler: Rule) -> tuple[re.Pattern[str], Rule]:
    return re.compile(pattern), handler


_WEEK_PREFIX = {**_WEEK_WORDS, "本": 0, "这": 0, "這": 0, "上": -1, "下": 1}
RULES = [
    _rule(rf"(?:{_YEAR}|{_WHICH_YEAR})?{_MONTH}{_DAY}", _dated),
    _rule(rf"(?:{_YEAR}|{_WHICH_YEAR}的?){_MONTH}", _named_month),
    # not 五月天 (a band), the one case of a bare month that names something else
    _rule(_MONTH + r"(?!天)(?P<year>)(?P<which>)", _named_month),
    _rule(_YEAR + "(?!以前|之前|前)", _in_year),  # 2023年前: before 2023, not in it
    _rule(_WHICH_YEAR, _year_word),
    _rule(_alternatives(_DAY_WORDS), _day_word),
    _rule(f"(?P<which>{_alternatives(_WEEK_WORDS)})(?P<weekend>末)?", _week),
    _rule(_alternatives(_MONTH_WORDS), _month_word),
    _rule(rf"{COUNT}{UNIT}(?:以前|之前|前)", _ago),
    _rule(r"前(?P<count>几|幾|两|兩)(?P<unit>天)", _ago),
    _rule(rf"(?:最近|过去|過去|近|ここ|この)的?{COUNT}{UNIT}(?:里|裡|内|內)?", _rolling),
    _rule(
        rf"(?P<which>{_alternatives(_WEEK_PREFIX)})?(?:的|の)?(?:周|週|星期|礼拜|禮拜)(?P<weekday>[一二三四五六日天])",
        _weekday,
    ),
    _rule(r"(?:(?P<which>先週|今週|来週)の?)?(?P<weekday>[月火水木金土日])曜日?", _weekday),
    _rule(rf"{_WHICH_YEAR}?(?:的|の)?(?P<season>[春夏秋冬])(?:天|季)", _season),
    _rule(rf"{_WHICH_YEAR}(?:的|の)?(?P<season>[春夏秋冬])", _season),
]
# vague: the past 30 days, as "recently" (timeexpr.vague); after the
# others, so "最近三个月" is read whole; not 最近的, which is as often "nearest" (离家最近的超市)
VAGUE = re.compile(
    r"最近(?!的)|近来|近來|近期|这段时间|這段時間|这阵子|這陣子|このごろ|この頃|近頃"
)
# after an expression: from its start until now ("5月以来": since May)
SINCE_AFTER = re.compile(r"(?:以来|以來|以降)")
SINCE_BEFORE = re.compile(r"(?:自从|自從)$")
