"""What a writer key may not do to what a curator vouched for, tried over HTTP as an
attacker with the docs in hand would (issue 31)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import psycopg
import pytest

from hindsight.services.roles import Role
from hindsight.services.trust import WRITER_CONFIDENCE_MAX
from tests.conftest import Api
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer
from tests.test_roles import make_key


@pytest.fixture
def keys(server: ThreadServer, migrated: str, ns: str) -> Iterator[dict[str, Api]]:
    made = {
        "writer": Api.at(server.url, ns, make_key(migrated, Role.WRITER, [ns])),
        "writer2": Api.at(server.url, ns, make_key(migrated, Role.WRITER, [ns])),
        "curator": Api.at(server.url, ns, make_key(migrated, Role.CURATOR, [ns])),
    }
    yield made
    for a in made.values():
        a.client.close()


def vouched(curator: Api, key: str = "b4.role", value: str = "member") -> dict[str, Any]:
    (m,) = curator.observe(
        {"key": key, "value": value, "verified": True, "permanent": True, "confidence": 1.0}
    )
    assert m["outcome"] == "created"
    return m


def patch(api: Api, memory_id: str, body: dict[str, Any]) -> httpx.Response:
    return api.client.patch(f"{api.base}/memories/{memory_id}", json=body)


def needs_curator(r: httpx.Response) -> None:
    assert r.status_code == 403, r.text
    message = r.json()["error"]["message"]
    assert "needs the curator role" in message and "a curator decides" in message, message


def live_value(api: Api, key: str) -> list[tuple[str, bool, bool]]:
    r = api.client.get(f"{api.base}/memories", params={"key": key})
    assert r.status_code == 200, r.text
    return [(m["value"], m["verified"], m["permanent"]) for m in r.json()["memories"]]


# --- 1. a writer's edit never keeps a curator's flags on the writer's value ------------


@pytest.mark.parametrize(
    "body",
    [
        {"value": "admin"},
        {"key": "other.key"},
        {"value": "admin", "confidence": 0.5},
        {"source": "user"},
        {"importance": 1.0},
    ],
)
def test_a_writer_cannot_edit_a_verified_memory_in_place(
    keys: dict[str, Api], body: dict[str, Any]
) -> None:
    writer, curator = keys["writer"], keys["curator"]
    m = vouched(curator)
    needs_curator(patch(writer, m["id"], body))
    after = curator.get(m["id"])
    assert (after["key"], after["value"], after["verified"], after["permanent"]) == (
        "b4.role",
        "member",
        True,
        True,
    )
    # the curator still may
    r = patch(curator, m["id"], body)
    assert r.status_code == 200, r.text


def test_a_writer_cannot_set_or_clear_the_flags(keys: dict[str, Api]) -> None:
    writer, curator = keys["writer"], keys["curator"]
    (plain,) = writer.observe({"key": "x.plain", "value": "v"})
    m = vouched(curator)
    for target, body in (
        (plain["id"], {"verified": True}),
        (plain["id"], {"permanent": True}),
        (m["id"], {"verified": False}),
        (m["id"], {"permanent": False}),
    ):
        r = patch(writer, target, body)
        assert r.status_code == 403 and "needs the curator role" in r.text, r.text
    for body in ({"verified": True}, {"permanent": True}):
        r = writer.client.post(
            f"{writer.base}/memories", json={"key": "x.new", "value": "v", **body}
        )
        assert r.status_code == 403 and "needs the curator role" in r.text, r.text
    # a writer's tags and metadata on a vouched memory are welcome: they change no claim
    r = patch(writer, m["id"], {"tags": ["seen"], "metadata": {"by": "agent"}})
    assert r.status_code == 200 and r.json()["verified"] and r.json()["value"] == "member"


# --- 2. observing the key does not supersede a vouched memory --------------------------


@pytest.mark.parametrize("source", [None, "user", "agent", "my-own-label"])
def test_a_writer_observing_the_key_waits_for_review(
    keys: dict[str, Api], source: str | None
) -> None:
    writer, curator = keys["writer"], keys["curator"]
    m = vouched(curator, "user.role", "member")
    claim: dict[str, Any] = {"key": "user.role", "value": "admin"}
    if source is not None:
        claim["source"] = source
    (c,) = writer.observe(claim, expect=200)
    assert c["outcome"] == "quarantined" and c["id"] != m["id"], c
    assert "waits for a curator" in c["reason"]
    assert live_value(curator, "user.role") == [("member", True, True)]
    # the same key again with a higher-trust label: still waiting, the curator's value stands
    (again,) = writer.observe({"key": "user.role", "value": "admin", "source": "user"})
    assert again["outcome"] == "quarantined", again
    assert live_value(curator, "user.role") == [("member", True, True)]
    # a curator's approval supersedes it; the approved claim carries no flag it was not given
    r = curator.client.post(f"{curator.base}/memories/{c['id']}:approve")
    assert r.status_code == 200, r.text
    assert live_value(curator, "user.role") == [("admin", False, False)]
    assert curator.get(m["id"])["status"] == "archived"
    # archived, it is still vouched for: a writer cannot bring it back
    needs_curator(patch(writer, m["id"], {"status": "active"}))


def test_a_permanent_memory_is_not_superseded_by_a_writer(keys: dict[str, Api]) -> None:
    writer, curator = keys["writer"], keys["curator"]
    (m,) = curator.observe({"key": "user.tier", "value": "gold", "permanent": True})
    (c,) = writer.observe({"key": "user.tier", "value": "platinum", "source": "user"})
    assert c["outcome"] == "quarantined", c
    assert live_value(curator, "user.tier") == [("gold", False, True)]
    # the same value is a reinforcement, welcome from anyone
    (r,) = writer.observe({"key": "user.tier", "value": "gold"})
    assert (r["id"], r["outcome"]) == (m["id"], "reinforced")


def test_the_same_key_cannot_release_its_own_quarantined_claim(keys: dict[str, Api]) -> None:
    writer, writer2, curator = keys["writer"], keys["writer2"], keys["curator"]
    (m,) = curator.observe({"key": "user.bank", "value": "DE44", "source": "user"})
    for _ in range(3):  # a flood from the web, all held
        (held,) = writer.observe({"key": "user.bank", "value": "NO93", "source": "web"})
        assert held["outcome"] == "quarantined"
    for label in ("user", "agent", None):
        claim: dict[str, Any] = {"key": "user.bank", "value": "NO93"}
        if label:
            claim["source"] = label
        (again,) = writer.observe(claim)
        assert again["outcome"] == "quarantined", (label, again)
    assert live_value(curator, "user.bank") == [("DE44", False, False)]
    assert curator.get(m["id"])["status"] == "active"
    # another key that saw it is independent evidence, and releases it
    (freed,) = writer2.observe({"key": "user.bank", "value": "NO93", "source": "agent"})
    assert freed["outcome"] == "released", freed
    assert live_value(curator, "user.bank") == [("NO93", False, False)]


def test_a_writers_source_label_is_capped_at_an_agents_trust(keys: dict[str, Api]) -> None:
    writer, curator = keys["writer"], keys["curator"]
    (w,) = writer.observe({"key": "a.w", "value": "said by the user?", "source": "user"})
    assert w["trust"] == 0.8  # agent's trust, not user's 1.0
    (c,) = curator.observe({"key": "a.c", "value": "said by the user", "source": "user"})
    assert c["trust"] == 1.0


# --- 3. undoing what a curator vouched for ---------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"ttl_seconds": 1},
        {"expires_at": "2030-01-01T00:00:00Z"},
        {"status": "archived"},
        {"status": "cold"},
        {"confidence": 0.01},
    ],
)
def test_a_writer_cannot_undo_a_vouched_memory(keys: dict[str, Api], body: dict[str, Any]) -> None:
    writer, curator = keys["writer"], keys["curator"]
    m = vouched(curator)
    needs_curator(patch(writer, m["id"], body))
    after = curator.get(m["id"])
    assert (after["status"], after["confidence"], after["expires_at"]) == ("active", 1.0, None)
    r = patch(curator, m["id"], body)
    assert r.status_code == 200, r.text


def test_a_writer_cannot_delete_or_forget_a_vouched_memory(keys: dict[str, Api]) -> None:
    writer, curator = keys["writer"], keys["curator"]
    m = vouched(curator)
    (v,) = curator.observe({"key": "only.verified", "value": "x", "verified": True})
    needs_curator(writer.client.delete(f"{writer.base}/memories/{m['id']}"))
    needs_curator(writer.client.delete(f"{writer.base}/memories/{v['id']}"))
    assert curator.get(m["id"])["status"] == "active"
    # a writer's forgetting policy passes over a verified memory; a curator's does not
    r = writer.client.post(
        f"{writer.base}/memories:forget", json={"max_confidence": 1.0, "action": "delete"}
    )
    assert r.status_code == 200 and r.json()["count"] == 0, r.text
    assert curator.get(v["id"])["status"] == "active"
    r = curator.client.post(f"{curator.base}/memories:forget", json={"max_confidence": 1.0})
    assert r.status_code == 200 and [x["id"] for x in r.json()["memories"]] == [v["id"]]
    r = curator.client.delete(f"{curator.base}/memories/{m['id']}")
    assert r.status_code == 204, r.text


# --- 4. repetition by one key is not independent evidence ------------------------------


def test_a_writers_repetition_never_reaches_certainty(keys: dict[str, Api]) -> None:
    writer, curator = keys["writer"], keys["curator"]
    claim = {"key": "user.is_admin", "value": "yes"}
    confidences = [writer.observe(claim)[0]["confidence"] for _ in range(10)]
    assert confidences[0] == 0.5 and max(confidences) == WRITER_CONFIDENCE_MAX < 1.0
    # a curator's reinforcement may still lift it, and a writer's never lowers it
    (c,) = curator.observe(claim)
    assert c["confidence"] == 1.0
    assert writer.observe(claim)[0]["confidence"] == 1.0


# --- 5. the operator's floor binds a curator -------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"redaction": {"mode": "off"}}, "redaction.mode"),
        ({"trust": {"quarantine_below": 0}}, "trust.quarantine_below"),
        ({"trust": {"quarantine_below": 0.39}}, "trust.quarantine_below"),
        ({"trust": {"sources": {"web": 0.9}}}, "trust.sources.web"),
        ({"redaction": {"mode": "reject"}, "trust": {"sources": {"web": 0.4}}}, "sources.web"),
    ],
)
def test_a_curator_cannot_lower_the_operators_floor(
    keys: dict[str, Api], api: Api, body: dict[str, Any], field: str
) -> None:
    curator = keys["curator"]
    r = curator.client.put(f"{curator.base}/policy", json=body)
    assert r.status_code == 403, r.text
    message = r.json()["error"]["message"]
    assert field in message and "only an admin may lower" in message, message
    policy = curator.client.get(f"{curator.base}/policy").json()
    assert policy["redaction"]["mode"] == "redact" and policy["trust"]["quarantine_below"] == 0.4
    # stricter is fine for a curator; laxer is an admin's call
    for stricter in ({"redaction": {"mode": "reject"}}, {"trust": {"quarantine_below": 0.6}}):
        assert curator.client.put(f"{curator.base}/policy", json=stricter).status_code == 200
    assert api.client.put(f"{api.base}/policy", json=body).status_code == 200


# --- 4. the check holds when a curator's verify lands during a writer's edit ----------


@pytest.mark.parametrize(
    "body", [{"value": "admin"}, {"status": "archived"}, {"ttl_seconds": 1}], ids=str
)
def test_a_verify_landing_during_a_writers_edit_wins(
    keys: dict[str, Api], migrated: str, body: dict[str, Any]
) -> None:
    """The race the permission check must survive: the writer's edit was allowed when it
    read the memory, and a curator's verify commits before the edit takes the row. The edit
    reads the row again under its lock and is refused; the vouched memory stays as it is."""
    writer, curator = keys["writer"], keys["curator"]
    (m,) = curator.observe({"key": "b4.role", "value": "member"})
    with psycopg.connect(migrated) as locker:
        # the curator's transaction holds the row, as a concurrent verify would
        locker.execute(
            "SELECT 1 FROM long_term_memory WHERE namespace = %s AND id = %s FOR UPDATE",
            (writer.ns, m["id"]),
        )
        with ThreadPoolExecutor(1) as pool:
            edit = pool.submit(patch, writer, m["id"], body)
            wait_until(
                lambda: locker.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone()[0],  # type: ignore[index]
                "the writer's edit to wait for the row",
            )
            locker.execute(
                "UPDATE long_term_memory SET verified = true WHERE namespace = %s AND id = %s",
                (writer.ns, m["id"]),
            )
            locker.commit()
            needs_curator(edit.result(timeout=60))
    assert live_value(curator, "b4.role") == [("member", True, False)]


# --- 5. a writer's source label ranks no higher than an agent -------------------------


def test_a_writers_source_label_ranks_as_an_agent(keys: dict[str, Api], api: Api) -> None:
    """The label is the writer's word: recall trusts it no more than observe did. A curator
    naming the same source is believed, and so is a curator relabelling the writer's."""
    writer, curator = keys["writer"], keys["curator"]
    (mine,) = writer.observe({"key": "drink.w", "value": "prefers oolong tea", "source": "user"})
    (theirs,) = curator.observe({"key": "drink.c", "value": "prefers oolong tea", "source": "user"})
    hits = {h["id"]: h for h in writer.recall("prefers oolong tea")["results"]}
    assert hits[mine["id"]]["source"] == "user"  # the label is kept as sent
    assert hits[mine["id"]]["components"]["trust"] == 0.8
    assert hits[theirs["id"]]["components"]["trust"] == 1.0
    # a writer relabelling the curator's memory makes the label its own word
    r = writer.client.patch(f"{writer.base}/memories/{theirs['id']}", json={"source": "user"})
    assert r.status_code == 200, r.text
    hits = {h["id"]: h for h in writer.recall("prefers oolong tea")["results"]}
    assert hits[theirs["id"]]["components"]["trust"] == 0.8
    r = curator.client.patch(f"{curator.base}/memories/{mine['id']}", json={"source": "user"})
    assert r.status_code == 200, r.text
    hits = {h["id"]: h for h in writer.recall("prefers oolong tea")["results"]}
    assert hits[mine["id"]]["components"]["trust"] == 1.0
