"""The operator's read endpoints behind the panel: namespaces, stats, recall log, sessions."""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import Api
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer


def test_namespaces_and_stats_count_what_is_there(client: httpx.Client, api: Api) -> None:
    api.observe({"key": "a", "value": "1"}, {"key": "b", "value": "2"}, {"key": "c", "value": "3"})
    mid = api.observe({"key": "d", "value": "4"})[0]["id"]
    assert (
        client.patch(f"{api.base}/memories/{mid}", json={"status": "archived"}).status_code == 200
    )
    api.append("open-one", "working")
    api.recall("a")
    listed = {n["namespace"]: n for n in client.get("/v1/namespaces").json()["namespaces"]}
    mine = listed[api.ns]
    assert mine["memories"] == {"active": 3, "archived": 1}
    assert mine["open_sessions"] == 1
    assert mine["recalls_last_hour"] == 1 and mine["recalls_last_day"] == 1
    assert mine["capacity"] == 100_000  # the default, until the namespace's policy sets one
    r = client.put(f"{api.base}/policy", json={"capacity": {"max_active_memories": 10}})
    assert r.status_code == 200, r.text
    listed = {n["namespace"]: n for n in client.get("/v1/namespaces").json()["namespaces"]}
    assert listed[api.ns]["capacity"] == 10
    stats = client.get(f"{api.base}/stats").json()
    assert stats["memories"] == mine["memories"]
    assert [h["recalls"] for h in stats["recalls_by_hour"]] == [1]
    empty = client.get(f"/v1/namespaces/nothing-{uuid.uuid4().hex[:8]}/stats").json()
    assert empty["memories"] == {} and empty["recalls_by_hour"] == []


def test_a_scoped_key_lists_only_its_namespaces(
    server: ThreadServer, migrated: str, api: Api
) -> None:
    api.observe({"key": "k", "value": "v"})
    other = Api(api.client, api.ns + "-other")
    other.observe({"key": "k", "value": "v"})
    made = hindsight("keys", "create", f"ov-{api.ns}", "--namespace", api.ns, database_url=migrated)
    assert made.returncode == 0, made.stderr
    h = {"Authorization": f"Bearer {made.stdout.strip()}"}
    names = [
        n["namespace"]
        for n in httpx.get(f"{server.url}/v1/namespaces", headers=h).json()["namespaces"]
    ]
    assert names == [api.ns]
    r = httpx.get(f"{server.url}/v1/namespaces/{other.ns}/recalls", headers=h)
    assert r.status_code == 403


def test_recall_log_pages_and_searches(client: httpx.Client, api: Api) -> None:
    api.observe({"key": "user.city", "value": "Porto"}, {"key": "user.tea", "value": "green"})
    for q in ("city one", "city two", "tea three"):
        api.recall(q, k=1)
    page = client.get(f"{api.base}/recalls", params={"limit": 2}).json()
    assert [r["query"] for r in page["recalls"]] == ["tea three", "city two"]
    rest = client.get(f"{api.base}/recalls", params={"limit": 2, "cursor": page["next_cursor"]})
    assert [r["query"] for r in rest.json()["recalls"]] == ["city one"]
    assert rest.json()["next_cursor"] is None
    top = api.recall("city", k=1)["results"][0]["key"]
    by_key = client.get(f"{api.base}/recalls", params={"key": top}).json()["recalls"]
    assert by_key and all(top in [x["key"] for x in r["results"]] for r in by_key)
    by_text = client.get(f"{api.base}/recalls", params={"query": "THREE"}).json()["recalls"]
    assert [r["query"] for r in by_text] == ["tea three"]
    by_actor = client.get(f"{api.base}/recalls", params={"actor": "someone-else"}).json()
    assert by_actor["recalls"] == []
    bad = client.get(f"{api.base}/recalls", params={"cursor": "not-an-id"})
    assert bad.status_code == 422 and "cursor" in bad.text


def test_sessions_and_their_jobs(client: httpx.Client, api: Api) -> None:
    api.append("s1", "one")
    api.append("s2", "two")
    api.append("s2", "three")
    sessions = client.get(f"{api.base}/sessions").json()["sessions"]
    assert [(s["session_id"], s["step_count"], s["live_steps"]) for s in sessions] == [
        ("s2", 2, 2),
        ("s1", 1, 1),
    ]
    assert client.get(f"{api.base}/sessions/s2/jobs").json()["jobs"] == []
    ended = client.post(f"{api.base}/sessions/s2:end").json()
    jobs = client.get(f"{api.base}/sessions/s2/jobs").json()["jobs"]
    assert [j["job_id"] for j in jobs] == [ended["consolidation"]["job_id"]]
