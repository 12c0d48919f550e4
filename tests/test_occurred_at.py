"""occurred_at: when a memory's or a step's thing happened, beside when it was recorded;
recall's time filters, and questions whose time words are read against a reference time."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from hindsight.client import Hindsight
from tests.conftest import ADMIN_KEY, Api
from tests.support.cli import hindsight
from tests.support.fake_openai import FakeOpenAI
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer
from tests.test_mcp import call, over_http


def at(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def listed(api: Api, **params: Any) -> dict[str, dict[str, Any]]:
    r = api.client.get(f"{api.base}/memories", params={"limit": 1000, **params})
    assert r.status_code == 200, r.text
    return {m["key"]: m for m in r.json()["memories"]}


# --- storing it ----------------------------------------------------------------------------


def test_observe_patch_and_append_carry_occurred_at(api: Api) -> None:
    one = api.client.post(
        f"{api.base}/memories",
        json={"key": "trip.lisbon", "value": "flew to Lisbon", "memory_type": "event",
              "occurred_at": "2024-05-03T10:00:00+02:00"},
    )  # fmt: skip
    assert one.status_code == 201, one.text
    (batch, unknown) = api.observe(
        {"key": "trip.porto", "value": "took the train to Porto",
         "occurred_at": "2024-05-07T09:30:00Z"},
        {"key": "user.city", "value": "Oslo"},
    )  # fmt: skip
    lisbon = api.get(one.json()["id"])
    # stored in UTC, the same instant
    assert at(lisbon["occurred_at"]) == datetime(2024, 5, 3, 8, 0, tzinfo=UTC)
    assert at(api.get(batch["id"])["occurred_at"]) == datetime(2024, 5, 7, 9, 30, tzinfo=UTC)
    assert api.get(unknown["id"])["occurred_at"] is None
    assert at(listed(api)["trip.porto"]["occurred_at"]) == datetime(2024, 5, 7, 9, 30, tzinfo=UTC)

    moved = api.client.patch(
        f"{api.base}/memories/{lisbon['id']}", json={"occurred_at": "2024-05-04T00:00:00+00:00"}
    )
    assert moved.status_code == 200, moved.text
    assert at(moved.json()["occurred_at"]) == datetime(2024, 5, 4, tzinfo=UTC)
    # a change of when alone is a change: history has it
    assert [h["change"] for h in api.history(lisbon["id"])] == ["created", "updated"]
    cleared = api.client.patch(f"{api.base}/memories/{lisbon['id']}", json={"occurred_at": None})
    assert cleared.status_code == 200 and cleared.json()["occurred_at"] is None

    step = api.append("replay", "we landed in Lisbon", occurred_at="2024-05-03T18:00:00+02:00")
    assert at(step["occurred_at"]) == datetime(2024, 5, 3, 16, 0, tzinfo=UTC)
    plain = api.append("replay", "and took a taxi")
    assert plain["occurred_at"] is None
    # read back from Redis, and from PostgreSQL (paging back skips the cache)
    assert [at(s["occurred_at"]) for s in api.steps("replay")] == [at(step["occurred_at"]), None]
    older = api.client.get(
        f"{api.base}/sessions/replay/steps", params={"recent": 5, "before": 1}
    ).json()["steps"]
    assert at(older[0]["occurred_at"]) == datetime(2024, 5, 3, 16, 0, tzinfo=UTC)


def test_a_naive_time_is_refused_saying_to_add_a_timezone_and_changes_nothing(api: Api) -> None:
    (kept,) = api.observe({"key": "user.city", "value": "Oslo"})
    naive = "2024-05-03T10:00:00"
    attempts = [
        ("post", "/memories", {"key": "trip.rome", "value": "Rome", "occurred_at": naive},
         "occurred_at"),
        ("post", "/memories:batch",
         {"memories": [{"key": "trip.oslo", "value": "ok"},
                       {"key": "trip.rome", "value": "Rome", "occurred_at": naive}]},
         "memories[1].occurred_at"),
        ("patch", f"/memories/{kept['id']}", {"occurred_at": naive, "value": "Bergen"},
         "occurred_at"),
        ("post", "/sessions/s1/steps", {"content": "landed", "occurred_at": "2024-05-03"},
         "occurred_at"),
        ("post", "/recall", {"query": "city", "reference_time": naive}, "reference_time"),
    ]  # fmt: skip
    for method, path, body, field in attempts:
        r = api.client.request(method, api.base + path, json=body)
        assert r.status_code == 422, (path, r.text)
        message = r.json()["error"]["message"]
        assert message.startswith(f"{field}: needs a timezone: add one"), message
    r = api.client.get(f"{api.base}/memories", params={"occurred_after": naive})
    assert r.status_code == 422 and "needs a timezone" in r.json()["error"]["message"]
    assert set(listed(api)) == {"user.city"}
    assert api.get(kept["id"])["value"] == "Oslo" and api.get(kept["id"])["occurred_at"] is None
    assert api.steps("s1") == []


def test_reinforcement_keeps_the_earliest_time_and_a_new_value_takes_its_own(api: Api) -> None:
    def observe(value: str, occurred_at: str | None) -> dict[str, Any]:
        item = {"key": "trip.lisbon", "value": value, "memory_type": "event"}
        (result,) = api.observe({**item, **({"occurred_at": occurred_at} if occurred_at else {})})
        return api.get(result["id"])

    assert observe("flew to Lisbon", None)["occurred_at"] is None
    first = datetime(2024, 5, 10, tzinfo=UTC)
    assert at(observe("flew to Lisbon", "2024-05-10T00:00:00Z")["occurred_at"]) == first
    # the same claim reported later happened no later than its first report
    assert at(observe("flew to Lisbon", "2024-05-20T00:00:00Z")["occurred_at"]) == first
    earlier = observe("flew to Lisbon", "2024-05-03T00:00:00Z")
    assert at(earlier["occurred_at"]) == datetime(2024, 5, 3, tzinfo=UTC)
    assert at(observe("flew to Lisbon", None)["occurred_at"]) == datetime(2024, 5, 3, tzinfo=UTC)
    assert earlier["observation_count"] == 4
    # a new value is a new claim, with its own time (or none)
    moved = observe("flew to Madrid", "2024-06-01T00:00:00Z")
    assert at(moved["occurred_at"]) == datetime(2024, 6, 1, tzinfo=UTC)
    assert observe("flew to Rome", None)["occurred_at"] is None


# --- filtering on it -----------------------------------------------------------------------


def test_list_recall_and_forget_filter_on_when_it_occurred(api: Api) -> None:
    api.observe(
        {"key": "trip.may", "value": "hiked in the hills", "occurred_at": "2024-05-10T12:00:00Z"},
        {"key": "trip.june", "value": "hiked by the sea", "occurred_at": "2024-06-10T12:00:00Z"},
        {"key": "trip.now", "value": "hiked in the park"},  # no time: when it was recorded
    )
    may = {"occurred_after": "2024-05-01T00:00:00Z", "occurred_before": "2024-06-01T00:00:00Z"}
    assert set(listed(api, **may)) == {"trip.may"}
    assert set(listed(api, occurred_after="2024-06-01T00:00:00Z")) == {"trip.june", "trip.now"}
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    assert set(listed(api, occurred_after=today.isoformat())) == {"trip.now"}

    found = api.recall("hiked", **may)["results"]
    assert [r["key"] for r in found] == ["trip.may"]
    assert at(found[0]["occurred_at"]) == datetime(2024, 5, 10, 12, tzinfo=UTC)
    r = api.client.post(
        f"{api.base}/recall",
        json={"query": "hiked", "occurred_after": "2024-06-01T00:00:00Z",
              "occurred_before": "2024-05-01T00:00:00Z"},
    )  # fmt: skip
    assert r.status_code == 422 and "occurred_after: must be earlier" in r.text

    forget = api.client.post(
        f"{api.base}/memories:forget",
        json={"max_confidence": 1, "occurred_before": "2024-06-01T00:00:00Z", "dry_run": True},
    )
    assert forget.status_code == 200, forget.text
    assert [m["key"] for m in forget.json()["memories"]] == ["trip.may"]


# --- questions with a time in them ---------------------------------------------------------


def test_last_may_ranks_the_may_memory_first_among_otherwise_equal_ones(api: Api) -> None:
    same = "went hiking in the hills with friends"
    api.client.post(
        f"{api.base}/memories:batch",
        json={"dedup": False, "memories": [
            {"key": "diary.a", "value": same, "occurred_at": "2023-05-14T10:00:00Z"},
            {"key": "diary.b", "value": same, "occurred_at": "2024-03-14T10:00:00Z"},
            {"key": "diary.c", "value": same, "occurred_at": "2024-05-14T10:00:00Z"},
            {"key": "diary.d", "value": same, "occurred_at": "2024-07-14T10:00:00Z"},
        ]},
    ).raise_for_status()  # fmt: skip

    def ask(reference: str, **extra: Any) -> dict[str, Any]:
        return api.recall("what hiking did I do last May?", reference_time=reference, **extra)

    june = ask("2024-06-12T09:00:00+02:00")
    assert june["results"][0]["key"] == "diary.c"
    window = june["time_window"]
    assert window["expression"] == "last May"
    assert at(window["start"]) == datetime.fromisoformat("2024-05-01T00:00:00+02:00")
    assert at(window["end"]) == datetime.fromisoformat("2024-06-01T00:00:00+02:00")
    assert at(window["reference_time"]) == datetime.fromisoformat("2024-06-12T09:00:00+02:00")
    components = {r["key"]: r["components"] for r in june["results"]}
    assert components["diary.c"]["time_factor"] == 1.0
    assert components["diary.b"]["time_factor"] == 0.2  # the default weight, 0.8
    assert at(components["diary.c"]["time"]) == datetime(2024, 5, 14, 10, tzinfo=UTC)
    assert june["results"][0]["score"] > 4 * june["results"][1]["score"]
    # the same words asked before May 2024 mean May 2023
    assert ask("2024-04-10T09:00:00Z")["results"][0]["key"] == "diary.a"
    # the recall log says which time the query named
    logged = api.client.get(f"{api.base}/recalls/{june['recall_id']}").json()
    assert logged["filters"]["time_window"]["expression"] == "last May"
    assert logged["filters"]["reference_time"] == "2024-06-12T09:00:00+02:00"

    # without reading times the words are just words: no window, no factor
    plain = ask("2024-06-12T09:00:00+02:00", resolve_time=False)
    assert plain["time_window"] is None
    assert {r["components"]["time_factor"] for r in plain["results"]} == {None}
    # a query without a time has no window either
    assert api.recall("hiking in the hills")["time_window"] is None


def test_a_memory_without_a_time_counts_as_occurring_when_it_was_recorded(api: Api) -> None:
    api.observe({"key": "note.today", "value": "bought a new kettle"})
    api.observe({"key": "note.old", "value": "bought a new kettle too",
                 "occurred_at": "2020-01-01T00:00:00Z"})  # fmt: skip
    found = api.recall("what did I buy today?")
    assert found["time_window"]["expression"] == "today"
    factors = {r["key"]: r["components"]["time_factor"] for r in found["results"]}
    assert factors == {"note.today": 1.0, "note.old": 0.2}


def test_the_policy_sets_the_time_weight(api: Api) -> None:
    assert api.client.get(f"{api.base}/policy").json()["ranking"]["time_weight"] == 0.8
    r = api.client.put(f"{api.base}/policy", json={"ranking": {"time_weight": 0.3}})
    assert r.status_code == 200 and r.json()["ranking"]["time_weight"] == 0.3
    api.observe(
        {"key": "diary.may", "value": "went sailing", "occurred_at": "2024-05-05T10:00:00Z"},
        {"key": "diary.june", "value": "went sailing again", "occurred_at": "2024-06-05T10:00Z"},
    )
    found = api.recall("sailing in May", reference_time="2024-07-01T00:00:00Z")
    factors = {r["key"]: r["components"]["time_factor"] for r in found["results"]}
    assert factors == {"diary.may": 1.0, "diary.june": pytest.approx(0.7)}
    bad = api.client.put(f"{api.base}/policy", json={"ranking": {"time_weight": 2}})
    assert bad.status_code == 422 and "ranking.time_weight" in bad.text


# --- export and import ---------------------------------------------------------------------


def test_export_and_import_keep_occurred_at_and_old_exports_still_import(
    server: ThreadServer, migrated: str, api: Api, tmp_path: Path
) -> None:
    api.observe(
        {"key": "trip.lisbon", "value": "flew to Lisbon", "occurred_at": "2024-05-03T08:00:00Z"},
        {"key": "user.city", "value": "Oslo"},
    )
    api.append("s1", "landed in Lisbon", occurred_at="2024-05-03T16:00:00Z")
    text = api.client.get(f"{api.base}:export", params={"sessions": "true"}).text
    header = json.loads(text.splitlines()[0])
    assert header["version"] == 2
    dump = tmp_path / "export.jsonl"
    dump.write_text(text)
    copy = Api(api.client, api.ns + "-copy")
    done = hindsight("import", str(dump), "--namespace", copy.ns, database_url=migrated)
    assert done.returncode == 0, done.stderr
    restored = listed(copy)
    assert at(restored["trip.lisbon"]["occurred_at"]) == datetime(2024, 5, 3, 8, tzinfo=UTC)
    assert restored["user.city"]["occurred_at"] is None
    assert at(copy.steps("s1")[0]["occurred_at"]) == datetime(2024, 5, 3, 16, tzinfo=UTC)

    # a version 1 export (before occurred_at) still imports, its times unknown
    old = []
    for raw in text.splitlines():
        line = json.loads(raw)
        line.pop("occurred_at", None)
        for step in line.get("steps", []) if line.get("type") == "session" else []:
            step.pop("occurred_at", None)
        if "format" in line:
            line["version"] = 1
        old.append(json.dumps(line))
    (tmp_path / "v1.jsonl").write_text("\n".join(old) + "\n")
    v1 = Api(api.client, api.ns + "-v1")
    done = hindsight("import", str(tmp_path / "v1.jsonl"), "--namespace", v1.ns,
                     database_url=migrated)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {k: m["occurred_at"] for k, m in listed(v1).items()} == {
        "trip.lisbon": None,
        "user.city": None,
    }
    assert v1.steps("s1")[0]["occurred_at"] is None


def test_bulk_import_lines_carry_occurred_at(migrated: str, api: Api, tmp_path: Path) -> None:
    lines = tmp_path / "memories.jsonl"
    lines.write_text(
        json.dumps({"namespace": api.ns, "key": "trip.rome", "value": "Rome",
                    "occurred_at": "2023-09-01T00:00:00Z"}) + "\n"
    )  # fmt: skip
    done = hindsight("import", str(lines), database_url=migrated)
    assert done.returncode == 0, done.stderr
    assert at(listed(api)["trip.rome"]["occurred_at"]) == datetime(2023, 9, 1, tzinfo=UTC)


# --- the SDK and MCP -----------------------------------------------------------------------


def test_the_sdk_sends_datetimes(server: ThreadServer, ns: str) -> None:
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        when = datetime(2024, 5, 14, 10, tzinfo=UTC)
        stored = hs.observe(ns, "diary.may", "went sailing", occurred_at=when)
        hs.observe_many(ns, [{"key": "diary.june", "value": "went sailing again",
                              "occurred_at": datetime(2024, 6, 14, tzinfo=UTC)}])  # fmt: skip
        assert hs.get(ns, str(stored.id)).occurred_at == when
        found = hs.recall(ns, "sailing last May", reference_time=datetime(2024, 6, 20, tzinfo=UTC))
        assert found.results[0].key == "diary.may" and found.time_window is not None
        assert found.results[0].components.time_factor == 1.0
        page = hs.list_memories(ns, occurred_before=datetime(2024, 6, 1, tzinfo=UTC))
        assert [m.key for m in page.memories] == ["diary.may"]
        moved = hs.update(ns, str(stored.id), occurred_at=datetime(2024, 5, 1, tzinfo=UTC))
        assert moved.occurred_at == datetime(2024, 5, 1, tzinfo=UTC)
        step = hs.append(ns, "s1", "sailed", occurred_at=when)
        assert step.occurred_at == when


def test_mcp_tools_take_occurred_at_and_the_reference_time(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "occurred_at" in tools["memory_store"].input_schema["properties"]
            assert "reference_time" in tools["memory_search"].input_schema["properties"]
            stored = await call(client, "memory_store", key="diary.may", value="went sailing",
                                occurred_at="2024-05-14T10:00:00Z", namespace=ns)  # fmt: skip
            await call(client, "memory_store", key="diary.june", value="went sailing again",
                       occurred_at="2024-06-14T10:00:00Z", namespace=ns)  # fmt: skip
            found = await call(client, "memory_search", query="sailing last May",
                               reference_time="2024-06-20T00:00:00Z", namespace=ns)  # fmt: skip
            assert found["results"][0]["id"] == stored["id"]
            assert found["time_window"]["expression"] == "last May"
            updated = await call(client, "memory_update", memory_id=stored["id"],
                                 occurred_at="2024-05-01T00:00:00Z", namespace=ns)  # fmt: skip
            assert at(updated["occurred_at"]) == datetime(2024, 5, 1, tzinfo=UTC)
            step = await call(client, "working_memory_append", session_id="s1", content="sailed",
                              occurred_at="2024-05-14T10:00:00Z", namespace=ns)  # fmt: skip
            assert at(step["occurred_at"]) == datetime(2024, 5, 14, 10, tzinfo=UTC)
            with pytest.raises(Exception, match="needs a timezone"):
                await call(client, "memory_store", key="k", value="v",
                           occurred_at="2024-05-14T10:00:00", namespace=ns)  # fmt: skip

    asyncio.run(go())


# --- extraction and consolidation ----------------------------------------------------------


def test_extraction_takes_occurred_at_from_the_models_answer(
    llm_api: Api, brain: FakeOpenAI
) -> None:
    messages = [
        {"role": "user", "content": "event trip.lisbon: flew to Lisbon on 2024-05-03"},
        {"role": "user", "content": "event dentist.visit: went to the dentist yesterday",
         "occurred_at": "2024-06-12T09:00:00+02:00"},
        {"role": "user", "content": "my favorite color is green"},
    ]  # fmt: skip
    r = llm_api.client.post(f"{llm_api.base}/memories:extract", json={"messages": messages})
    assert r.status_code == 200, r.text
    kept = {m["key"]: m for m in r.json()["memories"]}
    assert at(kept["trip.lisbon"]["occurred_at"]) == datetime(2024, 5, 3, tzinfo=UTC)
    assert at(kept["dentist.visit"]["occurred_at"]) == datetime(2024, 6, 11, tzinfo=UTC)
    assert kept["user.favorite_color"]["occurred_at"] is None
    stored = listed(llm_api)
    assert at(stored["trip.lisbon"]["occurred_at"]) == datetime(2024, 5, 3, tzinfo=UTC)
    assert stored["user.favorite_color"]["occurred_at"] is None
    # the model was told when each message was said, and the time now
    prompt = next(
        m["content"]
        for req in reversed(brain.requests)
        if req["path"] == "chat"
        for m in req["body"]["messages"]
        if m["role"] == "user" and "dentist" in m["content"]
    )
    assert '"at": "2024-06-12T09:00:00+02:00"' in prompt
    assert "Reference time (now): " in prompt
    system = next(m for m in brain.requests[-1]["body"]["messages"] if m["role"] == "system")
    assert "distill-v4" in system["content"] and "occurred_at" in system["content"]


def test_consolidation_dates_memories_by_their_steps_times(llm_api: Api) -> None:
    llm_api.append("trip", "event trip.museum: went to the museum yesterday",
                   occurred_at="2024-03-10T20:00:00Z")  # fmt: skip
    job_id = llm_api.client.post(f"{llm_api.base}/sessions/trip:end").json()["consolidation"][
        "job_id"
    ]

    def done() -> bool:
        job = llm_api.client.get(f"{llm_api.base}/jobs/{job_id}").json()
        assert job["status"] != "failed", job
        return bool(job["status"] == "succeeded")

    wait_until(done, "the consolidation job succeeds")
    museum = listed(llm_api)["trip.museum"]
    assert at(museum["occurred_at"]) == datetime(2024, 3, 9, tzinfo=UTC)


def test_an_unreadable_time_from_the_model_is_unknown() -> None:
    from hindsight.services.distill import Candidate

    for given, expected in (
        ("2024-05-03", datetime(2024, 5, 3, tzinfo=UTC)),
        ("2024-05-03T10:00:00+02:00", datetime(2024, 5, 3, 8, tzinfo=UTC)),
        ("2024-05-03T10:00:00", datetime(2024, 5, 3, 10, tzinfo=UTC)),  # naive: UTC
        ("2024-05-03T10:00:00Z", datetime(2024, 5, 3, 10, tzinfo=UTC)),
        ("last Tuesday", None),
        ("0001-01-01", None),
        (17, None),
        (None, None),
    ):
        assert Candidate.model_validate({"occurred_at": given}).occurred_at == expected, given


def test_openapi_documents_the_time_fields(server: ThreadServer) -> None:
    schema = httpx.get(f"{server.url}/openapi.json", timeout=30).json()["components"]["schemas"]
    for model, field in (
        ("MemoryIn", "occurred_at"),
        ("MemoryOut", "occurred_at"),
        ("MemoryPatch", "occurred_at"),
        ("StepIn", "occurred_at"),
        ("StepOut", "occurred_at"),
        ("RecallIn", "reference_time"),
        ("RecallIn", "occurred_after"),
        ("RecallOut", "time_window"),
        ("Components", "time_factor"),
    ):
        assert field in schema[model]["properties"], (model, field)


def test_a_time_anchored_on_an_event_takes_the_events_memory_as_its_anchor(api: Api) -> None:
    same = "went hiking in the hills with friends"
    api.client.post(
        f"{api.base}/memories:batch",
        json={"dedup": False, "memories": [
            {"key": "life.wedding", "value": "our wedding at the lake house, 120 guests",
             "occurred_at": "2024-05-18T16:00:00Z"},
            {"key": "diary.before", "value": same, "occurred_at": "2024-05-13T10:00:00Z"},
            {"key": "diary.long_before", "value": same, "occurred_at": "2024-03-02T10:00:00Z"},
            {"key": "diary.after", "value": same, "occurred_at": "2024-05-25T10:00:00Z"},
        ]},
    ).raise_for_status()  # fmt: skip
    body = api.recall(
        "what hiking did I do the week before the wedding?",
        reference_time="2024-06-12T09:00:00Z",
    )
    window = body["time_window"]
    assert window["event"] == "the wedding"
    assert window["anchor"]["key"] == "life.wedding"
    assert at(window["anchor"]["time"]) == datetime(2024, 5, 18, 16, tzinfo=UTC)
    assert at(window["start"]) == datetime(2024, 5, 11, tzinfo=UTC)
    assert at(window["end"]) == datetime(2024, 5, 18, tzinfo=UTC)
    hikes = [r["key"] for r in body["results"] if r["key"].startswith("diary.")]
    assert hikes[0] == "diary.before", body["results"]
    logged = api.client.get(f"{api.base}/recalls/{body['recall_id']}").json()
    assert logged["filters"]["time_window"]["anchor"]["key"] == "life.wedding"
    # no memory for the event: no window, the words are just words
    assert api.recall("what did I do the week before the coronation?")["time_window"] is None


def test_a_chinese_time_anchored_on_an_event_takes_the_events_memory_as_its_anchor(
    api: Api,
) -> None:
    same = "和朋友去山里徒步"
    api.client.post(
        f"{api.base}/memories:batch",
        json={"dedup": False, "memories": [
            {"key": "life.wedding", "value": "我们在湖边别墅办了婚礼，来了一百二十位客人",
             "occurred_at": "2024-05-18T08:00:00Z"},
            {"key": "diary.before", "value": same, "occurred_at": "2024-05-13T02:00:00Z"},
            {"key": "diary.long_before", "value": same, "occurred_at": "2024-03-02T02:00:00Z"},
            {"key": "diary.after", "value": same, "occurred_at": "2024-05-25T02:00:00Z"},
        ]},
    ).raise_for_status()  # fmt: skip
    body = api.recall("婚礼前一周我去徒步了吗？", reference_time="2024-06-12T09:00:00+08:00")
    window = body["time_window"]
    assert window["event"] == "婚礼" and window["expression"] == "前一周"
    assert window["anchor"]["key"] == "life.wedding"
    assert at(window["start"]) == datetime(2024, 5, 11, tzinfo=timezone(timedelta(hours=8)))
    assert at(window["end"]) == datetime(2024, 5, 18, tzinfo=timezone(timedelta(hours=8)))
    hikes = [r["key"] for r in body["results"] if r["key"].startswith("diary.")]
    assert hikes[0] == "diary.before", body["results"]
    # a month named in Chinese is a window too
    body = api.recall("我3月去徒步了吗？", reference_time="2024-06-12T09:00:00+08:00")
    assert body["time_window"]["expression"] == "3月"
    hikes = [r["key"] for r in body["results"] if r["key"].startswith("diary.")]
    assert hikes[0] == "diary.long_before", body["results"]


def test_recently_nudges_toward_the_past_month_at_half_the_time_weight(api: Api) -> None:
    api.client.post(
        f"{api.base}/memories:batch",
        json={"memories": [
            {"key": "read.old", "value": "read a novel about sailing",
             "occurred_at": "2024-01-10T10:00:00Z"},
            {"key": "read.new", "value": "read a novel about sailing ships",
             "occurred_at": "2024-06-01T10:00:00Z"},
        ]},
    ).raise_for_status()  # fmt: skip
    body = api.recall("what novel did I read recently?", reference_time="2024-06-12T09:00:00Z")
    window = body["time_window"]
    assert window["expression"] == "recently" and window["vague"] is True
    assert at(window["start"]) == datetime(2024, 5, 13, 9, tzinfo=UTC)
    by_key = {r["key"]: r for r in body["results"]}
    assert body["results"][0]["key"] == "read.new"
    # outside the window: 1 − 0.8 (the time weight) × 0.5 (HINDSIGHT_VAGUE_TIME_STRENGTH)
    assert by_key["read.old"]["components"]["time_factor"] == pytest.approx(0.6)
    assert by_key["read.new"]["components"]["time_factor"] == 1.0
