"""The permission table (`hindsight.services.permissions`) checked against the service:
every memory-changing endpoint × role × memory state, over HTTP, and every MCP tool that
changes a memory × role × state, each answer compared with what the table says. The
security page of the docs prints the same table."""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hindsight.services.permissions import TABLE, Action, Decision, State, markdown
from hindsight.services.roles import Role
from tests import test_roles
from tests.conftest import Api
from tests.support.servers import ThreadServer
from tests.test_mcp import ToolFailed, call, over_http, run

# the fixture test_roles gives its tests: an API client per role, in the test's namespace
as_role = test_roles.as_role
SECURITY_PAGE = Path(__file__).resolve().parents[1] / "docs" / "security.md"


def test_the_docs_print_the_table() -> None:
    text = SECURITY_PAGE.read_text()
    assert markdown() in text, (
        "docs/security.md's permission table differs: paste permissions.markdown()"
    )


def test_the_table_covers_every_role_action_and_state() -> None:
    for role, action, state in itertools.product(Role, Action, State):
        assert isinstance(TABLE[role][action][state], Decision)
    # what the issue asked for, read off the table
    w = TABLE[Role.WRITER]
    for action in (Action.EDIT, Action.EXPIRE, Action.ARCHIVE, Action.DELETE):
        assert w[action][State.VERIFIED] is Decision.REFUSE
        assert w[action][State.PERMANENT] is Decision.REFUSE
    assert w[Action.SUPERSEDE][State.VERIFIED] is Decision.REVIEW
    assert all(d is Decision.REFUSE for d in w[Action.VOUCH].values())


# --- making a memory in each state ------------------------------------------------------


def make(admin: Api, state: State) -> dict[str, Any]:
    """A fresh memory in `state`, with a key of its own, made by the admin."""
    key = f"t.{state.value}.{uuid.uuid4().hex[:10]}"
    claim: dict[str, Any] = {"key": key, "value": f"value of {key}"}
    if state is State.VERIFIED:
        claim["verified"] = True
    elif state is State.PERMANENT:
        claim["permanent"] = True
    elif state is State.QUARANTINED:
        claim["source"] = "web"
    elif state is State.EXPIRING:
        claim["ttl_seconds"] = 3600
    (m,) = admin.observe(claim)
    if state is State.ARCHIVED:
        r = admin.client.patch(f"{admin.base}/memories/{m['id']}", json={"status": "archived"})
        assert r.status_code == 200, r.text
    row = admin.get(m["id"])
    assert row["status"] == (
        "quarantined"
        if state is State.QUARANTINED
        else "archived"
        if state is State.ARCHIVED
        else "active"
    )
    return row


# --- each action as an HTTP call, and what its answer means ------------------------------

Call = Callable[[Api, dict[str, Any]], httpx.Response]


def _patch(body: dict[str, Any]) -> Call:
    return lambda a, m: a.client.patch(f"{a.base}/memories/{m['id']}", json=body)


def _observe(same: bool) -> Call:
    def go(a: Api, m: dict[str, Any]) -> httpx.Response:
        value = m["value"] if same else m["value"] + " (another)"
        return a.client.post(f"{a.base}/memories", json={"key": m["key"], "value": value})

    return go


CALLS: dict[Action, Call] = {
    Action.REINFORCE: _observe(same=True),
    Action.SUPERSEDE: _observe(same=False),
    Action.EDIT: _patch({"value": "edited"}),
    Action.ANNOTATE: _patch({"tags": ["seen"]}),
    Action.LOWER_CONFIDENCE: _patch({"confidence": 0.1}),
    Action.EXPIRE: _patch({"ttl_seconds": 60}),
    Action.ARCHIVE: _patch({"status": "archived"}),
    Action.RESTORE: _patch({"status": "active"}),
    Action.DELETE: lambda a, m: a.client.delete(f"{a.base}/memories/{m['id']}"),
    Action.FORGET: lambda a, m: a.client.post(
        f"{a.base}/memories:forget", json={"max_confidence": 1.0, "dry_run": True}
    ),
    Action.VOUCH: _patch({"verified": True}),
    Action.REVIEW: lambda a, m: a.client.post(f"{a.base}/memories/{m['id']}:approve"),
}


def answer(action: Action, r: httpx.Response, m: dict[str, Any]) -> Decision:
    """The decision a response shows."""
    if r.status_code == 403:
        assert "needs the" in r.json()["error"]["message"], r.text
        return Decision.REFUSE
    if r.status_code == 409:
        return Decision.CONFLICT
    assert r.status_code in (200, 201, 204), r.text
    if action is Action.FORGET:  # a forgetting policy passes over what it may not select
        selected = {x["id"] for x in r.json()["memories"]}
        return Decision.ALLOW if m["id"] in selected else Decision.REFUSE
    if action in (Action.REINFORCE, Action.SUPERSEDE):
        outcome = r.json()["outcome"]
        return Decision.REVIEW if outcome == "quarantined" else Decision.ALLOW
    return Decision.ALLOW


@pytest.mark.parametrize("role", list(Role), ids=[r.value for r in Role])
def test_every_endpoint_answers_as_the_table_says(
    role: Role, as_role: dict[Role, Api], api: Api
) -> None:
    caller = as_role[role]
    wrong = []
    for action, state in itertools.product(Action, State):
        m = make(api, state)
        got = answer(action, CALLS[action](caller, m), m)
        expected = TABLE[role][action][state]
        if got is not expected:
            wrong.append(f"{role.value} {action.value} on {state.value}: {got}, table {expected}")
    assert not wrong, "\n".join(wrong)


# --- the same actions as MCP tool calls ----------------------------------------------------

Tool = tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]


def _update(**changes: Any) -> Tool:
    return "memory_update", lambda m: {"memory_id": m["id"], **changes}


def _store(same: bool) -> Tool:
    return "observe", lambda m: {
        "key": m["key"],
        "value": m["value"] if same else m["value"] + " (another)",
    }


# MCP's memory_update takes no TTL and no verified/permanent flags: EXPIRE and VOUCH have
# no tool, so a caller cannot reach them through MCP at all
TOOLS: dict[Action, Tool] = {
    Action.REINFORCE: _store(same=True),
    Action.SUPERSEDE: _store(same=False),
    Action.EDIT: _update(value="edited"),
    Action.ANNOTATE: _update(tags=["seen"]),
    Action.LOWER_CONFIDENCE: _update(confidence=0.1),
    Action.ARCHIVE: _update(status="archived"),
    Action.RESTORE: _update(status="active"),
    Action.DELETE: ("memory_delete", lambda m: {"memory_id": m["id"]}),
    Action.FORGET: ("memory_forget", lambda m: {"max_confidence": 1.0, "dry_run": True}),
    Action.REVIEW: ("memory_approve", lambda m: {"memory_id": m["id"]}),
}


def tool_answer(action: Action, result: Any, m: dict[str, Any]) -> Decision:
    if isinstance(result, ToolFailed):
        # a tool's error carries REST's message, not its status: a refusal names the role
        # needed; anything else is the state standing in the way (REST's 409)
        return Decision.REFUSE if "needs the" in str(result) else Decision.CONFLICT
    if action is Action.FORGET:
        selected = {x["id"] for x in result["memories"]}
        return Decision.ALLOW if m["id"] in selected else Decision.REFUSE
    if action in (Action.REINFORCE, Action.SUPERSEDE):
        return Decision.REVIEW if result["outcome"] == "quarantined" else Decision.ALLOW
    return Decision.ALLOW


@pytest.mark.parametrize("role", list(Role), ids=[r.value for r in Role])
def test_every_mcp_tool_answers_as_the_table_says(
    role: Role, as_role: dict[Role, Api], api: Api, server: ThreadServer
) -> None:
    """MCP calls the services directly, not through REST: its own entry point, walked in
    full. Every answer matches the table, and what it refuses is left as it was."""
    key = as_role[role].client.headers["Authorization"].split()[1]
    cases = [(a, s, make(api, s)) for a, s in itertools.product(TOOLS, State)]
    wrong: list[str] = []

    async def go() -> None:
        async with over_http(server.url, key) as client:
            for action, state, m in cases:
                tool, arguments = TOOLS[action]
                try:
                    result: Any = await call(client, tool, namespace=api.ns, **arguments(m))
                except ToolFailed as exc:
                    result = exc
                got = tool_answer(action, result, m)
                expected = TABLE[role][action][state]
                if got is not expected:
                    wrong.append(
                        f"{role.value} {tool} ({action.value}) on {state.value}: {got}, "
                        f"table {expected}"
                    )
                if got is Decision.REFUSE and action is not Action.FORGET:
                    after = api.get(m["id"])
                    before = {k: m[k] for k in ("value", "status", "confidence", "tags")}
                    assert {k: after[k] for k in before} == before, (role, action, state)

    run(go)
    assert not wrong, "\n".join(wrong)


def test_printed_table_shape() -> None:
    rows = [
        ln for ln in markdown().splitlines() if re.match(r"\| (reader|writer|curator|admin) ", ln)
    ]
    assert len(rows) == len(Role) * len(Action)
