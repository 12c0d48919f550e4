"""The OpenAI Agents SDK session on Hindsight working memory: the Session protocol, and
`Runner.run` conversations (against a local server speaking the OpenAI Responses API) that
continue in a new process."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    Runner,
    set_default_openai_api,
    set_default_openai_client,
    set_tracing_disabled,
)
from agents.memory import Session
from openai import AsyncOpenAI

from hindsight import limits
from hindsight.client import Hindsight
from hindsight.integrations.openai_agents import HindsightSession
from tests.conftest import ADMIN_KEY
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "openai_agents_session.py"


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") for part in content or [])


def name_brain(body: dict[str, Any]) -> str:
    """Answers from the whole conversation it is sent, as a model with no memory would."""
    said = [_texts(i.get("content")) for i in body.get("input", []) if i.get("role") == "user"]
    if "what is my name" in said[-1].lower():
        names = [m.group(1) for s in said[:-1] if (m := re.search(r"[Mm]y name is (\w+)", s))]
        return f"Your name is {names[-1]}." if names else "I don't know your name."
    return "Nice to meet you."


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.brain = name_brain
        set_default_openai_client(AsyncOpenAI(base_url=fake.url, api_key="sk-test"), False)
        set_default_openai_api("responses")
        set_tracing_disabled(True)
        yield fake


def session(server: ThreadServer, ns: str, sid: str = "chat") -> HindsightSession:
    return HindsightSession(sid, url=server.url, api_key=ADMIN_KEY, namespace=ns)


# --- the Session protocol -----------------------------------------------------------------


def test_items_round_trip_in_order_with_limits(server: ThreadServer, ns: str) -> None:
    s = session(server, ns)
    assert isinstance(s, Session)
    call = {
        "type": "function_call",
        "call_id": "c1",
        "name": "weather",
        "arguments": '{"city": "Oslo"}',
    }
    items: list[Any] = [
        {"role": "user", "content": "weather in Oslo?"},
        call,
        {"type": "function_call_output", "call_id": "c1", "output": "rain, 7°C"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Rain, 7°C."}]},
    ]

    async def run() -> None:
        assert await s.get_items() == []
        await s.add_items(items[:2])
        await s.add_items(items[2:])
        assert await s.get_items() == items
        assert await s.get_items(limit=2) == items[2:]
        assert await s.get_items(limit=0) == []
        assert await s.get_items(limit=99) == items

    asyncio.run(run())
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        steps = hs.steps(ns, "chat")
    assert [st.role for st in steps] == [
        "user",
        "function_call",
        "function_call_output",
        "assistant",
    ]


def test_get_items_pages_through_a_long_history(
    server: ThreadServer, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "STEPS_RECENT_MAX", 3)  # pages of 3 instead of 1,000
    s = session(server, ns)
    items: list[Any] = [{"role": "user", "content": f"m{i}"} for i in range(8)]

    async def run() -> None:
        await s.add_items(items)
        assert await s.get_items() == items
        assert await s.get_items(limit=7) == items[1:]
        assert await s.get_items(limit=3) == items[5:]

    asyncio.run(run())


def test_recall_searches_long_term_memory_with_the_conversation(
    server: ThreadServer, ns: str
) -> None:
    Hindsight(server.url, ADMIN_KEY).observe_many(
        ns,
        [
            {"key": "user.pet", "value": "a beagle named Rex"},
            {"key": "user.trip", "value": "flies to Oslo on Friday"},
        ],
    )

    async def go() -> None:
        s = session(server, ns)
        with pytest.raises(ValueError, match="no messages yet"):
            await s.recall()
        await s.add_items(
            [
                {"role": "user", "content": "My beagle Rex has been coughing"},
                {"type": "function_call", "call_id": "c1", "name": "vet", "arguments": "{}"},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Poor Rex! See a vet soon."}],
                },
                {"role": "user", "content": "Who could take him there this week?"},
            ]
        )
        found = await s.recall(k=1)  # the last line alone names no dog
        assert found.results[0].key == "user.pet"
        assert found.conversation is not None
        assert [t.role for t in found.conversation.turns] == ["user", "assistant", "user"]
        asked = await s.recall("and when is my flight to Oslo?", recent=1, k=1)
        assert asked.results[0].key == "user.trip"
        assert asked.conversation is not None and len(asked.conversation.turns) == 2
        await s.aclose()

    asyncio.run(go())


def test_pop_item_and_clear_session(server: ThreadServer, ns: str) -> None:
    s = session(server, ns)

    async def run() -> None:
        assert await s.pop_item() is None
        await s.add_items([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
        assert await s.pop_item() == {"role": "assistant", "content": "b"}
        assert await s.get_items() == [{"role": "user", "content": "a"}]
        await s.add_items([{"role": "assistant", "content": "b2"}])
        assert [i["content"] for i in await s.get_items()] == ["a", "b2"]  # type: ignore[typeddict-item]
        await s.clear_session()
        assert await s.get_items() == []
        await s.clear_session()  # clearing nothing is not an error
        await s.add_items([{"role": "user", "content": "again"}])
        assert await s.get_items() == [{"role": "user", "content": "again"}]

    asyncio.run(run())


def test_steps_written_by_other_clients_join_as_messages(server: ThreadServer, ns: str) -> None:
    with Hindsight(server.url, api_key=ADMIN_KEY) as hs:
        hs.append(ns, "chat", "note from the operator", role="system")
        hs.append(ns, "chat", "a tool observation", role="observation")
    items = asyncio.run(session(server, ns).get_items())
    assert items == [
        {"role": "system", "content": "note from the operator"},
        {"role": "user", "content": "a tool observation"},
    ]


# --- Runner.run ---------------------------------------------------------------------------


def test_runner_continues_a_conversation_with_a_new_session_object(
    server: ThreadServer, ns: str, model: FakeOpenAI
) -> None:
    agent = Agent(name="Assistant", instructions="Be brief.", model="fake-model")

    async def turn(message: str) -> str:
        s = session(server, ns, "ada")  # a new object each turn: nothing kept in-process
        result = await Runner.run(agent, message, session=s)
        await s.aclose()
        return str(result.final_output)

    async def conversation() -> None:
        # one event loop: the SDK's default OpenAI client is bound to the first it runs on
        assert await turn("Hi, my name is Ada.") == "Nice to meet you."
        assert await turn("What is my name?") == "Your name is Ada."
        sent = model.requests[-1]["body"]["input"]
        assert [i.get("role") for i in sent] == ["user", "assistant", "user"]
        assert await session(server, ns, "other").get_items() == []
        assert await turn("what is my name?") == "Your name is Ada."

    asyncio.run(conversation())


def test_the_example_resumes_the_conversation_after_a_restart(
    server: ThreadServer, ns: str, model: FakeOpenAI
) -> None:
    env = {
        **os.environ,
        "HINDSIGHT_URL": server.url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_NAMESPACE": ns,
        "OPENAI_BASE_URL": model.url,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_MODEL": "fake-model",
    }

    def run(message: str) -> str:
        out = subprocess.run(
            [sys.executable, str(EXAMPLE), "chat-ada", message],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert run("Hi! My name is Ada.") == (
        "assistant: Nice to meet you.\nhistory: 2 items in session 'chat-ada'\n"
    )
    assert run("What is my name?") == (
        "assistant: Your name is Ada.\nhistory: 4 items in session 'chat-ada'\n"
    )
