"""`memories:forget`: archive and delete actions, least valuable first, `limit`, dry runs and
the permanent exemption."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api


def forget(api: Api, **policy: Any) -> dict[str, Any]:
    r = api.client.post(f"{api.base}/memories:forget", json=policy)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def seed(api: Api) -> dict[str, str]:
    rows = api.observe(
        {"key": "c2", "value": "a claim held at 0.2", "confidence": 0.2},
        {"key": "c1", "value": "a claim held at 0.1", "confidence": 0.1},
        {"key": "c3", "value": "a claim held at 0.3", "confidence": 0.3},
        {"key": "keep", "value": "a vow held at 0.1", "confidence": 0.1, "permanent": True},
        {"key": "sure", "value": "a claim held at 0.9", "confidence": 0.9},
    )
    return {r["key"]: r["id"] for r in rows}


def test_archive_least_confident_first_within_the_limit(api: Api) -> None:
    ids = seed(api)
    dry = forget(api, max_confidence=0.5, dry_run=True)
    assert [m["key"] for m in dry["memories"]] == ["c1", "c2", "c3"]  # ordered, no permanent
    assert api.get(ids["c1"])["status"] == "active"  # the dry run changed nothing

    out = forget(api, max_confidence=0.5, limit=2)
    assert out["action"] == "archive" and out["count"] == 2
    assert [m["key"] for m in out["memories"]] == ["c1", "c2"]
    assert [api.get(ids[k])["status"] for k in ("c1", "c2", "c3", "keep", "sure")] == [
        "archived",
        "archived",
        "active",
        "active",
        "active",
    ]
    last = api.history(ids["c1"])[-1]
    assert last["change"] == "archived" and last["reason"] == "forget: confidence <= 0.5"


def test_delete_action_removes_and_leaves_history_but_never_permanent(api: Api) -> None:
    ids = seed(api)
    out = forget(api, max_confidence=0.5, action="delete")
    assert sorted(m["key"] for m in out["memories"]) == ["c1", "c2", "c3"]
    for key in ("c1", "c2", "c3"):
        assert api.client.get(f"{api.base}/memories/{ids[key]}").status_code == 404
        assert api.history(ids[key])[-1]["change"] == "deleted"
    assert api.get(ids["keep"])["status"] == "active"
    assert forget(api, max_confidence=0.5, action="delete")["count"] == 0


def test_forget_needs_a_criterion_and_checks_its_fields(api: Api) -> None:
    r = api.client.post(f"{api.base}/memories:forget", json={"action": "archive"})
    assert r.status_code == 422 and "at least one of" in r.json()["error"]["message"]
    r = api.client.post(f"{api.base}/memories:forget", json={"max_confidence": 0.5, "limit": 0})
    assert r.status_code == 422 and "limit" in r.text
    r = api.client.post(
        f"{api.base}/memories:forget", json={"max_confidence": 0.5, "action": "shred"}
    )
    assert r.status_code == 422 and "action" in r.text


def test_forget_by_importance_and_of_every_memory_type(api: Api) -> None:
    rows = api.observe(
        {"key": "chat.hi", "value": "said hello", "importance": 0.1, "memory_type": "event"},
        {"key": "note", "value": "a passing note", "importance": 0.3, "memory_type": "summary"},
        {"key": "allergy", "value": "allergic to penicillin", "importance": 0.9},
    )
    ids = {r["key"]: r["id"] for r in rows}
    every_type = ["fact", "preference", "experience", "reflection", "relation", "event", "summary"]
    out = forget(api, max_importance=0.3, memory_types=every_type)
    assert sorted(m["key"] for m in out["memories"]) == ["chat.hi", "note"]
    assert api.get(ids["allergy"])["status"] == "active"
    assert api.history(ids["note"])[-1]["reason"].startswith("forget: importance <= 0.3")
    r = api.client.post(
        f"{api.base}/recall", json={"query": "penicillin", "memory_types": every_type}
    )
    assert r.status_code == 200 and [m["key"] for m in r.json()["results"]] == ["allergy"]
    r = api.client.post(f"{api.base}/memories:forget", json={"max_importance": 1.5})
    assert r.status_code == 422 and "max_importance" in r.text
