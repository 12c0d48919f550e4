"""The namespace policy document, recall feedback (REST and MCP), memory types and the
ranking's lifecycle factors."""

from __future__ import annotations

import asyncio
import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.retrieval.factors import LifecycleFactors, lifecycle_terms
from hindsight.retrieval.ranking import RankingConfig, rank
from hindsight.services.policy import PolicyService
from hindsight.wire.policy import Policy
from tests.conftest import Api, make_settings
from tests.support.lifecycle import sql
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer
from tests.test_mcp import call, over_http, run


def test_policy_defaults_partial_put_and_422_naming_the_field(api: Api) -> None:
    base = f"{api.base}/policy"
    policy = api.client.get(base).json()
    assert policy["lifecycle"]["cold_after_days"] == 30
    assert policy["lifecycle"]["archive_after_days"] == 180
    assert policy["lifecycle"]["delete_below_importance"] == 0.3
    assert policy["ranking"]["tier_weights"] == {"active": 1.0, "cold": 0.5}
    assert policy["ranking"]["recency_weight"] == 0 and policy["ranking"]["recency_tau_days"] == 30
    assert policy["capacity"]["max_active_memories"] == 100_000

    r = api.client.put(
        base,
        json={
            "lifecycle": {"cold_after_days": 7},
            "ranking": {"tier_weights": {"cold": 0.2}, "recency_weight": 0.3},
        },
    )
    assert r.status_code == 200, r.text
    got = api.client.get(base).json()
    assert got == r.json()
    assert (
        got["lifecycle"]["cold_after_days"] == 7 and got["lifecycle"]["archive_after_days"] == 180
    )
    assert got["ranking"]["tier_weights"] == {"active": 1.0, "cold": 0.2}

    for body, field in (
        ({"lifecycle": {"cold_after_days": -1}}, "lifecycle.cold_after_days"),
        ({"ranking": {"recency_weight": 2}}, "ranking.recency_weight"),
        ({"capacity": {"max_active": 5}}, "capacity.max_active"),
        ({"lifecycle": {"archive_after_days": 5}}, "lifecycle.archive_after_days"),
    ):
        r = api.client.put(base, json=body)
        assert r.status_code == 422, (body, r.text)
        assert field in r.text, (field, r.text)
    assert api.client.get(base).json() == got  # nothing changed

    # a PUT replaces the namespace's own fields: what it leaves out goes back to the default
    r = api.client.put(base, json={})
    assert r.json()["lifecycle"]["cold_after_days"] == 30


def test_policy_weights_change_recall_scores(api: Api) -> None:
    api.observe(
        {"key": "a", "value": "the blue bicycle in the garage", "importance": 1.0},
        {"key": "b", "value": "the blue bicycle at the station", "importance": 0.0},
    )
    before = {r["key"]: r for r in api.recall("blue bicycle", k=2)["results"]}
    r = api.client.put(f"{api.base}/policy", json={"ranking": {"importance_weight": 0.5}})
    assert r.status_code == 200
    after = {r["key"]: r for r in api.recall("blue bicycle", k=2)["results"]}
    assert after["a"]["components"]["importance_factor"] == 1.0
    assert after["b"]["components"]["importance_factor"] == 0.5

    # the first recall may already have raised b's access count: compare without that term
    def unboosted(hit: dict[str, Any]) -> float:
        return float(hit["score"]) / float(hit["components"]["access_boost"])

    assert math.isclose(unboosted(after["b"]), unboosted(before["b"]) * 0.5, rel_tol=1e-3)


def test_feedback_is_checked_stored_once_and_auditable(api: Api, server: ThreadServer) -> None:
    a, b, c = api.observe(
        {"key": "tea", "value": "likes green tea"},
        {"key": "coffee", "value": "likes black coffee"},
        {"key": "car", "value": "drives a red car"},
    )
    recall = api.recall("likes tea or coffee", k=2)
    returned = [r["id"] for r in recall["results"]]
    assert set(returned) == {a["id"], b["id"]}
    path = f"{api.base}/recalls/{recall['recall_id']}/feedback"

    r = api.client.post(path, json={"used": [c["id"]]})
    assert r.status_code == 422 and "was not returned by recall" in r.json()["error"]["message"]
    r = api.client.post(path, json={"used": [a["id"]], "unused": [a["id"]]})
    assert r.status_code == 422 and "also in unused" in r.json()["error"]["message"]
    r = api.client.post(f"{api.base}/recalls/{uuid.uuid4()}/feedback", json={"used": []})
    assert r.status_code == 404

    r = api.client.post(path, json={"used": [a["id"]], "unused": [b["id"]]})
    assert r.status_code == 200, r.text
    assert r.json()["recorded"] == 2
    again = api.client.post(path, json={"used": [a["id"]], "unused": [b["id"]]}).json()
    assert again["recorded"] == 0  # the same verdicts count once
    counts = {m["id"]: (m["used_count"], m["unused_count"]) for m in again["memories"]}
    assert counts == {a["id"]: (1, 0), b["id"]: (0, 1)}
    rows = sql(
        server.core.database_url,
        "SELECT memory_id::text, used FROM recall_feedback WHERE recall_id = %s ORDER BY used",
        recall["recall_id"],
    )
    assert rows == [(b["id"], False), (a["id"], True)]


def test_feedback_over_mcp(api: Api, server: ThreadServer) -> None:
    (m,) = api.observe({"key": "city", "value": "lives in Porto"})

    async def go() -> None:
        async with over_http(server.url) as client:
            found = await call(client, "memory_search", query="Porto", namespace=api.ns)
            out = await call(
                client,
                "memory_feedback",
                recall_id=found["recall_id"],
                used=[m["id"]],
                namespace=api.ns,
            )
            assert out["recorded"] == 1 and out["memories"][0]["used_count"] == 1

    run(go)


def test_event_and_summary_types_are_accepted(api: Api) -> None:
    e, s = api.observe(
        {"key": "trip.2026", "value": "flew to Lisbon on 3 May", "memory_type": "event"},
        {"key": "week.summary", "value": "a week of planning", "memory_type": "summary"},
    )
    assert (e["memory_type"], s["memory_type"]) == ("event", "summary")
    r = api.client.get(f"{api.base}/memories", params={"memory_type": "event"})
    assert [m["key"] for m in r.json()["memories"]] == ["trip.2026"]


def _row(**kw: object) -> dict[str, object]:
    now = datetime.now(UTC)
    base: dict[str, object] = {
        "id": uuid.uuid4(),
        "similarity": 0.8,
        "keyword": 0.0,
        "from_vector": True,
        "from_keyword": False,
        "confidence": 1.0,
        "access_count": 0,
        "status": "active",
        "importance": 0.5,
        "last_observed": now,
        "last_accessed": None,
    }
    base.update(kw)
    return base


def test_recency_and_importance_factors_multiply_the_score() -> None:
    now = datetime.now(UTC)
    f = LifecycleFactors(now=now, recency_weight=1.0, recency_tau_days=30, importance_weight=0.5)
    old = _row(last_observed=now - timedelta(days=30), importance=1.0)
    product, parts = lifecycle_terms(old, f)
    assert math.isclose(parts["recency"], math.exp(-1), rel_tol=1e-5)
    assert parts["importance_factor"] == 1.0 and parts["tier_weight"] == 1.0
    assert math.isclose(product, math.exp(-1), rel_tol=1e-5)
    # a recent access counts as activity
    accessed = _row(last_observed=now - timedelta(days=300), last_accessed=now)
    assert lifecycle_terms(accessed, f)[1]["recency"] == 1.0
    # with the default weights only the tier matters: today's ranking is unchanged
    plain = LifecycleFactors(now=now)
    ranked = rank([_row(), _row(status="cold", similarity=0.9)], RankingConfig(), 2, 0.0, plain)
    assert [r.components["status"] for r in ranked] == ["active", "cold"]
    assert ranked[1].components["tier_weight"] == 0.5
    assert all(r.components["recency_factor"] == 1.0 for r in ranked)


def test_cached_policies_hold_until_a_policy_changes_and_every_change_is_seen(
    fresh_db: str,
) -> None:
    """A process reads the policies' version once per ttl, not each namespace's policy:
    unchanged policies are served without the database. A PUT by another process moves
    the version and is seen within the ttl; a change made around the service (an
    operator in psql), a deletion included, once the cached policy is max_age old."""
    settings = make_settings()
    names = [f"p{i}" for i in range(20)]
    sql(
        fresh_db,
        "INSERT INTO namespace_policy (namespace, policy, updated_by) "
        "VALUES ('p0', '{\"capacity\": {\"max_active_memories\": 7}}', 'test')",
    )
    now = [0.0]

    def policies_on(pool: Any) -> PolicyService:
        return PolicyService(settings, pool, ttl=5.0, clock=lambda: now[0], max_age=60.0)

    async def cap(policies: PolicyService, name: str = "p0") -> int | None:
        capacity = (await policies.get(name)).capacity
        assert capacity is not None
        return capacity.max_active_memories

    async def scenario() -> None:
        pool = await open_pool(settings, fresh_db)
        policies = policies_on(pool)
        try:
            for name in names:
                await policies.get(name)
            assert await cap(policies) == 7
            # past the ttl, nothing changed: one read of the version, then every
            # namespace from the cache
            now[0] += 6
            await policies.get("p1")
            await pool.close()
            for name in names:
                await policies.get(name)
        finally:
            await pool.close()

        here, there = await open_pool(settings, fresh_db), await open_pool(settings, fresh_db)
        mine, other = policies_on(here), policies_on(there)
        try:
            assert await cap(mine) == 7 and await cap(other) == 7
            await other.put(
                "p0", Policy.model_validate({"capacity": {"max_active_memories": 9}}), actor="t"
            )
            assert await cap(other) == 9  # at once where it was made
            assert await cap(mine) == 7  # within the ttl, the cache answers
            now[0] += 6
            assert await cap(mine) == 9  # past it, the version moved

            sql(
                fresh_db,
                "UPDATE namespace_policy SET policy = "
                "'{\"capacity\": {\"max_active_memories\": 11}}' WHERE namespace = 'p0'",
            )
            now[0] += 6
            assert await cap(mine) == 9  # nothing moved the version
            now[0] += 60
            assert await cap(mine) == 11  # the cached policy was too old

            sql(fresh_db, "DELETE FROM namespace_policy WHERE namespace = 'p0'")
            now[0] += 61
            assert await cap(mine) == settings.namespace_capacity
        finally:
            await here.close()
            await there.close()

    asyncio.run(scenario())


def test_every_policy_field_has_one_setting_for_its_default() -> None:
    """A field added to the document without a HINDSIGHT_* default would be None in force;
    a setting naming a field that does not exist would be a default nobody reads."""
    from hindsight.config import POLICY_SETTINGS
    from hindsight.wire.policy import field_info

    def leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
        out = []
        for name, field in model.model_fields.items():
            section = next(
                (
                    a
                    for a in getattr(field.annotation, "__args__", ())
                    if isinstance(a, type) and issubclass(a, BaseModel)
                ),
                None,
            )
            out += leaves(section, f"{prefix}{name}.") if section else [f"{prefix}{name}"]
        return out

    fixed = {"ranking.tier_weights.active"}  # the active tier is the measure: always 1
    assert sorted(POLICY_SETTINGS.values()) == sorted(set(leaves(Policy)) - fixed)
    for name, path in POLICY_SETTINGS.items():
        assert Settings.model_fields[name].description == field_info(path).description


def test_feedback_is_counted_but_does_not_change_ranking(api: Api, ns: str) -> None:
    """The descriptions of REST, SDK and MCP say ranking does not read used_count: the same
    memories and recalls, with and without feedback, score the same. If ranking ever reads
    it, this fails, and the descriptions must change with it."""
    other = Api(api.client, ns + "-nofb")
    memories = [
        {"key": "user.city", "value": "lives in Porto"},
        {"key": "user.trip", "value": "flew to Porto in May"},
    ]
    for each in (api, other):
        each.observe(*memories)
    first = {each.ns: each.recall("Porto") for each in (api, other)}
    ids = {each.ns: [h["id"] for h in first[each.ns]["results"]] for each in (api, other)}
    for each in (api, other):
        for memory_id in ids[each.ns]:
            wait_until(
                lambda e=each, m=memory_id: e.get(m)["access_count"],
                "the recall's access counts are flushed",
                accept=lambda n: n == 1,
            )
    fb = api.client.post(
        f"{api.base}/recalls/{first[api.ns]['recall_id']}/feedback",
        json={"used": [ids[api.ns][-1]], "unused": [ids[api.ns][0]]},
    )
    assert fb.status_code == 200 and fb.json()["recorded"] == 2, fb.text
    with_fb, without = api.recall("Porto")["results"], other.recall("Porto")["results"]
    assert [(h["key"], h["score"], h["components"]) for h in with_fb] == [
        (h["key"], h["score"], h["components"]) for h in without
    ]
    route = api.client.get("/openapi.json").json()["paths"][
        "/v1/namespaces/{namespace}/recalls/{recall_id}/feedback"
    ]["post"]
    assert "does not read these counts" in route["description"]
