"""Embedding providers: the built-in one, and any OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hindsight.config import Settings
from hindsight.embeddings import create_embedder
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.errors import ProviderError, Unavailable
from tests.support.fake_openai import FakeOpenAI


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_builtin_is_deterministic_unit_length_and_lexical() -> None:
    e = BuiltinEmbedder(384)
    a = e.embed_one("The user's favorite color is blue")
    assert a.shape == (384,) and a.dtype == np.float32
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-6)
    assert np.array_equal(a, BuiltinEmbedder(384).embed_one("The user's favorite color is blue"))
    assert cosine(a, e.embed_one("favorite color: blue")) > 0.8
    # shared word pieces (trigrams) still count when the spelling differs
    assert cosine(a, e.embed_one("favourite colours: blue")) > 0.3
    assert abs(cosine(a, e.embed_one("quarterly tax filing deadline"))) < 0.05
    # only stop words or punctuation still gives a unit vector
    for text in ("the of and", "!!!", ""):
        assert np.linalg.norm(e.embed_one(text)) == pytest.approx(1.0, abs=1e-6)


def test_builtin_values_are_pinned() -> None:
    """Stored vectors must stay comparable across versions: any change to the built-in
    embedder needs a new VERSION (and a `hindsight reembed`)."""
    v = BuiltinEmbedder(384).embed_one("pinned example text")
    assert BuiltinEmbedder.VERSION == "builtin-hash-v1"
    nonzero = np.nonzero(v)[0]
    assert list(nonzero[:6]) == [20, 28, 56, 59, 76, 85]
    assert [round(float(v[i]), 5) for i in nonzero[:6]] == [
        0.11704,
        0.11704,
        0.46816,
        0.11704,
        0.11704,
        -0.11704,
    ]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(dimensions=48) as server:
        yield server


def settings_for(fake: FakeOpenAI, **extra: object) -> Settings:
    return Settings(
        embedding_base_url=fake.url,
        embedding_model="fake-embed",
        embedding_api_key="sk-test",
        data_dir=Path("/nonexistent"),
        **extra,
    )


def test_openai_compatible_learns_width_and_batches(fake: FakeOpenAI) -> None:
    async def go() -> None:
        embedder = await create_embedder(settings_for(fake, embedding_batch_size=4))
        assert embedder.dimensions == 48 and embedder.name == "openai:fake-embed"
        texts = [f"text number {i}" for i in range(10)]
        vectors = await embedder.embed(texts)
        assert len(vectors) == 10
        assert all(v.shape == (48,) for v in vectors)
        assert np.allclose(vectors[3], BuiltinEmbedder(48).embed_one("text number 3"), atol=1e-6)
        await embedder.aclose()

    asyncio.run(go())
    batches = [r["body"]["input"] for r in fake.requests if r["path"] == "embeddings"]
    assert [len(b) for b in batches] == [1, 4, 4, 2]  # the probe, then batches of 4
    assert fake.requests[-1]["auth"] == "Bearer sk-test"


def test_configured_width_is_requested(fake: FakeOpenAI) -> None:
    async def go() -> int:
        embedder = await create_embedder(settings_for(fake, embedding_dimensions=32))
        (v,) = await embedder.embed(["x"])
        await embedder.aclose()
        return int(v.shape[0])

    assert asyncio.run(go()) == 32
    assert fake.requests[-1]["body"]["dimensions"] == 32
    assert fake.count("embeddings") == 1  # no probe when the width is configured


def test_transient_errors_are_retried_and_others_are_not(fake: FakeOpenAI) -> None:
    async def go() -> None:
        embedder = await create_embedder(settings_for(fake, embedding_dimensions=16))
        fake.fail_next(429)
        fake.fail_next(503)
        (v,) = await embedder.embed(["retried"])
        assert v.shape == (16,)
        fake.fail_next(400)
        with pytest.raises(ProviderError, match="HTTP 400"):
            await embedder.embed(["refused"])
        fake.fail_next(500, times=10)
        with pytest.raises(Unavailable, match="after retries"):
            await embedder.embed(["down"])
        fake.faults.clear()
        await embedder.aclose()

    asyncio.run(go())
