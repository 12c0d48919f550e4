"""Exact counts under concurrency, across server processes.

Bursts past a worker's HINDSIGHT_MAX_IN_FLIGHT may be answered 503 `overloaded`; these
clients are the SDK, which asks again after Retry-After, so every observation lands."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from hindsight.client import Hindsight
from tests.conftest import ADMIN_KEY, Api
from tests.support.servers import subprocess_server


def observe_batch(url: str, ns: str, memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with Hindsight(url, ADMIN_KEY, timeout=60, max_retries=30) as sdk:
        return [r.model_dump(mode="json") for r in sdk.observe_many(ns, memories)]


def test_fifty_concurrent_reobservations_across_two_processes_count_exactly(
    migrated: str, redis_url: str, api: Api
) -> None:
    (first,) = api.observe({"key": "user.diet", "value": "vegetarian"})
    # a step small enough that 50 of them stay under the cap, so the sum is checkable
    env = {
        "HINDSIGHT_DATABASE_URL": migrated,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_REINFORCEMENT_STEP": "0.009",
    }
    with subprocess_server(env) as one, subprocess_server(env) as two:
        urls = [one, two] * 25

        def observe(url: str) -> dict[str, Any]:
            (result,) = observe_batch(url, api.ns, [{"key": "user.diet", "value": "vegetarian"}])
            return result

        with ThreadPoolExecutor(max_workers=50) as pool:
            results = list(pool.map(observe, urls))

    assert all(r["outcome"] == "reinforced" for r in results)
    # every request saw a distinct count: none was lost or doubled
    assert sorted(r["observation_count"] for r in results) == list(range(2, 52))
    memory = api.get(first["id"])
    assert memory["observation_count"] == 51
    assert memory["confidence"] == 0.95  # 0.5 + 50 × 0.009, exactly
    assert sorted(r["confidence"] for r in results) == [
        round(0.5 + 0.009 * i, 4) for i in range(1, 51)
    ]
    assert len(api.history(first["id"])) == 51


def test_concurrent_first_observations_create_one_memory(api: Api) -> None:
    def observe(i: int) -> dict[str, Any]:
        (result,) = observe_batch(
            str(api.client.base_url), api.ns, [{"key": "race", "value": "same"}]
        )
        return result

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(observe, range(20)))
    assert len({r["id"] for r in results}) == 1
    assert sorted(r["outcome"] for r in results).count("created") == 1
    assert sorted(r["observation_count"] for r in results) == list(range(1, 21))


def test_overlapping_batches_do_not_deadlock_or_lose_counts(api: Api) -> None:
    keys = [f"k{i}" for i in range(30)]

    def batch(i: int) -> None:
        order = keys if i % 2 else list(reversed(keys))
        client = httpx.Client(
            base_url=str(api.client.base_url), headers=api.client.headers, timeout=60
        )
        Api(client, api.ns).observe(*({"key": k, "value": "v"} for k in order))
        client.close()

    with ThreadPoolExecutor(max_workers=10) as pool:
        list(pool.map(batch, range(10)))
    page = api.client.get(f"{api.base}/memories", params={"limit": 100}).json()["memories"]
    assert {m["key"]: m["observation_count"] for m in page} == {k: 10 for k in keys}
