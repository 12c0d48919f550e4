"""Recall with the conversation so far: `context` turns, or a query that is a transcript,
searched turn by turn over REST."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api

MEMORIES = (
    {"key": "user.pet", "value": "has a beagle named Rex who loves the park"},
    {"key": "user.car", "value": "drives a red Volvo to work"},
    {"key": "user.job", "value": "works as a nurse at the city hospital"},
    {"key": "user.sister", "value": "sister Ana lives in Lisbon"},
)
CAR = "Did the red Volvo pass its inspection?"
DOG = "Rex was limping after the park yesterday"
# the user's latest line is about the dog, the assistant's about the car
CONTEXT = [
    {"role": "user", "content": "Good morning!"},
    {"role": "assistant", "content": CAR},
    {"role": "user", "content": DOG},
]


def recall(api: Api, **body: Any) -> dict[str, Any]:
    r = api.client.post(f"{api.base}/recall", json={"k": 4, **body})
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_context_is_searched_turn_by_turn_and_explained(api: Api) -> None:
    api.observe(*MEMORIES)
    body = recall(api, context=CONTEXT)
    assert body["results"][0]["key"] == "user.pet"
    turns = body["conversation"]["turns"]
    # "Good morning!" says nothing; the user's latest turn counts most
    assert turns == [
        {"role": "assistant", "weight": 0.45, "content": CAR},
        {"role": "user", "weight": 1.0, "content": DOG},
    ]
    assert body["conversation"]["from_query"] is False
    for hit in body["results"]:
        assert hit["components"]["keyword_of"] == "memory"
        assert hit["components"]["conversation_turns"] == 2
        assert 0 <= hit["components"]["keyword"] <= 1
    # the same two lines, said by the other speakers: the user's words lead
    swapped = [
        {"role": "user", "content": CAR},
        {"role": "assistant", "content": DOG},
    ]
    assert recall(api, context=swapped)["results"][0]["key"] == "user.car"
    # searched as one text, it is one bag of words whoever said them
    said = [{"role": "assistant", "content": CAR}, {"role": "user", "content": DOG}]
    flat = recall(api, context=said, conversation=False)
    assert flat["conversation"] is None
    assert {h["components"]["keyword_of"] for h in flat["results"]} == {"query"}
    assert [h["key"] for h in flat["results"]] == [
        h["key"] for h in recall(api, context=swapped, conversation=False)["results"]
    ]


def test_a_transcript_query_is_read_as_a_conversation(api: Api) -> None:
    api.observe(*MEMORIES)
    transcript = "\n".join(f"{t['role'].title()}: {t['content']}" for t in CONTEXT)
    body = recall(api, query=transcript)
    assert body["results"][0]["key"] == "user.pet"
    assert body["conversation"]["from_query"] is True
    assert [t["role"] for t in body["conversation"]["turns"]] == ["Assistant", "User"]
    assert recall(api, query=transcript, conversation=False)["conversation"] is None


def test_query_and_context_together_and_the_log(api: Api) -> None:
    api.observe(*MEMORIES)
    body = recall(
        api,
        query="where does she live again?",
        context=[
            {"role": "user", "content": "My sister Ana is visiting next week"},
            {"role": "assistant", "content": "How nice, I hope you enjoy the visit."},
        ],
    )
    assert body["results"][0]["key"] == "user.sister"
    turns = body["conversation"]["turns"]
    assert turns[-1] == {"role": "user", "weight": 1.0, "content": "where does she live again?"}
    r = api.client.get(f"{api.base}/recalls/{body['recall_id']}")
    assert r.status_code == 200, r.text
    logged = r.json()
    assert logged["query"] == "where does she live again?"
    assert logged["filters"]["conversation"]["turns"] == turns
    context_only = recall(api, context=CONTEXT)
    logged = api.client.get(f"{api.base}/recalls/{context_only['recall_id']}").json()
    assert logged["query"].splitlines()[-1] == "user: " + CONTEXT[2]["content"]


def test_a_plain_question_is_searched_as_before(api: Api) -> None:
    api.observe(*MEMORIES)
    body = recall(api, query="what is my dog called?")
    assert body["conversation"] is None
    assert body["results"][0]["key"] == "user.pet"
    assert {h["components"]["keyword_of"] for h in body["results"]} == {"query"}
    assert {h["components"]["conversation_turns"] for h in body["results"]} == {None}


def test_nothing_to_search_for_is_refused(api: Api) -> None:
    for body, field in (
        ({"k": 3}, "query"),
        ({"context": []}, "query"),
        ({"context": [{"role": "user"}]}, "context"),
        ({"context": [{"role": "user", "content": ""}]}, "context"),
        ({"context": [{"role": "the user!", "content": "hi"}]}, "context"),
        ({"query": "x", "conversation": "maybe"}, "conversation"),
    ):
        r = api.client.post(f"{api.base}/recall", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["message"].startswith(field), (body, r.text)
