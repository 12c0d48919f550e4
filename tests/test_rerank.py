"""The optional reranker: recall's top candidates reordered by a rerank endpoint (TEI,
Cohere, Jina protocols, served locally) or a local cross-encoder; its share explained in
`components`; its failures answered without it, never with an error."""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from hindsight.errors import ConfigurationError, ProviderError, Unavailable
from hindsight.rerank import create_reranker
from hindsight.rerank.combine import unit_scores
from hindsight.rerank.endpoint import EndpointReranker, endpoint_url
from tests.conftest import Api, make_settings
from tests.support.fake_rerank import FakeRerank
from tests.support.scrape import value
from tests.support.servers import ThreadServer, free_port

# loading the tiny cross-encoder must never reach a hub
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SECRET = "sk-proj-" + "Zq7XwV3uT9sR1pO5nM2lK8jH4gF6dS0a"
RERANK_KEY = "rk-test-0123456789abcdef"
QUERY = "what does the user like to drink"
DRINKS = (
    {"key": "user.drink.coffee", "value": "likes strong black coffee to drink in the morning"},
    {"key": "user.drink.tea", "value": "likes green tea to drink in the afternoon"},
    {"key": "user.drink.water", "value": "likes to drink sparkling water with lunch"},
    {"key": "user.drink.juice", "value": "likes orange juice at breakfast"},
    {"key": "user.drink.wine", "value": "likes red wine with dinner"},
    {"key": "user.drink.milk", "value": "drinks warm milk before bed"},
    {"key": "user.pet", "value": "has a tabby cat called Miso"},
)
CANDIDATES = 5


def keys(body: dict[str, Any]) -> list[str]:
    return [r["key"] for r in body["results"]]


def text_key(text: str) -> str:
    """The memory key of a text sent to the reranker (`key: value`)."""
    return text.split(": ", 1)[0]


def skipped_total(api: Api) -> float:
    return value(api.client.get("/metrics").text, "hindsight_recall_rerank_skipped_total")


@pytest.fixture(scope="module")
def tei() -> Iterator[FakeRerank]:
    with FakeRerank() as fake:
        yield fake


@pytest.fixture(scope="module")
def tei_server(tei: FakeRerank, module_db: str, redis_url: str) -> Iterator[ThreadServer]:
    settings = make_settings(
        rerank_provider="tei",
        rerank_url=tei.url,
        rerank_candidates=CANDIDATES,
        rerank_weight=1.0,
        rerank_timeout_seconds=1.0,
    )
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


def test_recall_follows_the_tei_reranker_and_explains_it(
    tei: FakeRerank, tei_server: ThreadServer, ns: str
) -> None:
    api = Api.at(tei_server.url, ns)
    api.observe(*DRINKS)
    # unreranked first (the endpoint fails), k = the reranker's depth: the ranking it sees
    tei.fail_next(500)
    plain = api.recall(QUERY, k=CANDIDATES)
    assert "could not be reranked" in plain["rerank_skipped"]
    assert all(r["components"].get("rerank") is None for r in plain["results"])
    unreranked = keys(plain)
    assert len(unreranked) == CANDIDATES

    tei.requests.clear()
    body = api.recall(QUERY, k=3)
    assert body["rerank_skipped"] is None
    (request,) = tei.requests
    assert request["path"] == "tei" and request["auth"] is None  # no key configured
    sent = request["body"]
    assert sent["query"] == QUERY and sent["raw_scores"] is False
    # the ranking's top max(k, candidates), in its order, as `key: value` texts
    assert [text_key(t) for t in sent["texts"]] == unreranked
    by_key = {m["key"]: m["value"] for m in DRINKS}
    assert sent["texts"] == [f"{k}: {by_key[k]}" for k in unreranked]
    # the server reverses them; with weight 1 the reranker decides, then k are kept
    assert keys(body) == unreranked[::-1][:3]
    for rank, hit in enumerate(body["results"]):
        c = hit["components"]
        assert c["rerank_weight"] == 1.0
        assert c["rerank"] == pytest.approx((CANDIDATES - rank) / CANDIDATES, abs=1e-6)
        assert c["relevance"] == pytest.approx(c["rerank"], abs=1e-6)
        assert c["relevance_before_rerank"] > 0
    # the recall log keeps the same explanation
    logged = api.client.get(f"{api.base}/recalls/{body['recall_id']}").json()
    assert logged["results"][0]["components"]["rerank"] == 1.0


def test_a_failing_or_slow_reranker_leaves_recall_unreranked(
    tei: FakeRerank, tei_server: ThreadServer, ns: str
) -> None:
    api = Api.at(tei_server.url, ns)
    api.observe(*DRINKS)
    before = skipped_total(api)

    tei.fail_next(503)
    r = api.client.post(f"{api.base}/recall", json={"query": QUERY, "k": CANDIDATES})
    assert r.status_code == 200, r.text
    failed = r.json()
    assert "HTTP 503" in failed["rerank_skipped"] and failed["vector_skipped"] is None
    assert all(h["components"].get("rerank") is None for h in failed["results"])
    scores = [h["score"] for h in failed["results"]]
    assert scores == sorted(scores, reverse=True)

    tei.delay_next(30.0)
    started = time.monotonic()
    r = api.client.post(f"{api.base}/recall", json={"query": QUERY, "k": CANDIDATES})
    elapsed = time.monotonic() - started
    assert r.status_code == 200, r.text
    slow = r.json()
    assert "timed out after 1 s" in slow["rerank_skipped"]
    # the reranker's deadline (1 s, and the rest of a recall on a busy machine), not the
    # endpoint's stall
    assert elapsed < 5, elapsed
    # the same ranking as without the reranker (every result gained one access alike)
    assert keys(slow) == keys(failed)

    tei.malformed_next()
    assert "cannot read" in api.recall(QUERY)["rerank_skipped"]
    assert skipped_total(api) == before + 3
    # the endpoint answers again: reranked again
    assert api.recall(QUERY)["rerank_skipped"] is None


def test_cohere_protocol_sends_the_key_and_blends_relevance(
    module_db: str, redis_url: str, ns: str
) -> None:
    with FakeRerank() as cohere:
        settings = make_settings(
            rerank_provider="cohere",
            rerank_url=cohere.url,
            rerank_model="fake-rerank",
            rerank_api_key=RERANK_KEY,
            rerank_candidates=CANDIDATES,
            rerank_weight=0.5,
        )
        with ThreadServer(settings, module_db, redis_url) as srv:
            api = Api.at(srv.url, ns)
            api.observe(*DRINKS)
            body = api.recall(QUERY, k=4)
    (request,) = cohere.requests
    assert request["path"] == "v1"
    assert request["auth"] == f"Bearer {RERANK_KEY}"
    sent = request["body"]
    assert sent["model"] == "fake-rerank" and sent["query"] == QUERY
    assert len(sent["documents"]) == CANDIDATES and sent["top_n"] == CANDIDATES
    assert body["rerank_skipped"] is None and len(body["results"]) == 4
    scores = [h["score"] for h in body["results"]]
    assert scores == sorted(scores, reverse=True)
    for hit in body["results"]:
        c = hit["components"]
        assert c["rerank_weight"] == 0.5
        blended = 0.5 * c["relevance_before_rerank"] + 0.5 * c["rerank"]
        assert c["relevance"] == pytest.approx(blended, abs=2e-6)
        # the rule still holds: score = relevance × confidence × boost × specificity
        # × lifecycle terms
        rest = c["confidence"] * c["access_boost"] * c["specificity_factor"]
        rest *= c["tier_weight"] * c["recency_factor"]
        rest *= c["importance_factor"] * c["trust_factor"]
        assert hit["score"] == pytest.approx(c["relevance"] * rest, rel=1e-4)


def test_texts_sent_to_the_reranker_are_redacted(fresh_db: str, redis_url: str, ns: str) -> None:
    leaky = {"key": "user.drink.token", "value": f"likes coffee, deploy token {SECRET}"}
    # stored raw (redaction off), as a namespace written before redaction was turned on
    with ThreadServer(make_settings(redaction="off"), fresh_db, redis_url) as srv:
        Api.at(srv.url, ns).observe(leaky, *DRINKS[:3])
    with FakeRerank() as tei:
        settings = make_settings(rerank_provider="tei", rerank_url=tei.url)
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            body = Api.at(srv.url, ns).recall(f"coffee {SECRET}")
    assert body["rerank_skipped"] is None
    (request,) = tei.requests
    sent = json.dumps(request["body"])
    assert SECRET not in sent
    assert "[REDACTED:openai_key]" in request["body"]["query"]
    texts = request["body"]["texts"]
    assert "user.drink.token: likes coffee, deploy token [REDACTED:openai_key]" in texts


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised one-layer BERT cross-encoder over the test's words."""
    pytest.importorskip("sentence_transformers", reason="pip install 'hindsight[local]'")
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    root = tmp_path_factory.mktemp("ce")
    words = sorted({w for m in DRINKS for w in (m["key"] + " " + m["value"]).split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ":", ".", ",", *words]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(root / "vocab.txt"), model_max_length=64)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
    )
    model_dir = root / "tiny-cross-encoder"
    BertForSequenceClassification(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir


def test_local_cross_encoder(
    tiny_cross_encoder: Path, module_db: str, redis_url: str, ns: str
) -> None:
    import torch
    from sentence_transformers import CrossEncoder

    settings = make_settings(
        rerank_provider="local", rerank_model=str(tiny_cross_encoder), rerank_candidates=CANDIDATES
    )
    with ThreadServer(settings, module_db, redis_url) as srv:
        api = Api.at(srv.url, ns)
        api.observe(*DRINKS)
        body = api.recall(QUERY, k=3)
    assert body["rerank_skipped"] is None and len(body["results"]) == 3
    # the scores are the model's own, read through a sigmoid
    expected = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict(
        [(QUERY, f"{h['key']}: {h['value']}") for h in body["results"]],
        activation_fn=torch.nn.Sigmoid(),
    )
    for hit, score in zip(body["results"], expected, strict=True):
        c = hit["components"]
        assert 0 <= c["rerank"] <= 1 and c["rerank_weight"] == 0.5
        assert c["rerank"] == pytest.approx(float(score), abs=1e-5)


def test_a_stalled_cross_encoder_is_given_up_on(tiny_cross_encoder: Path) -> None:
    from hindsight.rerank.local import CrossEncoderReranker

    reranker = CrossEncoderReranker(str(tiny_cross_encoder), timeout=0.2)
    release = threading.Event()
    real = reranker._predict
    ran: list[str] = []

    def predict(query: str, texts: list[str]) -> list[float]:
        ran.append(query)
        return real(query, texts)

    def stalled(query: str, texts: list[str]) -> list[float]:
        release.wait(10)
        return predict(query, texts)

    async def go() -> None:
        reranker._predict = stalled  # type: ignore[method-assign]
        with pytest.raises(Unavailable, match=r"did not answer within 0\.2 s"):
            await reranker.rerank("q", ["user.drink.tea: likes green tea"])
        # the stalled prediction still holds the model: the next caller gives up too
        with pytest.raises(Unavailable):
            await reranker.rerank("abandoned", ["user.drink.tea: likes green tea"])
        release.set()
        reranker._predict = predict  # type: ignore[method-assign]
        (score,) = await reranker.rerank("q", ["user.drink.tea: likes green tea"])
        assert 0 <= score <= 1
        # the stalled one finished; the one whose recall had given up never ran
        assert ran == ["q", "q"]

    asyncio.run(go())


# --- the client alone, against the fake server ------------------------------------------


def test_endpoint_client_maps_scores_back_and_explains_failures() -> None:
    async def go(fake: FakeRerank) -> None:
        tei = EndpointReranker(protocol="tei", url=fake.url, model=None, api_key=None, timeout=2)
        jina = EndpointReranker(
            protocol="jina",
            url=f"http://user:pw-123@127.0.0.1:{fake.port}/v1/rerank?key=q-secret",
            model="jina-reranker-v2",
            api_key=RERANK_KEY,
            timeout=2,
        )
        try:
            # answered best first, returned in input order
            assert await tei.rerank("q", ["a", "b", "c"]) == pytest.approx([1 / 3, 2 / 3, 1])
            assert await jina.rerank("q", ["a", "b"]) == pytest.approx([0.5, 1.0])
            sent = fake.requests[-1]
            assert sent["body"]["return_documents"] is False and sent["query"] == {
                "key": "q-secret"
            }
            assert sent["auth"] == f"Bearer {RERANK_KEY}"

            fake.fail_next(401, body={"message": f"invalid key {RERANK_KEY}"})
            with pytest.raises(ProviderError) as refused:
                await jina.rerank("q", ["a"])
            message = refused.value.message
            assert "HTTP 401" in message and "invalid key [REDACTED]" in message
            assert RERANK_KEY not in message and "pw-123" not in message
            assert "q-secret" not in message

            fake.fail_next(429)
            with pytest.raises(Unavailable, match="overloaded"):
                await tei.rerank("q", ["a"])
            fake.malformed_next()
            with pytest.raises(ProviderError, match="cannot read"):
                await tei.rerank("q", ["a"])
            fake.scorer = lambda q, texts: [0.5] * len(texts)
            assert await tei.rerank("q", []) == []
            fake.scorer = lambda q, texts: [0.5]  # one score, whatever was sent
            with pytest.raises(ProviderError, match="scored 1 of 2 texts"):
                await tei.rerank("q", ["a", "b"])
        finally:
            await tei.aclose()
            await jina.aclose()

        closed = EndpointReranker(
            protocol="cohere",
            url=f"http://127.0.0.1:{free_port()}",
            model="m",
            api_key=None,
            timeout=2,
        )
        with pytest.raises(Unavailable, match="unreachable"):
            await closed.rerank("q", ["a"])
        await closed.aclose()

    with FakeRerank() as fake:
        asyncio.run(go(fake))


def test_endpoint_urls() -> None:
    assert endpoint_url("http://tei:8080", "tei") == "http://tei:8080/rerank"
    assert endpoint_url("http://tei:8080/", "tei") == "http://tei:8080/rerank"
    assert endpoint_url("https://api.cohere.com", "cohere") == "https://api.cohere.com/v1/rerank"
    assert endpoint_url("https://api.cohere.com/v2", "cohere") == "https://api.cohere.com/v2/rerank"
    assert endpoint_url("https://api.jina.ai/v1/rerank", "jina") == "https://api.jina.ai/v1/rerank"
    assert endpoint_url("http://gw/x?key=1", "jina") == "http://gw/x/v1/rerank?key=1"


def test_scores_outside_0_1_are_read_as_logits() -> None:
    assert unit_scores([0.2, 0.9]) == [0.2, 0.9]
    logits = unit_scores([-3.0, 0.5, 4.0])
    assert logits == sorted(logits) and all(0 < s < 1 for s in logits)
    assert logits[1] == pytest.approx(1 / (1 + math.exp(-0.5)))


def test_configuration_is_checked_at_start_up() -> None:
    assert create_reranker(make_settings()) is None
    with pytest.raises(ValidationError, match="HINDSIGHT_RERANK_URL"):
        make_settings(rerank_provider="tei")
    with pytest.raises(ValidationError, match="HINDSIGHT_RERANK_MODEL"):
        make_settings(rerank_provider="cohere", rerank_url="http://x")
    with pytest.raises(ValidationError, match="HINDSIGHT_RERANK_MODEL"):
        make_settings(rerank_provider="local")
    with pytest.raises(ValidationError):
        make_settings(rerank_weight=1.5)
    with pytest.raises(ValidationError):
        make_settings(rerank_candidates=0)
    # a copy with overrides is not validated again: the factory still refuses
    copied = make_settings().model_copy(update={"rerank_provider": "jina"})
    with pytest.raises(ConfigurationError, match="HINDSIGHT_RERANK_URL"):
        create_reranker(copied)
    reranker = create_reranker(make_settings(rerank_provider="jina", rerank_url="http://j"))
    assert reranker is not None and reranker.name == "jina:default"
    asyncio.run(reranker.aclose())
