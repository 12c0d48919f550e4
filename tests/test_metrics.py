"""/metrics: a scrape, traffic, another scrape; the numbers move with what happened."""

from __future__ import annotations

import httpx

from tests.conftest import Api
from tests.support.cli import hindsight
from tests.support.poll import wait_until
from tests.support.scrape import total, value
from tests.support.servers import ThreadServer

RECALL = "/v1/namespaces/{namespace}/recall"


def test_values_move_with_traffic(client: httpx.Client, api: Api) -> None:
    before = client.get("/metrics")
    assert before.status_code == 200, before.text
    assert before.headers["content-type"].startswith("text/plain")
    b = before.text

    api.observe({"key": "user.city", "value": "Lisbon"}, {"key": "user.pet", "value": "cat"})
    api.observe({"key": "user.city", "value": "Lisbon"})  # reinforced
    hits = api.recall("which city", k=3)["results"]
    api.append("s1", "looked up the weather")
    api.steps("s1")
    api.steps("s1")
    assert client.get(f"{api.base}/memories/not-a-uuid").status_code == 422

    a = client.get("/metrics").text
    hist = "hindsight_http_request_duration_seconds_count"
    assert value(a, hist, method="POST", route=RECALL, status="200") == (
        value(b, hist, method="POST", route=RECALL, status="200") + 1
    )
    route = "/v1/namespaces/{namespace}/memories/{memory_id}"
    assert value(a, hist, method="GET", route=route, status="422") >= 1
    # the path's namespace never becomes a label value
    assert api.ns not in a
    for arm in ("vector", "keyword"):
        name = "hindsight_recall_arm_duration_seconds_count"
        assert value(a, name, arm=arm) == value(b, name, arm=arm) + 1
        name = "hindsight_recall_candidates_sum"
        assert value(a, name, arm=arm) >= value(b, name, arm=arm) + 1
    assert value(a, "hindsight_recall_results_sum") == (
        value(b, "hindsight_recall_results_sum") + len(hits)
    )
    assert value(a, "hindsight_recall_duration_seconds_count") == (
        value(b, "hindsight_recall_duration_seconds_count") + 1
    )
    outcomes = "hindsight_observe_outcomes_total"
    assert value(a, outcomes, outcome="created") == value(b, outcomes, outcome="created") + 2
    assert value(a, outcomes, outcome="reinforced") == value(b, outcomes, outcome="reinforced") + 1
    reads = "hindsight_working_memory_reads_total"
    moved = total(a, reads) - total(b, reads)
    assert moved == 2
    # the step just appended is in Redis: both reads were cache hits
    assert value(a, reads, source="redis") == value(b, reads, source="redis") + 2


def test_consolidation_jobs_are_timed(client: httpx.Client, api: Api) -> None:
    name = "hindsight_job_duration_seconds_count"
    before = value(client.get("/metrics").text, name, outcome="succeeded")
    api.append("done", "a step")
    assert client.post(f"{api.base}/sessions/done:end").status_code == 200
    wait_until(
        lambda: value(client.get("/metrics").text, name, outcome="succeeded"),
        "the job to show in the metrics",
        30,
        accept=lambda count: count == before + 1,
        interval=0.1,
    )


def test_metrics_need_a_key_for_every_namespace(
    server: ThreadServer, migrated: str, ns: str
) -> None:
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    made = hindsight("keys", "create", f"scoped-{ns}", "--namespace", ns, database_url=migrated)
    assert made.returncode == 0, made.stderr
    r = httpx.get(
        f"{server.url}/metrics", headers={"Authorization": f"Bearer {made.stdout.strip()}"}
    )
    assert r.status_code == 403
    assert "HINDSIGHT_METRICS_PUBLIC" in r.json()["error"]["message"]


def _spans(header: str) -> dict[str, float]:
    out = {}
    for part in header.split(","):
        name, _, dur = part.strip().partition(";dur=")
        out[name] = float(dur)
    return out


def test_a_recall_says_where_its_time_went(client: httpx.Client, api: Api) -> None:
    """Server-Timing: the recall's database time, its query embedding, and the service's
    whole time up to the response; a client can tell its own and the network's share."""
    api.observe({"key": "user.city", "value": "Lisbon"})
    response = client.post(f"{api.base}/recall", json={"query": "which city"})
    assert response.status_code == 200, response.text
    spans = _spans(response.headers["server-timing"])
    assert set(spans) >= {"db", "embed", "app"}
    assert 0 < spans["db"] < spans["app"]
    assert 0 < spans["embed"] < spans["app"]
    # any request carries the app's own time; only what ran is listed
    health = client.get("/healthz")
    assert set(_spans(health.headers["server-timing"])) == {"app"}
