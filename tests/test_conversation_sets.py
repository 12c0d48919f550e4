"""The conversation evaluation sets (benchmarks/conversation_*.py) are what the retrieval
numbers are measured on: each must be the same on every run, as large as the issue asks,
and hold only questions whose evidence exists, with times only where a question means one
(pure: no servers)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
from benchmarks.conversation_data import build
from benchmarks.conversation_ja import build_ja, build_ja_time
from benchmarks.conversation_time import build_time
from benchmarks.conversation_zh import build_zh, build_zh_time
from benchmarks.eval_set import Dataset

from hindsight.text import anchored
from hindsight.text.timeexpr import resolve

SETS: dict[str, Callable[[], Dataset]] = {"en": build, "zh": build_zh, "ja": build_ja}


@pytest.fixture(scope="module", params=sorted(SETS))
def built(request: pytest.FixtureRequest) -> tuple[Dataset, Dataset]:
    make = SETS[request.param]
    return make(), make()


def test_the_same_on_every_run(built: tuple[Dataset, Dataset]) -> None:
    first, second = built
    assert first.observations == second.observations
    assert [q.text for q in first.questions] == [q.text for q in second.questions]


def test_large_enough_and_every_answer_exists(built: tuple[Dataset, Dataset]) -> None:
    data = built[0]
    assert len(data.observations) >= 5000 and len(data.questions) >= 1000
    assert set(data.kinds()) == {"multi_hop", "open_domain", "single_hop", "temporal"}
    keys = {(ns, key) for ns, key, _, _ in data.observations}
    assert all((q.namespace, k) in keys for q in data.questions for k in q.gold)


def test_only_month_questions_name_a_time(built: tuple[Dataset, Dataset]) -> None:
    """A month question resolves to the month its evidence happened in, as does any other
    question that names a time ("has Mia changed careers recently?"); none names an event
    as its time (a stray window would rank it by date)."""
    data = built[0]
    months = 0
    for q in data.questions:
        assert q.asked_at is not None
        window = resolve(q.text, datetime.fromisoformat(q.asked_at))
        if window is None:
            assert anchored.find(q.text) is None, q.text
            continue
        months += 1
        for key in q.gold:
            happened = datetime.fromisoformat(data.occurred[(q.namespace, key)])
            assert window.contains(happened), (q.text, key)
    # every person's months, about half of them asked
    assert 80 <= months <= 150


@pytest.mark.parametrize("make", [build_time, build_zh_time, build_ja_time])
def test_the_time_sets_say_their_times_in_words_the_reader_knows(
    make: Callable[[], Dataset],
) -> None:
    """Month questions asked three ways resolve to their evidence's month; anchored ones
    name an event and no date."""
    data = make()
    assert {"anchored", "month_year", "month_name", "last_month"} == set(data.kinds())
    for q in data.questions:
        assert q.asked_at is not None
        window = resolve(q.text, datetime.fromisoformat(q.asked_at))
        if q.kind == "anchored":
            assert window is None and anchored.find(q.text) is not None, q.text
            continue
        assert window is not None, q.text
        for key in q.gold:
            assert window.contains(datetime.fromisoformat(data.occurred[(q.namespace, key)]))
