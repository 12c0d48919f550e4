"""A recall query that is a conversation: its turns, their weights, what the arms search."""

from __future__ import annotations

import numpy as np
import pytest

from hindsight.retrieval.keywords import query_terms, weighted_query_terms
from hindsight.retrieval.searched import Searched, combined, searched
from hindsight.text.conversation import (
    MAX_TURNS,
    OTHER_ROLE_WEIGHT,
    RECENCY,
    Turn,
    parse,
    weighted,
)
from hindsight.text.tokenize import term_id

MADIAL_LIKE = (
    "<BOD>\n"
    '<Bart>: "I got a perfect score on my math test today!"\n'
    '<Assistant>: "Wow, that\'s really awesome! You must have studied hard, right?"\n'
    '"Yes, every day."\n'
    '<Bart>: "How do you think I should celebrate?"\n'
)


def test_a_transcript_is_read_as_turns_without_tags_markup_or_quotes() -> None:
    assert parse(MADIAL_LIKE) == [
        Turn("Bart", "I got a perfect score on my math test today!"),
        # a line without a tag continues the turn before it
        Turn(
            "Assistant",
            "Wow, that's really awesome! You must have studied hard, right? Yes, every day.",
        ),
        Turn("Bart", "How do you think I should celebrate?"),
    ]
    assert parse("User: my sister moved\nAssistant: where to?\nUser: Lisbon") == [
        Turn("User", "my sister moved"),
        Turn("Assistant", "where to?"),
        Turn("User", "Lisbon"),
    ]
    assert parse("[user] hi there\n[assistant] hello") is not None
    assert parse('<Bart>:"嘿，你知道吗？"\n<Assistant>:"真是太棒了！"') == [
        Turn("Bart", "嘿，你知道吗？"),
        Turn("Assistant", "真是太棒了！"),
    ]
    # two people talking, one of them twice
    assert parse("Alice: hi\nBob: hey\nAlice: how was Rome?") is not None


@pytest.mark.parametrize(
    "text",
    [
        "What did I do in May?",
        "User: where does my sister live?",  # one turn is a question
        "Note: buy milk\nTodo: call mom",  # labels, not speakers
        "see https://example.com\nand http://example.org",
        "10:30 standup\n11:00 lunch",
    ],
)
def test_other_text_is_no_conversation(text: str) -> None:
    assert parse(text) is None


def test_turns_weigh_by_speaker_and_age_and_filler_goes() -> None:
    turns = [
        Turn("user", "I adopted a beagle"),
        Turn("assistant", "How lovely! What is its name?"),
        Turn("user", "thanks!"),  # filler: dropped
        Turn("user", "Rex. Where should I walk him?"),
    ]
    out = weighted(turns)
    assert [t.content for t in out] == [turns[0].content, turns[1].content, turns[3].content]
    assert [t.weight for t in out] == pytest.approx([RECENCY**2, OTHER_ROLE_WEIGHT * RECENCY, 1.0])
    many = [Turn("user", f"turn {i}") for i in range(40)]
    assert [t.content for t in weighted(many)] == [f"turn {i}" for i in range(40 - MAX_TURNS, 40)]


def test_the_query_is_the_latest_turn_after_the_context() -> None:
    context = [Turn("user", "I adopted a beagle"), Turn("assistant", "What is its name?")]
    s = searched("Rex. Where should I walk him?", context, conversation=True)
    assert s.conversation and not s.from_query
    assert [text for text, _ in s.parts] == [
        "I adopted a beagle",
        "What is its name?",
        "Rex. Where should I walk him?",
    ]
    assert s.time_text == "Rex. Where should I walk him?"
    # a transcript in the query is read the same way
    t = searched("User: I adopted a beagle\nAssistant: What is its name?", [], conversation=True)
    assert t.from_query and [x.role for x in t.turns] == ["User", "Assistant"]
    # turned off, everything is one text, context first
    off = searched("Rex?", context, conversation=False)
    assert off == Searched.plain("I adopted a beagle\nWhat is its name?\nRex?")
    # one turn, or one that says something, is a plain query
    assert searched(None, [Turn("user", "where is Rex?")], True) == Searched.plain("where is Rex?")
    assert searched("where is Rex?", [Turn("user", "hello")], True) == Searched.plain(
        "where is Rex?"
    )


def test_both_arms_weigh_each_turn() -> None:
    terms, counts = weighted_query_terms([("beagle park", 0.5), ("beagle", 1.0)])
    assert dict(zip(terms, counts, strict=True)) == {
        term_id("beagl"): 1.5,
        term_id("park"): 0.5,
    }
    assert weighted_query_terms([("red red blue", 1.0)]) == query_terms("red red blue")
    x, y = np.eye(3, dtype=np.float32)[:2]
    mean = combined([x, 3 * y], [1.0, 0.5])  # each turn's vector counts as a unit vector
    assert np.linalg.norm(mean) == pytest.approx(1.0)
    assert mean[0] / mean[1] == pytest.approx(2.0)
