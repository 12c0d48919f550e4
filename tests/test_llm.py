"""The OpenAI-compatible LLM client against a local server speaking the same protocol:
retried successes, clear errors, validated JSON."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from hindsight.errors import ProviderError, Unavailable
from hindsight.llm.openai_compat import OpenAICompatibleLLM
from tests.support.fake_openai import FakeOpenAI


class Answer(BaseModel):
    color: str
    count: int


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def llm(fake: FakeOpenAI, **kw: object) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(base_url=fake.url, model="fake-chat", api_key="sk-x", **kw)  # type: ignore[arg-type]


def ask(client: OpenAICompatibleLLM) -> Answer:
    async def go() -> Answer:
        try:
            return await client.complete_json("system", "user", Answer)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_valid_json_comes_back_validated(fake: FakeOpenAI) -> None:
    fake.reply('```json\n{"color": "blue", "count": 3}\n```')
    assert ask(llm(fake)) == Answer(color="blue", count=3)
    sent = fake.requests[-1]["body"]
    assert sent["model"] == "fake-chat" and sent["response_format"] == {"type": "json_object"}
    assert sent["temperature"] == 0.0


def test_429_then_success_is_retried(fake: FakeOpenAI) -> None:
    fake.fail_next(429)
    fake.fail_next(503)
    fake.reply('{"color": "red", "count": 1}')
    assert ask(llm(fake)).color == "red"
    assert fake.count("chat") == 3


def test_persistent_500_is_unavailable(fake: FakeOpenAI) -> None:
    fake.fail_next(500, times=10)
    with pytest.raises(Unavailable, match="HTTP 500"):
        ask(llm(fake, max_retries=2))
    assert fake.count("chat") == 3


def test_client_errors_are_not_retried(fake: FakeOpenAI) -> None:
    fake.fail_next(400)
    with pytest.raises(ProviderError, match="HTTP 400"):
        ask(llm(fake))
    assert fake.count("chat") == 1


def test_malformed_body_is_a_clear_error(fake: FakeOpenAI) -> None:
    fake.malformed_next()
    with pytest.raises(ProviderError, match="not JSON"):
        ask(llm(fake, max_retries=0))


def test_timeout_is_retried_then_unavailable(fake: FakeOpenAI) -> None:
    fake.delay_next(2.0, times=5)
    with pytest.raises(Unavailable, match="timed out"):
        ask(llm(fake, timeout=0.3, max_retries=1))


def test_timeout_then_success(fake: FakeOpenAI) -> None:
    # the retry's answer must come within the timeout too, on a busy machine as well
    fake.delay_next(30.0)
    fake.reply('{"color": "green", "count": 2}')
    assert ask(llm(fake, timeout=3.0, max_retries=2)).color == "green"


def test_wrong_json_gets_one_repair_then_a_clear_error(fake: FakeOpenAI) -> None:
    fake.reply('{"colour": "blue"}', '{"color": "blue", "count": 7}')
    assert ask(llm(fake)).count == 7
    repair = fake.requests[-1]["body"]["messages"]
    assert "not valid for the required JSON schema" in repair[-1]["content"]
    fake.reply("not json at all", '{"still": "wrong"}')
    with pytest.raises(ProviderError, match="after a second try"):
        ask(llm(fake))
