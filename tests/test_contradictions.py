"""Contradictions under different keys (issue 32): detected at write time, linked in both
memories' history, resolved by trust — the newer supersedes, or both wait for review."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hindsight.services.roles import Role
from tests.conftest import Api
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer
from tests.test_roles import make_key
from tests.test_trust import changes, listed

PYTHON = {"key": "user.language", "value": "The user uses Python", "source": "agent"}
GO = {"key": "user.main_language", "value": "The user mostly uses Go now", "source": "agent"}


@pytest.fixture
def writer(server: ThreadServer, migrated: str, ns: str) -> Iterator[Api]:
    api = Api.at(server.url, ns, make_key(migrated, Role.WRITER, [ns]))
    yield api
    api.client.close()


def reasons(api: Api, memory_id: str) -> str:
    return " | ".join(r or "" for _, r in changes(api, memory_id))


def test_the_newer_claim_supersedes_one_as_trusted_under_another_key(api: Api, writer: Api) -> None:
    (old,) = writer.observe(PYTHON)
    (new,) = writer.observe(GO)
    assert new["outcome"] == "superseded", new
    assert old["id"] in new["reason"] and "user.language" in new["reason"]
    assert api.get(old["id"])["status"] == "archived"
    assert [m["key"] for m in listed(api).values()] == ["user.main_language"]
    hits = writer.recall("which programming language does the user use")["results"]
    assert [h["key"] for h in hits] == ["user.main_language"]
    # linked both ways in history, each naming the other
    assert new["id"] in reasons(api, old["id"])
    assert changes(api, old["id"])[-1][0] == "archived"
    assert old["id"] in reasons(api, new["id"])
    # reversible: a curator restores the archived one
    r = api.client.patch(f"{api.base}/memories/{old['id']}", json={"status": "active"})
    assert r.status_code == 200, r.text
    assert api.get(old["id"])["status"] == "active"


def test_a_less_trusted_contradiction_sends_both_to_review(api: Api, writer: Api) -> None:
    (old,) = api.observe({**PYTHON, "source": "user"})  # a curator's word: trust 1.0
    (new,) = writer.observe(GO)  # an agent's: 0.8
    assert new["outcome"] == "quarantined", new
    assert old["id"] in new["reason"]
    assert api.get(old["id"])["status"] == "quarantined"
    assert api.get(new["id"])["status"] == "quarantined"
    queue = listed(api, status="quarantined")
    assert {old["id"], new["id"]} <= set(queue)
    assert writer.recall("which programming language does the user use")["results"] == []
    assert new["id"] in reasons(api, old["id"])
    # the curator settles it: approving the older brings it back, the newer stays held
    r = api.client.post(f"{api.base}/memories/{old['id']}:approve")
    assert r.status_code == 200, r.text
    assert api.get(old["id"])["status"] == "active"


def test_a_verified_memory_stays_and_the_contradiction_waits(api: Api, writer: Api) -> None:
    (old,) = api.observe({**PYTHON, "verified": True})
    (new,) = writer.observe(GO)
    assert new["outcome"] == "quarantined" and old["id"] in new["reason"]
    assert api.get(old["id"])["status"] == "active"
    assert new["id"] in reasons(api, old["id"])


def test_other_attributes_same_words_and_the_policy_off_flag_nothing(api: Api) -> None:
    api.observe(
        {"key": "user.name", "value": "Alex Tanaka"},
        {"key": "user.city", "value": "Alex lives in Perth"},
    )
    (home,) = api.observe({"key": "user.home_city", "value": "Alex lives in Perth"})
    assert home["outcome"] == "created"  # the same claim in the same words: no contradiction
    r = api.client.put(f"{api.base}/policy", json={"trust": {"contradiction_similarity": 0}})
    assert r.status_code == 200, r.text
    old, new = api.observe(PYTHON), api.observe(GO)
    assert new[0]["outcome"] == "created"
    assert {m["key"] for m in listed(api).values()} == {
        "user.name",
        "user.city",
        "user.home_city",
        "user.language",
        "user.main_language",
    }
    assert old[0]["id"] in listed(api)


def test_with_an_llm_the_model_tells_a_change_from_an_addition(
    llm_api: Api, llm_server: ThreadServer, brain: FakeOpenAI
) -> None:
    (old,) = llm_api.observe(PYTHON)
    (more,) = llm_api.observe(
        {"key": "user.other_language", "value": "The user also uses Go at work", "source": "agent"}
    )
    assert more["outcome"] == "created"  # the model: it adds, both stay
    assert llm_api.get(old["id"])["status"] == "active"
    asked = [r for r in brain.requests if r["path"] == "chat"]
    assert any("contradictions" in r["body"]["messages"][0]["content"] for r in asked)

    other = Api.at(llm_server.url, llm_api.ns + "-b")
    (old,) = other.observe(PYTHON)
    (new,) = other.observe(GO)
    assert new["outcome"] == "superseded", new
    assert "fake-chat" in new["reason"] and old["id"] in new["reason"]
    assert other.get(old["id"])["status"] == "archived"
    other.client.close()


def contradiction_entries(api: Api, memory_id: str) -> list[str]:
    """The reasons of the memory's `contradiction` history entries, oldest first."""
    return [e["reason"] for e in api.history(memory_id) if e["change"] == "contradiction"]


@pytest.mark.parametrize(
    ("older", "said_by_older", "said_by_newer", "moves"),
    [
        # as trusted: the newer supersedes, the older is archived after the label
        ({}, "superseded by it (archived)", "superseded it (archived)", ["archived"]),
        # the older's source is trusted more: both wait for a curator
        ({"source": "user"}, "both sent to review", "both sent to review", ["quarantined"]),
        # a curator vouched for the older: it stays, only the newer waits
        (
            {"verified": True},
            "this one stays (vouched for by a curator); the other was sent to review",
            "this one sent to review; the other, vouched for by a curator, stays",
            [],
        ),
    ],
)
def test_both_histories_label_the_contradiction_and_what_was_done(
    api: Api,
    writer: Api,
    older: dict[str, Any],
    said_by_older: str,
    said_by_newer: str,
    moves: list[str],
) -> None:
    (old,) = (api if older else writer).observe({**PYTHON, **older})
    (new,) = writer.observe(GO)
    # each names the other's id and key, and says what was done
    assert contradiction_entries(api, old["id"]) == [
        f"contradicted by memory {new['id']} (key 'user.main_language'): {said_by_older}: "
        "the same attribute of the same subject, with another value; similarity "
        + new_similarity(new)
    ]
    assert contradiction_entries(api, new["id"]) == [
        f"contradicts memory {old['id']} (key 'user.language'): {said_by_newer}: "
        "the same attribute of the same subject, with another value; similarity "
        + new_similarity(new)
    ]
    # the label comes before the move that carries it out
    history = [e["change"] for e in api.history(old["id"])]
    assert history[history.index("contradiction") :] == ["contradiction", *moves]


def new_similarity(outcome: dict[str, Any]) -> str:
    """The similarity the outcome's reason gives (both entries repeat the judge's words)."""
    return outcome["reason"].split("similarity ", 1)[1].split(";", 1)[0]
