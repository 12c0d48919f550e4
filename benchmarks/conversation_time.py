"""The conversation set's month questions asked three ways, so that only the reference
time tells which month is meant: with the year (`month_year`: "What did Dave do in April
2023?", as in `conversations`), by the month's name (`month_name`: "... in April?") and as
"last month" (`last_month`), the last two asked on the 10th of the month after; and
questions timed by another event (`anchored`: "What did Dave do in the month after Dave
adopted the beagle?"), whose month starts the day after that event. The dialogues and their
dates are benchmarks/conversation_data.py's.
"""

from __future__ import annotations

from datetime import timedelta

from benchmarks.conversation_data import ENGLISH, Language, build, month_end
from benchmarks.eval_set import Dataset, Question


def build_time(
    seed: int = 12, conversations: int = 10, sessions: int = 24, lang: Language = ENGLISH
) -> Dataset:
    """The same dialogues, with only the month questions, each asked three ways: with the
    year (`month_year`), by the month's name (`month_name`, read against the reference
    time) and as "last month" (`last_month`, asked on the 10th of the month after); and
    the `anchored` questions."""
    full = build(seed, conversations, sessions, anchored=True, lang=lang)
    name = "conversations-time" if lang is ENGLISH else f"{lang.name}-time"
    data = Dataset(name, full.observations, [], full.occurred)
    data.questions += [q for q in full.questions if q.kind == "anchored"]
    for q in full.questions:
        if q.month_of is None:
            continue
        who, day = q.month_of
        following = month_end(day) + timedelta(days=10)
        later = f"{following.isoformat()}T18:00:00+00:00"
        data.questions += [
            Question(q.namespace, q.text, "month_year", q.gold, q.asked_at),
            Question(q.namespace, lang.month_name_question(who, day), "month_name", q.gold, later),
            Question(q.namespace, lang.last_month_question(who), "last_month", q.gold, later),
        ]
    return data
