"""Recall when the query cannot be embedded: the keyword arm answers alone, and says so."""

from __future__ import annotations

import time

from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.scrape import value
from tests.support.servers import ThreadServer

MEMORIES = (
    {"key": "user.pet", "value": "has a tabby cat called Miso"},
    {"key": "user.car", "value": "drives an old red Volvo"},
    {"key": "user.city", "value": "lives in Bergen near the harbour"},
)


def skipped_total(api: Api) -> float:
    return value(api.client.get("/metrics").text, "hindsight_recall_vector_skipped_total")


def test_a_failing_or_slow_embedding_endpoint_degrades_recall_to_keywords(
    fresh_db: str, redis_url: str
) -> None:
    with FakeOpenAI(dimensions=48) as fake:
        settings = make_settings(
            embedding_base_url=fake.url,
            embedding_model="fake-embed",
            embedding_dimensions=48,
            embedding_timeout_seconds=0.5,
        )
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "degraded")
            api.observe(*MEMORIES)
            healthy = api.recall("which cat does the user have")
            assert healthy.get("vector_skipped") is None
            assert healthy["results"][0]["key"] == "user.pet"
            before = skipped_total(api)

            # failing: every attempt (the client's retries included) answers 500
            fake.fail_next(500, times=20)
            r = api.client.post(f"{api.base}/recall", json={"query": "is the Volvo red"})
            fake.faults.clear()
            assert r.status_code == 200, r.text
            body = r.json()
            assert "could not be embedded" in body["vector_skipped"]
            assert "after retries" in body["vector_skipped"]
            top = body["results"][0]
            assert top["key"] == "user.car"
            c = top["components"]
            assert c["vector_rank"] is None and c["similarity"] == 0
            assert c["keyword_rank"] == 1 and c["relevance"] == c["keyword"] > 0

            # slow: each attempt outlasts the timeout
            fake.delay_next(30.0, times=20)
            started = time.monotonic()
            r = api.client.post(f"{api.base}/recall", json={"query": "where is the harbour"})
            elapsed = time.monotonic() - started
            fake.faults.clear()
            assert r.status_code == 200, r.text
            assert "timed out" in r.json()["vector_skipped"]
            assert r.json()["results"][0]["key"] == "user.city"
            # bounded by the timeouts and the retries' backoff (about 5.5 s), not the endpoint
            # (4 x 30 s)
            assert elapsed < 15, elapsed

            # a write cannot do without its vector: refused whole, nothing half-written
            fake.fail_next(500, times=20)
            r = api.client.post(
                f"{api.base}/memories:batch",
                json={"memories": [{"key": "user.boat", "value": "sails a dinghy"}]},
            )
            fake.faults.clear()
            assert r.status_code == 503 and r.headers.get("Retry-After"), r.text
            keys = {m["key"] for m in api.client.get(f"{api.base}/memories").json()["memories"]}
            assert keys == {m["key"] for m in MEMORIES}

            assert skipped_total(api) == before + 2
            # the endpoint is back: both arms again
            again = api.recall("does the user sail a boat or drive a car")
            assert again.get("vector_skipped") is None
            assert again["results"][0]["components"]["vector_rank"] is not None
