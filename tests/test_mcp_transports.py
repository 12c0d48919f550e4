"""MCP over every HTTP transport the app serves, across workers, and against misuse."""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import ADMIN_KEY, Api
from tests.support.cli import hindsight
from tests.support.scrape import total
from tests.support.servers import ThreadServer, spawn_server
from tests.test_mcp import ToolFailed, call, over_http, round_trip, run


@asynccontextmanager
async def over_sse(url: str, key: str = ADMIN_KEY) -> AsyncIterator[Client]:
    async with Client(sse_client(f"{url}/sse", headers={"Authorization": f"Bearer {key}"})) as c:
        yield c


def scoped_key(database_url: str, ns: str) -> str:
    made = hindsight("keys", "create", f"mcp-{ns}", "--namespace", ns, database_url=database_url)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def test_a_memory_id_is_never_a_path(server: ThreadServer, api: Api) -> None:
    api.append("x", "a step worth keeping")

    async def go() -> None:
        async with over_http(server.url) as client:
            for tool in ("memory_delete", "memory_history", "memory_update"):
                extra = {"value": "v"} if tool == "memory_update" else {}
                with pytest.raises(
                    ToolFailed, match=re.escape("memory_id: '../sessions/x' is not a memory")
                ):
                    await call(client, tool, memory_id="../sessions/x", namespace=api.ns, **extra)

    run(go)
    assert [s["content"] for s in api.steps("x")] == ["a step worth keeping"]


def test_tools_say_which_only_read_and_which_destroy(server: ThreadServer) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
        for name in (
            "memory_search",
            "memory_history",
            "working_memory_context",
            "namespace_export",
        ):
            assert tools[name] and tools[name].read_only_hint is True, name
        for name in ("memory_delete", "memory_forget", "namespace_erase"):
            hints = tools[name]
            assert hints and hints.destructive_hint is True and not hints.read_only_hint, name
        for name in ("memory_store", "working_memory_append", "session_end"):
            hints = tools[name]
            assert hints and hints.destructive_hint is False and not hints.read_only_hint, name

    run(go)


def test_sse_transport(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with over_sse(server.url) as client:
            await round_trip(client, ns)

    run(go)
    assert httpx.get(f"{server.url}/sse", timeout=5).status_code == 401


def test_an_sse_session_answers_only_the_key_that_opened_it(
    server: ThreadServer, migrated: str, ns: str
) -> None:
    other = scoped_key(migrated, ns)
    opened: list[str] = []

    async def go() -> None:
        headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
        transport = sse_client(
            f"{server.url}/sse", headers=headers, on_session_created=opened.append
        )
        async with Client(transport) as client:
            await call(client, "memory_store", key="k", value="admin's", namespace=ns)
            message = {"jsonrpc": "2.0", "id": 99, "method": "tools/list"}
            async with httpx2.AsyncClient() as http:
                hijack = await http.post(
                    f"{server.url}/messages/?session_id={opened[0]}",
                    json=message,
                    headers={"Authorization": f"Bearer {other}"},
                )
                unknown = await http.post(
                    f"{server.url}/messages/?session_id={'0' * 32}",
                    json=message,
                    headers={"Authorization": f"Bearer {other}"},
                )
            # the MCP SDK answers another key exactly as if the session did not exist: 404,
            # not 403, which would tell the other key that the session is there
            assert (hijack.status_code, hijack.text) == (404, "Could not find session")
            assert (unknown.status_code, unknown.text) == (hijack.status_code, hijack.text)
            # the session itself carries on
            found = await call(client, "memory_search", query="k", namespace=ns)
            assert found["results"][0]["value"] == "admin's"

    run(go)
    assert opened


def test_a_namespace_endpoint_keeps_every_tool_in_its_namespace(
    server: ThreadServer, ns: str
) -> None:
    async def pinned() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=30)
        async with (
            http,
            Client(streamable_http_client(f"{server.url}/mcp/{ns}", http_client=http)) as client,
        ):
            await round_trip(client, None)  # an admin key, and no namespace argument
            with pytest.raises(ToolFailed, match=f"serves namespace '{ns}' only"):
                await call(client, "memory_search", query="editor", namespace=ns + "-other")
            assert (await call(client, "memory_search", query="editor", namespace=ns))["results"]

    run(pinned)
    direct = Api.at(server.url, ns)
    assert direct.recall("editor")["results"][0]["key"] == "user.editor"


def test_a_namespace_endpoint_refuses_a_key_for_another_namespace(
    server: ThreadServer, migrated: str, ns: str
) -> None:
    key = scoped_key(migrated, ns)
    r = httpx.post(
        f"{server.url}/mcp/{ns}-other", headers={"Authorization": f"Bearer {key}"}, json={}
    )
    assert r.status_code == 403 and "may not use namespace" in r.json()["error"]["message"]
    r = httpx.post(
        f"{server.url}/mcp/bad%20space", headers={"Authorization": f"Bearer {key}"}, json={}
    )
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("namespace")


def test_mcp_over_several_workers(fresh_db: str, redis_url: str, ns: str) -> None:
    """Stateless streamable HTTP: every request stands alone, so it does not matter which
    worker answers it (with sessions in memory, most clients got `Session not found`)."""
    env = {
        "HINDSIGHT_DATABASE_URL": fresh_db,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
    }
    proc, url = spawn_server(env, workers=2, ready_path="/readyz", timeout=60)
    try:

        async def one(i: int) -> None:
            # a new connection per request, as a load balancer spreads them
            headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
            limits = httpx2.Limits(max_keepalive_connections=0)
            http = httpx2.AsyncClient(headers=headers, timeout=60, limits=limits)
            transport = streamable_http_client(f"{url}/mcp", http_client=http)
            # "legacy": the initialize handshake of the clients in use today (Cursor,
            # Claude ...), whose session a worker kept in memory; "auto": this SDK's own
            mode = "legacy" if i % 3 else "auto"
            async with http, Client(transport, mode=mode) as client:
                for j in range(5):
                    stored = await call(
                        client, "memory_store", key=f"c{i}.k{j}", value=f"v{j}", namespace=ns
                    )
                    assert stored["outcome"] == "created"
                    await call(client, "memory_search", query=f"c{i}", namespace=ns)
                    await call(
                        client,
                        "working_memory_append",
                        session_id=f"s{i}",
                        content=f"step {j}",
                        namespace=ns,
                    )
                context = await call(
                    client, "working_memory_context", session_id=f"s{i}", namespace=ns
                )
                assert [s["content"] for s in context["recent"]] == [f"step {j}" for j in range(5)]

        async def all_of_them() -> None:
            await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(6))), timeout=120)

        run(all_of_them)
        page = Api.at(url, ns).client.get(f"/v1/namespaces/{ns}/memories", params={"limit": 100})
        assert len(page.json()["memories"]) == 30
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_a_tool_call_is_one_request_with_one_key_check(server: ThreadServer, ns: str) -> None:
    """A tool call reaches the services directly: the /mcp request is the only request the
    server sees (no second pass through the REST routes, which would log and count a REST
    call per tool call and check the key again), and its answer is REST's."""
    hist = "hindsight_http_request_duration_seconds_count"
    routes = ("/v1/namespaces/{namespace}/memories", "/v1/namespaces/{namespace}/recall")

    def rest_calls(text: str) -> float:
        return sum(total(text, hist, method="POST", route=r) for r in routes)

    async def go() -> None:
        async with over_http(server.url) as client:
            stored = await call(client, "observe", key="user.tea", value="oolong", namespace=ns)
            found = await call(client, "recall", query="which tea", namespace=ns)
        assert stored["outcome"] == "created"
        assert [h["value"] for h in found["results"]] == ["oolong"]
        assert set(found["results"][0]["components"]) >= {"similarity", "confidence"}

    metrics = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=30
    )
    before = metrics.get("/metrics").text
    run(go)
    after = metrics.get("/metrics").text
    # MCP's own requests are counted under route "other" (it is not a REST route)
    assert total(after, hist, route="other") > total(before, hist, route="other")
    assert rest_calls(after) == rest_calls(before)


def test_clients_with_the_initialize_handshake(server: ThreadServer, ns: str) -> None:
    """Today's desktop clients open with `initialize` and send its session id after."""

    async def go() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=30)
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with http, Client(transport, mode="legacy") as client:
            await round_trip(client, ns)

    run(go)


def test_deeply_nested_tool_arguments_are_refused(server: ThreadServer, ns: str) -> None:
    headers = {
        "Authorization": f"Bearer {ADMIN_KEY}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    answers = {}
    for depth in (40, 100_000):
        metadata = '{"a":' * depth + "1" + "}" * depth
        body = (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store",'
            f'"arguments":{{"key":"k","value":"v","namespace":"{ns}","metadata":{metadata}}}}}}}'
        )
        answers[depth] = httpx.post(f"{server.url}/mcp", headers=headers, content=body, timeout=30)
    refused = answers[40].json()["result"]
    assert refused["isError"] and "nested more than 32 levels" in refused["content"][0]["text"]
    assert answers[100_000].status_code == 400
    assert answers[100_000].json()["error"]["message"].startswith("Parse error")
    assert (
        Api.at(server.url, ns).client.get(f"/v1/namespaces/{ns}/memories").json()["memories"] == []
    )
