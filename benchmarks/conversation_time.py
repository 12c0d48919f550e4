"""The conversation set's month questions asked three ways, so that only the reference
time tells which month is meant: with the year (`month_year`: "What did Dave do in April
2023?", as in `conversations`), by the month's name (`month_name`: "... in April?") and as
"last month" (`last_month`), the last two asked on the 10th of the month after; and
questions timed by another event (`anchored`: "What did Dave do in the month after Dave
adopted the beagle?"), whose month starts the day after that event. The dialogues and their
dates are benchmarks/conversation_data.py's.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from benchmarks.conversation_data import build, month_end
from benchmarks.eval_set import Dataset, Question

_MONTH_QUESTION = re.compile(r"^What did (?P<who>\w+) do in (?P<month>\w+) (?P<year>\d{4})\?$")


def build_time(seed: int = 12, conversations: int = 10, sessions: int = 24) -> Dataset:
    """The same dialogues, with only the month questions, each asked three ways: with the
    year (`month_year`), by the month's name (`month_name`, read against the reference
    time) and as "last month" (`last_month`, asked on the 10th of the month after)."""
    full = build(seed, conversations, sessions, anchored=True)
    data = Dataset("conversations-time", full.observations, [], full.occurred)
    data.questions += [q for q in full.questions if q.kind == "anchored"]
    for q in full.questions:
        m = _MONTH_QUESTION.match(q.text)
        if m is None:
            continue
        first = datetime.strptime(f"1 {m['month']} {m['year']}", "%d %B %Y").date()
        following = month_end(first) + timedelta(days=10)
        later = f"{following.isoformat()}T18:00:00+00:00"
        who, month = m["who"], m["month"]
        data.questions += [
            Question(q.namespace, q.text, "month_year", q.gold, q.asked_at),
            Question(q.namespace, f"What did {who} do in {month}?", "month_name", q.gold, later),
            Question(q.namespace, f"What did {who} do last month?", "last_month", q.gold, later),
        ]
    return data
