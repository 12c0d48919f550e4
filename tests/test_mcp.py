"""MCP: an MCP client from the official SDK, over streamable HTTP and over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import INTERNAL_ERROR

from tests.conftest import ADMIN_KEY, Api
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer, free_port

# The same verbs as REST and the SDKs (observe, recall, append_step); each tool's former
# name still answers, for clients configured with it.
FORMER_NAMES = {
    "memory_store": "observe",
    "memory_search": "recall",
    "working_memory_append": "append_step",
}
TOOLS = {
    *FORMER_NAMES,
    *FORMER_NAMES.values(),
    "memory_update",
    "memory_delete",
    "memory_history",
    "memory_extract",
    "memory_forget",
    "memory_feedback",
    "memory_review_queue",
    "memory_approve",
    "memory_reject",
    "namespace_policy",
    "namespace_policy_update",
    "namespace_export",
    "namespace_erase",
    "working_memory_context",
    "session_end",
}


@asynccontextmanager
async def over_http(url: str, key: str | None = ADMIN_KEY) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
        yield client


def over_stdio(*args: str, env: dict[str, str]) -> Client:
    return Client(
        StdioServerParameters(
            command=sys.executable, args=["-m", "hindsight.cli.main", "mcp", *args], env=env
        )
    )


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        raise ToolFailed(text)
    return json.loads(text)


class ToolFailed(Exception):
    pass


def run(coro: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(coro())  # type: ignore[arg-type]


async def round_trip(client: Client, ns: str | None) -> None:
    """What every transport must do: list tools, store and find a memory, keep and read
    working memory."""
    where = {"namespace": ns} if ns else {}
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    store = next(t for t in tools if t.name == "memory_store")
    assert store.description and "confidence" in store.description
    assert store.input_schema["properties"]["key"]["maxLength"] == 256
    assert store.input_schema["required"] == ["key", "value"]

    stored = await call(
        client,
        "memory_store",
        key="user.editor",
        value="uses Neovim daily",
        memory_type="preference",
        **where,
    )
    assert stored["outcome"] == "created"
    again = await call(
        client, "memory_store", key="user.editor", value="uses Neovim daily", **where
    )
    assert again["outcome"] == "reinforced" and again["confidence"] == 0.6
    found = await call(
        client, "memory_search", query="which editor does the user use", k=3, **where
    )
    assert found["results"][0]["key"] == "user.editor"
    assert found["results"][0]["components"]["confidence"] == 0.6

    step = await call(
        client,
        "working_memory_append",
        session_id="task-1",
        content="opened the config file",
        **where,
    )
    assert step["step_index"] == 0
    await call(
        client,
        "working_memory_append",
        session_id="task-1",
        content="fixed the typo",
        role="tool",
        **where,
    )
    context = await call(client, "working_memory_context", session_id="task-1", **where)
    assert [s["content"] for s in context["recent"]] == ["opened the config file", "fixed the typo"]
    ended = await call(client, "session_end", session_id="task-1", **where)
    assert ended["status"] == "ended" and ended["consolidation"]["job_id"]


def test_http_round_trip_and_every_tool(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            await round_trip(client, ns)
            memory = (await call(client, "memory_search", query="editor", namespace=ns))["results"][
                0
            ]
            updated = await call(
                client,
                "memory_update",
                memory_id=memory["id"],
                value="uses Helix now",
                namespace=ns,
            )
            assert updated["value"] == "uses Helix now" and updated["confidence"] == 0.5
            history = await call(client, "memory_history", memory_id=memory["id"], namespace=ns)
            assert [h["change"] for h in history["history"]] == ["created", "reinforced", "updated"]
            forget = await call(client, "memory_forget", max_confidence=0.9, namespace=ns)
            assert forget["dry_run"] is True and forget["count"] == 1  # dry run by default
            await call(client, "memory_delete", memory_id=memory["id"], namespace=ns)
            with pytest.raises(ToolFailed, match="no memory"):
                await call(
                    client,
                    "memory_history",
                    memory_id="00000000-0000-7000-8000-000000000000",
                    namespace=ns,
                )

    run(go)


def test_each_operation_has_the_verb_rest_and_the_sdk_use_and_its_former_name_works(
    server: ThreadServer, ns: str
) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for former, name in FORMER_NAMES.items():
                assert tools[former].input_schema == tools[name].input_schema, former
                assert tools[former].annotations == tools[name].annotations, former
                assert (tools[former].description or "").startswith(f"The former name of {name}")
            new = await call(client, "observe", key="user.tea", value="green", namespace=ns)
            old = await call(client, "memory_store", key="user.tea", value="green", namespace=ns)
            assert (new["outcome"], old["outcome"]) == ("created", "reinforced")
            assert old["id"] == new["id"]
            found = await call(client, "recall", query="tea", namespace=ns)
            assert found["results"][0]["id"] == new["id"]
            again = await call(client, "memory_search", query="tea", namespace=ns)
            assert again["results"][0]["id"] == new["id"]
            await call(client, "append_step", session_id="s", content="one", namespace=ns)
            await call(client, "working_memory_append", session_id="s", content="two", namespace=ns)

    run(go)
    assert [s["content"] for s in Api.at(server.url, ns).steps("s")] == ["one", "two"]


def test_bad_calls_are_tool_errors_with_rest_messages_and_the_session_goes_on(
    server: ThreadServer, ns: str
) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            with pytest.raises(ToolFailed, match="key: String should have at most 256"):
                await call(client, "memory_store", key="k" * 300, value="v", namespace=ns)
            with pytest.raises(ToolFailed, match="namespace is required"):
                await call(client, "memory_store", key="k", value="v")
            with pytest.raises(ToolFailed, match="HINDSIGHT_LLM_MODEL"):
                await call(
                    client,
                    "memory_extract",
                    namespace=ns,
                    messages=[{"role": "user", "content": "my cat is Tom"}],
                )
            with pytest.raises(ToolFailed, match="namespace: 'bad space'"):
                await call(client, "memory_search", query="x", namespace="bad space")
            # the same session still works after all that
            assert (await call(client, "memory_store", key="k", value="v", namespace=ns))[
                "outcome"
            ] == "created"

    run(go)


def test_refused_without_a_key_and_outside_the_keys_namespace(
    server: ThreadServer, migrated: str, ns: str
) -> None:
    made = hindsight("keys", "create", f"mcp-{ns}", "--namespace", ns, database_url=migrated)
    assert made.returncode == 0, made.stderr
    scoped = made.stdout.strip()

    async def go() -> None:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        for key, why in [
            (None, "missing Authorization header"),
            ("not-a-key", "unknown or revoked API key"),
        ]:
            # the gate refuses before MCP sees the request, in the REST error shape ...
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                refused = await http.post(
                    f"{server.url}/mcp",
                    json=initialize,
                    headers={"Accept": "application/json, text/event-stream"},
                )
            assert refused.status_code == 401, refused.text
            assert refused.headers["www-authenticate"] == "Bearer"
            error = refused.json()["error"]
            assert error["code"] == "unauthorized" and why in error["message"], error
            # ... which the SDK's client turns into an MCPError while connecting (the
            # status is not in it: any non-404 error status reads the same)
            with pytest.RaisesGroup(
                pytest.RaisesExc(
                    MCPError,
                    match="^Server returned an error response$",
                    check=lambda e: e.code == INTERNAL_ERROR,
                ),
                flatten_subgroups=True,
            ):
                async with over_http(server.url, key) as client:
                    await client.list_tools()
        async with over_http(server.url, scoped) as client:
            # a key scoped to one namespace needs no namespace argument
            stored = await call(client, "memory_store", key="k", value="mine")
            assert stored["outcome"] == "created"
            with pytest.raises(ToolFailed, match="may not use namespace"):
                await call(client, "memory_search", query="k", namespace=ns + "-other")
            with pytest.raises(ToolFailed, match="may not use namespace"):
                await call(
                    client,
                    "working_memory_append",
                    session_id="s",
                    content="x",
                    namespace=ns + "-other",
                )

    run(go)
    raw = httpx2.post(f"{server.url}/mcp", json={})
    assert raw.status_code == 401 and "Authorization" in raw.json()["error"]["message"]


def test_reconnecting_and_idle_sessions(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            await call(client, "memory_store", key="idle", value="before", namespace=ns)
            await asyncio.sleep(3)  # idle
            assert (await call(client, "memory_search", query="idle", namespace=ns))["results"][0][
                "value"
            ] == "before"
        async with over_http(server.url) as client:  # a new connection picks up
            assert (await call(client, "memory_search", query="idle", namespace=ns))["results"][0][
                "value"
            ] == "before"

    run(go)


def test_stdio_bridge_to_a_running_service(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        env = {"HINDSIGHT_API_KEY": ADMIN_KEY}
        async with over_stdio("--url", server.url, "--namespace", ns, env=env) as client:
            await round_trip(client, None)  # the default namespace comes from --namespace

    run(go)


def test_stdio_without_a_running_service_serves_in_process(
    fresh_db: str, redis_url: str, ns: str
) -> None:
    async def go() -> None:
        env = {
            "HINDSIGHT_DATABASE_URL": fresh_db,
            "HINDSIGHT_REDIS_URL": redis_url,
            "HINDSIGHT_PORT": str(free_port()),
        }
        async with over_stdio("--namespace", ns, env=env) as client:
            await round_trip(client, None)
        async with over_stdio("--namespace", ns, env=env) as client:  # data persists
            found = await call(client, "memory_search", query="editor")
            assert found["results"][0]["value"] == "uses Neovim daily"

    run(go)


def test_export_and_erase_a_namespace_over_mcp(
    server: ThreadServer, migrated: str, ns: str
) -> None:
    made = hindsight("keys", "create", f"mcp-w-{ns}", "--namespace", ns, database_url=migrated)
    assert made.returncode == 0, made.stderr
    writer = made.stdout.strip()

    async def go() -> None:
        async with over_http(server.url) as admin:
            await call(admin, "memory_store", key="user.city", value="Oslo", namespace=ns)
            await call(admin, "working_memory_append", session_id="s", content="hi", namespace=ns)
            exported = await call(admin, "namespace_export", sessions=True, namespace=ns)
            lines = exported["lines"]
            assert lines[0]["format"] == "hindsight-export" and lines[0]["namespace"] == ns
            assert [x["key"] for x in lines if x.get("type") == "memory"] == ["user.city"]
            assert lines[-1] == {"type": "end", "memories": 1, "sessions": 1, "steps": 1}
            with pytest.raises(ToolFailed, match=f"pass confirm='{ns}'"):
                await call(admin, "namespace_erase", confirm="oops", namespace=ns)
        async with over_http(server.url, writer) as client:
            # a writer of the namespace may do neither
            for tool, extra in (("namespace_export", {}), ("namespace_erase", {"confirm": ns})):
                with pytest.raises(ToolFailed, match="admin"):
                    await call(client, tool, **extra)
            # it reads the policy, and cannot change it
            policy = await call(client, "namespace_policy")
            assert policy["trust"]["sources"]["web"] == 0.3
            assert policy["redaction"]["mode"] == "redact"
            with pytest.raises(ToolFailed, match="curator"):
                await call(client, "namespace_policy_update", policy={"trust": {"default": 1}})
        async with over_http(server.url) as admin:
            with pytest.raises(ToolFailed, match=r"redaction\.mode"):
                await call(
                    admin,
                    "namespace_policy_update",
                    policy={"redaction": {"mode": "maybe"}},
                    namespace=ns,
                )
            changed = await call(
                admin,
                "namespace_policy_update",
                policy={"redaction": {"mode": "reject"}},
                namespace=ns,
            )
            assert changed["redaction"]["mode"] == "reject"
            with pytest.raises(ToolFailed, match="value: holds what looks like openai_key"):
                await call(
                    admin,
                    "memory_store",
                    key="bot.key",
                    value="sk-proj-" + "Zq7XwV3uT9sR1pO5nM2lK8jH4gF6dS0a",
                    namespace=ns,
                )
        async with over_http(server.url) as admin:
            found = await call(admin, "memory_search", query="city", namespace=ns)
            assert found["results"], "nothing was erased by the refused calls"
            receipt = await call(admin, "namespace_erase", confirm=ns, namespace=ns)
            assert receipt["namespace"] == ns and receipt["postgres"]["long_term_memory"] == 1
            assert receipt["total"] >= 3
            found = await call(admin, "memory_search", query="city", namespace=ns)
            assert found["results"] == []

    run(go)


def test_roles_hold_over_mcp(server: ThreadServer, migrated: str, ns: str) -> None:
    made = hindsight(
        "keys",
        "create",
        f"mcp-r-{ns}",
        "--role",
        "reader",
        "--namespace",
        ns,
        database_url=migrated,
    )
    assert made.returncode == 0, made.stderr
    reader = made.stdout.strip()

    async def go() -> None:
        async with over_http(server.url, reader) as client:
            assert await call(client, "memory_search", query="k") is not None
            with pytest.raises(ToolFailed, match="needs the writer role"):
                await call(client, "memory_store", key="k", value="v")
        async with over_http(server.url) as admin:
            # an admin is also a curator: it may store a claim as near-certain
            stored = await call(
                admin, "memory_store", key="k", value="v", namespace=ns, confidence=0.95
            )
            assert stored["confidence"] == 0.95

    run(go)


def test_memory_forget_by_importance_time_and_limit(server: ThreadServer, api: Api) -> None:
    api.observe(
        {
            "key": "chat.hi",
            "value": "said hi",
            "importance": 0.1,
            "occurred_at": "2024-01-02T00:00:00Z",
        },
        {
            "key": "chat.bye",
            "value": "said bye",
            "importance": 0.2,
            "occurred_at": "2024-03-02T00:00:00Z",
        },
        {
            "key": "chat.ok",
            "value": "said ok",
            "importance": 0.2,
            "occurred_at": "2024-01-05T00:00:00Z",
        },
        {
            "key": "allergy",
            "value": "allergic to penicillin",
            "importance": 0.9,
            "occurred_at": "2024-01-03T00:00:00Z",
        },
    )

    async def go() -> None:
        async with over_http(server.url) as client:
            out = await call(
                client,
                "memory_forget",
                max_importance=0.3,
                occurred_after="2024-01-01T00:00:00Z",
                occurred_before="2024-02-01T00:00:00Z",
                limit=1,
                namespace=api.ns,
            )
            assert out["count"] == 1 and out["memories"][0]["key"] in ("chat.hi", "chat.ok")
            out = await call(
                client, "memory_forget", max_importance=0.3, dry_run=False, namespace=api.ns
            )
            assert sorted(m["key"] for m in out["memories"]) == ["chat.bye", "chat.hi", "chat.ok"]

    run(go)


def test_memory_feedback_says_what_it_does_and_context_takes_a_token_budget(
    server: ThreadServer, api: Api
) -> None:
    for content in ("first", "x" * 40, "中" * 10, "newest"):
        api.append("tok", content)

    async def go() -> None:
        async with over_http(server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            described = tools["memory_feedback"].description or ""
            # used_count is not read by ranking: the tool must not promise it is
            assert "ranked by use" not in described and "used_count" in described
            ctx = await call(
                client,
                "working_memory_context",
                session_id="tok",
                recent=1,
                max_tokens=15,
                namespace=api.ns,
            )
            assert [e["step_index"] for e in ctx["earlier"]] == [2]


def test_recall_takes_the_conversation_so_far(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            context_schema = tools["recall"].input_schema["properties"]["context"]
            assert "role/content" in context_schema["description"]
            for key, value in (("user.pet", "a beagle named Rex"), ("user.car", "a red Volvo")):
                await call(client, "observe", key=key, value=value, namespace=ns)
            found = await call(
                client,
                "recall",
                query="he was limping after the walk, is that bad?",
                context=[
                    {"role": "assistant", "content": "Is the Volvo fixed?"},
                    {"role": "user", "content": "Yes. But Rex worries me"},
                ],
                k=2,
                namespace=ns,
            )
            assert found["results"][0]["key"] == "user.pet"
            assert [t["weight"] for t in found["conversation"]["turns"]] == [0.405, 0.9, 1.0]
            with pytest.raises(ToolFailed, match="context"):
                await call(client, "recall", query="x", context=[{"role": "user"}], namespace=ns)

    run(go)
