"""Embedding and LLM calls show in the metrics: latency, errors, tokens reported."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from hindsight.embeddings.openai_compat import OpenAICompatibleEmbedder
from hindsight.errors import ProviderError
from hindsight.llm.openai_compat import OpenAICompatibleLLM
from hindsight.observability import metrics
from tests.support.fake_openai import FakeOpenAI
from tests.support.scrape import value

SECONDS = "hindsight_provider_request_duration_seconds_count"
ERRORS = "hindsight_provider_errors_total"
TOKENS = "hindsight_provider_tokens_total"


class Answer(BaseModel):
    color: str


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def scrape() -> str:
    return metrics.exposition().decode()


def test_llm_calls_are_timed_counted_and_failures_too(fake: FakeOpenAI) -> None:
    before = scrape()
    fake.reply('{"color": "blue"}')
    fake.fail_next(400)

    async def go() -> None:
        llm = OpenAICompatibleLLM(base_url=fake.url, model="m-chat", api_key="sk-x")
        try:
            with pytest.raises(ProviderError):
                await llm.complete_json("system", "user", Answer)
            assert (await llm.complete_json("system", "user", Answer)).color == "blue"
        finally:
            await llm.aclose()

    asyncio.run(go())
    after = scrape()
    labels = {"provider": "llm", "model": "m-chat"}
    assert value(after, SECONDS, **labels) == value(before, SECONDS, **labels) + 2
    assert value(after, ERRORS, **labels) == value(before, ERRORS, **labels) + 1
    for kind in ("prompt", "completion"):
        assert value(after, TOKENS, kind=kind, **labels) == (
            value(before, TOKENS, kind=kind, **labels) + 1
        )


def test_embedding_calls_are_timed_and_their_tokens_counted(fake: FakeOpenAI) -> None:
    before = scrape()

    async def go() -> None:
        embedder = OpenAICompatibleEmbedder(
            base_url=fake.url, model="m-embed", api_key=None, dimensions=64, batch_size=2
        )
        try:
            await embedder.embed(["a", "b", "c"])  # two requests
        finally:
            await embedder.aclose()

    asyncio.run(go())
    after = scrape()
    labels = {"provider": "embedding", "model": "m-embed"}
    assert value(after, SECONDS, **labels) == value(before, SECONDS, **labels) + 2
    assert value(after, TOKENS, kind="prompt", **labels) > value(
        before, TOKENS, kind="prompt", **labels
    )
