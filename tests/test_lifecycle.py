"""The lifecycle: tiers by policy, warming, permanence, hard expiry, capacity, demotion and
the retroactive merge, run by the scheduler with an injected clock (nothing waits)."""

from __future__ import annotations

import asyncio
from typing import Any

from hindsight.config import Settings
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.copies import copies_drift
from tests.support.labels import label_drift
from tests.support.lifecycle import days_from_now, run_pass, run_pass_async, sql
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer


def statuses(api: Api, *ids: str) -> list[str]:
    out = []
    for memory_id in ids:
        r = api.client.get(f"{api.base}/memories/{memory_id}")
        out.append(r.json()["status"] if r.status_code == 200 else f"gone {r.status_code}")
    return out


def test_memories_cool_archive_and_go_by_policy_and_permanent_ones_never(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    fresh, idle, unimportant, kept = api.observe(
        {"key": "fresh", "value": "seen often", "importance": 0.4},
        {"key": "idle", "value": "seen once long ago", "importance": 0.4},
        {"key": "minor", "value": "a passing remark", "importance": 0.1},
        {"key": "vow", "value": "never forget this", "permanent": True, "importance": 0.1},
    )
    ids = [m["id"] for m in (fresh, idle, unimportant, kept)]

    # 29 days on: nothing is idle long enough
    report, moves = run_pass(settings, url, now=days_from_now(29), namespace=api.ns)
    assert report.ran and moves == []

    # 31 days on: every non-permanent memory turns cold
    report, moves = run_pass(settings, url, now=days_from_now(31), namespace=api.ns)
    assert {m.key for m in moves} == {"fresh", "idle", "minor"}
    assert statuses(api, *ids) == ["cold", "cold", "cold", "active"]
    cooled = api.history(idle["id"])[-1]
    assert cooled["change"] == "cooled" and cooled["actor"] == "lifecycle"
    assert cooled["reason"] == "no access or observation for 30 days"

    # re-observation warms a cold memory back to active, with the reason in history
    api.observe({"key": "fresh", "value": "seen often", "importance": 0.4})
    assert statuses(api, fresh["id"]) == ["active"]
    warmed = api.history(fresh["id"])[-1]
    assert warmed["change"] == "warmed" and warmed["reason"] == "observed again"

    # 91 days on: the unimportant one is deleted (not accessed for 90 days)
    _, moves = run_pass(settings, url, now=days_from_now(91), namespace=api.ns)
    assert [(m.key, m.action) for m in moves if m.rule == "deleted"] == [("minor", "delete")]
    deleted = api.history(unimportant["id"])[-1]
    assert deleted["change"] == "deleted"
    assert deleted["reason"] == "importance under 0.3 and not accessed for 90 days"

    # 181 days on: the rest is archived, out of the default list but listed on request
    _, moves = run_pass(settings, url, now=days_from_now(181), namespace=api.ns)
    assert statuses(api, fresh["id"], idle["id"], kept["id"]) == ["archived", "archived", "active"]
    assert api.history(idle["id"])[-1]["reason"] == (
        "no access or observation for 180 days and importance under 0.5"
    )
    listed = api.client.get(f"{api.base}/memories").json()["memories"]
    assert [m["key"] for m in listed] == ["vow"]
    archived = api.client.get(f"{api.base}/memories", params={"status": "archived"}).json()
    assert {m["key"] for m in archived["memories"]} == {"fresh", "idle"}
    assert api.recall("seen often long ago")["results"] == [] or all(
        r["key"] == "vow" for r in api.recall("seen often long ago")["results"]
    )


def test_cold_memories_rank_lower_and_a_recall_warms_them(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    cold, hot = api.observe(
        {"key": "train.platform", "value": "the train to Lyon leaves from platform 4"},
        {"key": "train.platform.old", "value": "the train to Lyon left from platform 4"},
    )
    sql(
        url,
        "UPDATE long_term_memory SET status = 'cold' WHERE id = %s",
        cold["id"],
    )
    body = api.recall("train to Lyon platform", k=2)
    by_key = {r["key"]: r for r in body["results"]}
    c = by_key["train.platform"]["components"]
    assert c["status"] == "cold" and c["tier_weight"] == 0.5
    assert by_key["train.platform.old"]["components"]["tier_weight"] == 1.0
    assert by_key["train.platform"]["score"] < by_key["train.platform.old"]["score"]
    assert c["recency_factor"] == 1.0 and c["importance_factor"] == 1.0  # weights 0: no effect
    # the recall warmed it (the access recorder writes within moments)
    wait_until(lambda: statuses(api, cold["id"]) == ["active"], "the cold memory warmed")
    assert [h["change"] for h in api.history(cold["id"])][-1] == "warmed"
    assert api.history(cold["id"])[-1]["reason"] == "recalled"
    assert hot["id"]


def test_hard_expiry_hides_then_purges_and_a_new_observation_starts_over(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    (m,) = api.observe({"key": "otp", "value": "code 4411", "ttl_seconds": 3600})
    got = api.get(m["id"])
    assert got["expires_at"] is not None
    # PATCH moves it; null clears it; a past expiry is refused
    r = api.client.patch(f"{api.base}/memories/{m['id']}", json={"ttl_seconds": 60})
    assert r.status_code == 200 and r.json()["expires_at"] < got["expires_at"]
    r = api.client.patch(
        f"{api.base}/memories/{m['id']}", json={"expires_at": "2001-01-01T00:00:00Z"}
    )
    assert r.status_code == 422 and "expires_at" in r.json()["error"]["message"]
    r = api.client.post(
        f"{api.base}/memories",
        json={"key": "x", "value": "y", "ttl_seconds": 5, "expires_at": "2999-01-01T00:00:00Z"},
    )
    assert r.status_code == 422 and "not both" in r.json()["error"]["message"]

    # time passes (the row's expiry moves into the past): never returned again
    sql(
        url,
        "UPDATE long_term_memory SET expires_at = now() - interval '1 second' WHERE id = %s",
        m["id"],
    )
    assert api.client.get(f"{api.base}/memories/{m['id']}").status_code == 404
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []
    assert api.recall("code 4411")["results"] == []

    # the purge deletes it, recorded as expired
    _, moves = run_pass(settings, url, namespace=api.ns)
    assert [(x.key, x.action) for x in moves] == [("otp", "expire")]
    history = api.history(m["id"])
    # expiry is a deletion, and a deletion erases: a tombstone without the value
    assert history[-1]["change"] == "expired" and history[-1]["value"] is None
    assert all(h["value"] is None for h in history)
    assert sql(url, "SELECT count(*) FROM long_term_memory WHERE id = %s", m["id"]) == [(0,)]

    # an expired key observed again (before any purge) is a new claim, not a reinforcement
    (n,) = api.observe({"key": "pin", "value": "1234", "ttl_seconds": 60})
    sql(
        url,
        "UPDATE long_term_memory SET expires_at = now() - interval '1 second' WHERE id = %s",
        n["id"],
    )
    (again,) = api.observe({"key": "pin", "value": "1234"})
    assert again["outcome"] == "created" and again["observation_count"] == 1
    assert api.get(again["id"])["expires_at"] is None
    # the old claim is gone, recorded as expired by the expiry, not by the writer
    assert sql(url, "SELECT count(*) FROM long_term_memory WHERE id = %s", n["id"]) == [(0,)]
    history = api.history(n["id"])
    assert (history[-1]["change"], history[-1]["actor"]) == ("expired", "expiry")


def test_low_confidence_never_recalled_are_archived_weekly(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    shaky, recalled, sure = api.observe(
        {"key": "rumour", "value": "the office moves to Mars", "confidence": 0.3},
        {"key": "hint", "value": "the office coffee machine is broken", "confidence": 0.3},
        {"key": "fact", "value": "the office is in Berlin", "confidence": 0.9},
    )
    api.recall("coffee machine broken", k=1)
    wait_until(
        lambda: (
            sql(url, "SELECT count(*) FROM memory_access WHERE memory_id = %s", recalled["id"])
            == [(1,)]
        ),
        "the recall's access is recorded",
    )
    # a day on: too young for the weekly pass (it looks at memories older than a week)
    _, moves = run_pass(settings, url, now=days_from_now(1), namespace=api.ns)
    assert moves == []
    _, moves = run_pass(settings, url, now=days_from_now(8), namespace=api.ns)
    assert [(m.key, m.rule) for m in moves] == [("rumour", "low_confidence")]
    assert api.history(shaky["id"])[-1]["reason"] == "confidence under 0.5 and never recalled"
    assert statuses(api, recalled["id"], sure["id"]) == ["active", "active"]


def test_two_schedulers_at_once_do_no_double_work(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    api.observe(*({"key": f"k{i:03d}", "value": f"note number {i}"} for i in range(120)))
    small = make_settings(lifecycle_batch_size=7)  # many short transactions

    async def both() -> list[Any]:
        return await asyncio.gather(
            *(run_pass_async(small, url, now=days_from_now(31), namespace=api.ns) for _ in "ab")
        )

    results = asyncio.run(both())
    moved = [len(moves) for _, moves in results]
    assert sum(moved) == 120
    assert sorted(r.ran for r, _ in results) in ([False, True], [True, True])
    rows = sql(
        url,
        "SELECT count(*), count(DISTINCT memory_id) FROM memory_history "
        "WHERE namespace = %s AND change = 'cooled'",
        api.ns,
    )
    assert rows == [(120, 120)]


def test_capacity_archives_the_lowest_value_down_to_the_cap(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    r = api.client.put(f"{api.base}/policy", json={"capacity": {"max_active_memories": 3}})
    assert r.status_code == 200, r.text
    api.observe(
        {"key": "a", "value": "alpha", "importance": 0.9, "confidence": 0.9},
        {"key": "b", "value": "bravo", "importance": 0.1, "confidence": 0.5},
        {"key": "c", "value": "charlie", "importance": 0.8, "confidence": 0.9},
        {"key": "d", "value": "delta", "importance": 0.2, "confidence": 0.2},
        {"key": "e", "value": "echo", "importance": 1.0, "confidence": 0.9, "permanent": True},
    )
    stats = api.client.get(f"{api.base}/stats").json()
    assert stats["over_capacity"] and stats["memories"]["active"] == 5
    assert "over the capacity of 3" in stats["warnings"][0]

    report, moves = run_pass(settings, url, namespace=api.ns)
    assert [m.key for m in moves if m.rule == "capacity"] == ["d", "b"]
    assert report.over_capacity == {api.ns: 5}
    ready = api.client.get("/readyz").json()
    assert any(api.ns in w and "capacity of 3" in w for w in ready["warnings"])
    stats = api.client.get(f"{api.base}/stats").json()
    assert stats["memories"]["active"] == 3 and not stats["over_capacity"]
    assert stats["last_capacity_archived"] == 2


def test_ending_a_session_demotes_its_events_after_the_delay(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    api.append("trip", "booked the train")
    event, lesson, other = api.observe(
        {
            "key": "trip.booked",
            "value": "booked the 9:02 train",
            "memory_type": "event",
            "importance": 0.8,
            "source": "session:trip",
        },
        {
            "key": "trip.lesson",
            "value": "book trains a week ahead",
            "memory_type": "reflection",
            "importance": 0.8,
            "source": "session:trip",
        },
        {
            "key": "meeting",
            "value": "met Ana",
            "memory_type": "event",
            "importance": 0.8,
            "source": "session:other",
        },
    )
    r = api.client.post(f"{api.base}/sessions/trip:end")
    assert r.status_code == 200, r.text
    _, moves = run_pass(settings, url, namespace=api.ns)  # the delay (an hour) has not passed
    assert [m for m in moves if m.rule == "session_demotion"] == []
    _, moves = run_pass(settings, url, now=days_from_now(0.05), namespace=api.ns)
    assert [m.key for m in moves if m.rule == "session_demotion"] == ["trip.booked"]
    assert api.get(event["id"])["importance"] == 0.4
    assert api.get(lesson["id"])["importance"] == 0.8 and api.get(other["id"])["importance"] == 0.8
    assert "session trip ended" in api.history(event["id"])[-1]["reason"]
    # a min_importance no longer admits it: the copy it is counted through followed
    assert copies_drift(url, api.ns) == [] and label_drift(url, api.ns) == []
    found = api.recall("booked the train", k=5, min_importance=0.5)["results"]
    assert event["id"] not in {hit["id"] for hit in found} and found
    _, moves = run_pass(settings, url, now=days_from_now(0.1), namespace=api.ns)
    assert [m for m in moves if m.rule == "session_demotion"] == []  # once only


def test_retroactive_merge_folds_near_duplicates_under_different_keys(
    api: Api, server: ThreadServer
) -> None:
    url = server.core.database_url
    # one batch: the write-time check compares with stored memories, not within the batch
    a, b, c = api.observe(
        {"key": "user.city", "value": "lives in Paris, France", "importance": 0.4},
        {
            "key": "user.home_city",
            "value": "lives in Paris, France",
            "importance": 0.9,
            "tags": ["home"],
        },
        {"key": "user.pet", "value": "has a cat called Miso"},
    )
    lenient = make_settings(dedup_threshold=0.8)
    _, moves = run_pass(lenient, url, namespace=api.ns)
    merged = [m for m in moves if m.rule == "merge"]
    assert [(m.key, m.action) for m in merged] == [("user.city", "merged")]
    keeper = api.get(b["id"])
    assert keeper["observation_count"] == 2 and keeper["importance"] == 0.9
    assert statuses(api, a["id"], c["id"]) == ["archived", "active"]
    assert f"merged into {b['id']}" in api.history(a["id"])[-1]["reason"]
    assert f"merged near-duplicate {a['id']}" in api.history(b["id"])[-1]["reason"]


def test_retroactive_merge_never_archives_a_permanent_memory(
    api: Api, server: ThreadServer
) -> None:
    url = server.core.database_url
    kept, twin, pinned, pinned_twin = api.observe(
        # the permanent one is the less important: it keeps the other all the same
        {"key": "user.town", "value": "lives in Lyon", "importance": 0.2, "permanent": True},
        {"key": "user.home_town", "value": "lives in Lyon", "importance": 0.9},
        # both permanent: neither may be archived, so they stay apart
        {"key": "user.dog", "value": "has a dog named Rex", "permanent": True},
        {"key": "user.pet_dog", "value": "has a dog named Rex", "permanent": True},
    )
    _, moves = run_pass(make_settings(dedup_threshold=0.8), url, namespace=api.ns)
    assert [(m.key, m.action) for m in moves if m.rule == "merge"] == [("user.home_town", "merged")]
    assert statuses(api, kept["id"], twin["id"], pinned["id"], pinned_twin["id"]) == [
        "active",
        "archived",
        "active",
        "active",
    ]
    assert api.get(kept["id"])["importance"] == 0.9


def test_retroactive_merge_checks_merge_per_run_memories_and_resumes_at_its_cursor(
    api: Api, server: ThreadServer
) -> None:
    url = server.core.database_url
    r = api.client.put(f"{api.base}/policy", json={"lifecycle": {"merge_per_run": 2}})
    assert r.status_code == 200, r.text
    # one batch (no write-time check within it), ids in this order: three first-comers,
    # then their twins under other keys, each twin the more important
    memories = api.observe(
        {"key": "user.city", "value": "lives in Paris, France", "importance": 0.4},
        {"key": "user.pet", "value": "has a cat called Miso", "importance": 0.4},
        {"key": "user.job", "value": "works as a nurse in Lyon", "importance": 0.4},
        {"key": "user.home_city", "value": "lives in Paris, France", "importance": 0.9},
        {"key": "user.pet_name", "value": "has a cat called Miso", "importance": 0.9},
        {"key": "user.job_title", "value": "works as a nurse in Lyon", "importance": 0.9},
    )
    ids = [m["id"] for m in memories]
    assert ids == sorted(ids)
    lenient = make_settings(dedup_threshold=0.8)

    def merged_and_cursor() -> tuple[list[str], str | None]:
        _, moves = run_pass(lenient, url, namespace=api.ns)
        rows = sql(
            url, "SELECT merge_cursor::text FROM namespace_lifecycle WHERE namespace = %s", api.ns
        )
        return [m.key for m in moves if m.rule == "merge"], rows[0][0]

    # run 1 checks the first two memories only: their twins are found, the third waits
    assert merged_and_cursor() == (["user.city", "user.pet"], ids[1])
    assert statuses(api, *ids) == ["archived", "archived", "active", "active", "active", "active"]
    # run 2 resumes after the cursor: the next two live ones (user.job, user.home_city)
    assert merged_and_cursor() == (["user.job"], ids[3])
    # run 3: the last two live ones, nothing left to merge; run 4 finds the end, starts over
    assert merged_and_cursor() == ([], ids[5])
    assert merged_and_cursor() == ([], None)
    assert statuses(api, *ids) == ["archived"] * 3 + ["active"] * 3


def test_cli_shows_progress_against_the_namespace_total(api: Api, server: ThreadServer) -> None:
    api.observe(*({"key": f"note.{i:02d}", "value": f"note number {i}"} for i in range(25)))
    out = hindsight(
        "maintenance",
        "lifecycle",
        "--namespace",
        api.ns,
        "--dry-run",
        "--as-of",
        days_from_now(45).strftime("%Y-%m-%d"),
        database_url=server.core.database_url,
        lifecycle_batch_size="10",
    )
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 25  # stdout: the moves only
    progress = [line for line in out.stderr.splitlines() if line.startswith(f"{api.ns}: ")]
    assert progress == [
        f"{api.ns}: 10/25 memories would move (40%), cooled",
        f"{api.ns}: 20/25 memories would move (80%), cooled",
        f"{api.ns}: 25/25 memories would move (100%), cooled",
    ]


def test_dry_run_lists_moves_and_changes_nothing(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    (m,) = api.observe({"key": "idle", "value": "old news", "importance": 0.4})
    _, moves = run_pass(settings, url, now=days_from_now(200), namespace=api.ns, dry_run=True)
    # one move per memory: the first rule that takes it (archived, not also cooled)
    assert [(x.key, x.rule) for x in moves] == [("idle", "archived")]
    assert statuses(api, m["id"]) == ["active"]
    assert [h["change"] for h in api.history(m["id"])] == ["created"]


def test_cli_prints_what_would_move_and_why(api: Api, server: ThreadServer) -> None:
    (m,) = api.observe({"key": "old.news", "value": "yesterday's weather"})
    out = hindsight(
        "maintenance",
        "lifecycle",
        "--namespace",
        api.ns,
        "--dry-run",
        "--as-of",
        days_from_now(45).strftime("%Y-%m-%d"),
        database_url=server.core.database_url,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"would cool\t{api.ns}\told.news\t{m['id']}\tno access or observation for 30 days"
    ]
    assert '"dry_run": true' in out.stderr
    assert statuses(api, m["id"]) == ["active"]


def test_the_periodic_pass_runs_once_per_interval_across_replicas(
    fresh_db: str, settings: Settings
) -> None:
    first, _ = run_pass(settings, fresh_db, due_after_seconds=3600)
    again, _ = run_pass(settings, fresh_db, due_after_seconds=3600)
    later, _ = run_pass(settings, fresh_db, now=days_from_now(0.1), due_after_seconds=3600)
    assert (first.ran, again.ran, later.ran) == (True, False, True)


def test_idle_memories_are_archived_only_when_unimportant(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    allergy, plain, minor = api.observe(
        {"key": "user.allergy", "value": "allergic to penicillin", "importance": 0.9},
        {"key": "user.city", "value": "lives in Lyon"},  # importance 0.5
        {"key": "chat.weather", "value": "talked about the rain", "importance": 0.4},
    )
    _, moves = run_pass(settings, url, now=days_from_now(181), namespace=api.ns)
    assert [m.key for m in moves if m.rule == "archived"] == ["chat.weather"]
    assert statuses(api, allergy["id"], plain["id"], minor["id"]) == ["cold", "cold", "archived"]
    assert api.history(minor["id"])[-1]["reason"] == (
        "no access or observation for 180 days and importance under 0.5"
    )
    # a policy that archives whatever the importance (1: the old rule)
    r = api.client.put(f"{api.base}/policy", json={"lifecycle": {"archive_below_importance": 1}})
    assert r.status_code == 200, r.text
    assert r.json()["lifecycle"]["archive_below_importance"] == 1
    _, moves = run_pass(settings, url, now=days_from_now(181), namespace=api.ns)
    assert statuses(api, allergy["id"], plain["id"]) == ["archived", "archived"]


def test_retention_per_memory_type_and_per_tag(
    api: Api, server: ThreadServer, settings: Settings
) -> None:
    url = server.core.database_url
    r = api.client.put(
        f"{api.base}/policy",
        json={
            "lifecycle": {
                "by_type": {"preference": {"cold_after_days": 90, "archive_after_days": 400}},
                "by_tag": {
                    "health": {"cold_after_days": 365, "archive_after_days": 3650},
                    "smalltalk": {
                        "cold_after_days": 2,
                        "archive_after_days": 7,
                        "archive_below_importance": 1,
                    },
                },
            }
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["lifecycle"]["by_tag"]["health"]["cold_after_days"] == 365
    fact, pref, health, chat = api.observe(
        {"key": "user.city", "value": "lives in Lyon", "importance": 0.4},
        {
            "key": "user.tea",
            "value": "prefers green tea",
            "memory_type": "preference",
            "importance": 0.4,
        },
        {
            "key": "user.allergy",
            "value": "allergic to penicillin",
            "memory_type": "preference",
            "tags": ["health"],
            "importance": 0.4,
        },
        {
            "key": "chat.rain",
            "value": "talked about the rain",
            "tags": ["smalltalk"],
            "importance": 0.9,
        },
    )
    ids = [m["id"] for m in (fact, pref, health, chat)]
    _, moves = run_pass(settings, url, now=days_from_now(8), namespace=api.ns)
    assert [(m.key, m.rule) for m in moves] == [("chat.rain", "archived")]
    assert api.history(chat["id"])[-1]["reason"] == (
        "no access or observation for 7 days (tag smalltalk)"
    )
    _, moves = run_pass(settings, url, now=days_from_now(31), namespace=api.ns)
    assert [(m.key, m.rule) for m in moves] == [("user.city", "cooled")]
    _, moves = run_pass(settings, url, now=days_from_now(91), namespace=api.ns)
    assert [(m.key, m.rule) for m in moves] == [("user.tea", "cooled")]
    assert api.history(pref["id"])[-1]["reason"] == (
        "no access or observation for 90 days (memory_type preference)"
    )
    _, moves = run_pass(settings, url, now=days_from_now(366), namespace=api.ns)
    assert sorted((m.key, m.rule) for m in moves) == [
        ("user.allergy", "cooled"),
        ("user.city", "archived"),
    ]
    assert statuses(api, *ids) == ["archived", "cold", "cold", "archived"]
    # a scope must cool before it archives, like the namespace
    r = api.client.put(
        f"{api.base}/policy",
        json={"lifecycle": {"by_tag": {"x": {"cold_after_days": 50, "archive_after_days": 40}}}},
    )
    assert r.status_code == 422 and "lifecycle.by_tag.x.archive_after_days" in r.text
    r = api.client.put(
        f"{api.base}/policy", json={"lifecycle": {"by_type": {"gossip": {"cold_after_days": 5}}}}
    )
    assert r.status_code == 422 and "gossip" in r.text
