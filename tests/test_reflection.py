"""The lifecycle pass's reflection (issue 32): duplicates merged, contradictions under
different keys settled by trust, and — with an LLM — patterns distilled as memories of
source `reflection`; every action in history, reversible, and listed by a dry run."""

from __future__ import annotations

from datetime import UTC, datetime

from hindsight.config import Settings
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.lifecycle import reflect_pass
from tests.support.servers import ThreadServer
from tests.test_trust import changes, listed

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # the pass's clock, not the wall's
PYTHON = {"key": "user.language", "value": "The user uses Python", "source": "agent"}
GO = {"key": "user.main_language", "value": "The user mostly uses Go now", "source": "agent"}
TEA = {"key": "note.1", "value": "Alex drinks green tea every afternoon"}
TEA_AGAIN = {"key": "note.2", "value": "Alex drinks green tea every afternoon"}


def plain(api: Api, *memories: dict[str, object]) -> list[dict[str, object]]:
    """Written as an import does, with no write-time checks: what reflection is for."""
    r = api.client.post(
        f"{api.base}/memories:batch", json={"memories": list(memories), "dedup": False}
    )
    assert r.status_code in (200, 201), r.text
    results: list[dict[str, object]] = r.json()["results"]
    return results


def statuses(api: Api, *ids: object) -> list[str]:
    return [api.get(str(i))["status"] for i in ids]


def test_reflection_settles_contradictions_and_merges_after_a_dry_run(
    api: Api, migrated: str
) -> None:
    settings = make_settings(dedup_threshold=0.8)  # the pair below is 0.876 alike
    old, new, tea, tea_again = plain(api, PYTHON, GO, TEA, TEA_AGAIN)
    assert [m["outcome"] for m in (old, new)] == ["created", "created"]

    report, moves = reflect_pass(settings, migrated, now=NOW, namespace=api.ns, dry_run=True)
    listed_moves = {(m.action, str(m.id)) for m in moves}
    assert ("superseded", old["id"]) in listed_moves
    assert any(a == "merged" and i in (tea["id"], tea_again["id"]) for a, i in listed_moves)
    assert report.counts["superseded"] == 1 and report.counts["merged"] == 1
    # a dry run changes nothing
    assert statuses(api, old["id"], new["id"], tea["id"], tea_again["id"]) == ["active"] * 4

    report, moves = reflect_pass(settings, migrated, now=NOW, namespace=api.ns)
    assert report.counts["superseded"] == 1 and report.counts["merged"] == 1
    assert statuses(api, old["id"], new["id"]) == ["archived", "active"]
    assert sorted(statuses(api, tea["id"], tea_again["id"])) == ["active", "archived"]
    change, reason = changes(api, str(old["id"]))[-1]
    assert change == "archived" and reason is not None
    assert "reflection" in reason and str(new["id"]) in reason
    assert any(str(old["id"]) in (r or "") for _, r in changes(api, str(new["id"])))
    # nothing left to do, and what it did is reversible
    report, _ = reflect_pass(settings, migrated, now=NOW, namespace=api.ns)
    assert report.counts["superseded"] == 0 and report.counts["merged"] == 0
    r = api.client.patch(f"{api.base}/memories/{old['id']}", json={"status": "active"})
    assert r.status_code == 200, r.text


def test_a_less_trusted_newer_claim_sends_both_to_review(
    api: Api, settings: Settings, migrated: str
) -> None:
    old, new = plain(api, {**PYTHON, "source": "user"}, GO)
    _, moves = reflect_pass(settings, migrated, now=NOW, namespace=api.ns)
    assert {(m.action, str(m.id)) for m in moves} >= {
        ("review", old["id"]),
        ("review", new["id"]),
    }
    assert statuses(api, old["id"], new["id"]) == ["quarantined", "quarantined"]
    assert {str(old["id"]), str(new["id"])} <= set(listed(api, status="quarantined"))


def test_reflection_is_a_policy_setting(api: Api, settings: Settings, migrated: str) -> None:
    old, new = plain(api, PYTHON, GO)
    r = api.client.put(f"{api.base}/policy", json={"lifecycle": {"reflection_per_run": 0}})
    assert r.status_code == 200, r.text
    report, _ = reflect_pass(settings, migrated, now=NOW, namespace=api.ns)
    assert report.counts["superseded"] == 0
    assert statuses(api, old["id"], new["id"]) == ["active", "active"]


def test_with_an_llm_reflection_distils_patterns(
    server: ThreadServer, migrated: str, api: Api, brain: FakeOpenAI
) -> None:
    events = plain(
        api,
        {
            "key": "event.standup_1",
            "value": "Morning meeting with the team at 8",
            "memory_type": "event",
        },
        {
            "key": "event.review_2",
            "value": "Moved the review to a morning meeting",
            "memory_type": "event",
        },
        {
            "key": "event.sync_3",
            "value": "Asked for a morning meeting with Sam",
            "memory_type": "event",
        },
        {"key": "event.lunch_4", "value": "Lunch with Priya", "memory_type": "event"},
    )
    evidence = sorted(str(e["id"]) for e in events[:3])
    settings = make_settings(llm_base_url=brain.url, llm_model="fake-chat", llm_api_key="sk")

    _, moves = reflect_pass(settings, migrated, now=NOW, namespace=api.ns, dry_run=True)
    assert [(m.action, m.key) for m in moves] == [("distilled", "user.meeting_time")]
    assert "user.meeting_time" not in {m["key"] for m in listed(api).values()}

    report, moves = reflect_pass(settings, migrated, now=NOW, namespace=api.ns)
    assert report.counts["distilled"] == 1
    (pattern,) = [m for m in listed(api).values() if m["key"] == "user.meeting_time"]
    assert pattern["value"] == "The user prefers morning meetings"
    assert pattern["source"] == "reflection" and pattern["memory_type"] == "preference"
    assert pattern["metadata"]["evidence"] == evidence
    assert "user.habit.unfounded" not in {m["key"] for m in listed(api).values()}
    history = " | ".join(r or "" for _, r in changes(api, pattern["id"]))
    assert all(e in history for e in evidence) and "pattern-v1" in history
    # said once: the next pass does not say it again
    report, _ = reflect_pass(settings, migrated, now=NOW, namespace=api.ns)
    assert report.counts["distilled"] == 0
    r = api.client.get(f"{api.base}/policy")
    assert r.json()["trust"]["sources"]["reflection"] == 0.6
