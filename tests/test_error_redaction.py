"""Errors say what went wrong without what they were about: no credentials from a URL, no
database internals, no input values."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hindsight.config import Settings
from hindsight.embeddings import create_embedder
from hindsight.errors import HindsightError, ProviderError, Unavailable
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer, free_port


def test_provider_errors_name_the_endpoint_without_its_credentials() -> None:
    async def fails(base: str, expected: type[HindsightError]) -> str:
        settings = Settings(
            embedding_base_url=base,
            embedding_model="fake-embed",
            embedding_dimensions=16,
            data_dir=Path("/nonexistent"),
        )
        embedder = await create_embedder(settings)
        try:
            with pytest.raises(expected) as failed:
                await embedder.embed(["x"])
        finally:
            await embedder.aclose()
        assert type(failed.value) is expected, failed.value
        return failed.value.message

    def with_credentials(url: str, query: str = "") -> str:
        return url.replace("http://", "http://user:s3cret@") + query

    # a refusal (4xx, not retried) is the provider's answer: 502, with its reason
    with FakeOpenAI(dimensions=16) as fake:
        fake.fail_next(400, times=10)
        refused = asyncio.run(fails(with_credentials(fake.url, "?key=q5ecret"), ProviderError))
        assert fake.count("embeddings") == 1  # it reached the endpoint, and was not retried
    assert refused == f"embedding endpoint {fake.url} refused the request (HTTP 400): injected 400"
    # nothing listening is transient trouble: 503 (with Retry-After), try again later
    down = f"http://127.0.0.1:{free_port()}/v1"
    unreachable = asyncio.run(fails(with_credentials(down, "?key=q5ecret"), Unavailable))
    assert unreachable == f"embedding endpoint {down} is unreachable or timed out after retries"
    for message in (refused, unreachable):
        assert "s3cret" not in message and "q5ecret" not in message, message


def test_a_job_error_does_not_echo_the_input(api: Api) -> None:
    secret = "PIN-4242"
    api.append(
        "s", "noted", metadata={"memory": {"key": "user.pin", "value": "v", "action": secret}}
    )
    r = api.client.post(f"{api.base}/sessions/s:end")
    job_id = r.json()["consolidation"]["job_id"]
    job: dict[str, Any] = wait_until(
        lambda: api.client.get(f"{api.base}/jobs/{job_id}").json(),
        "the job to finish or fail an attempt",
        accept=lambda job: job["error"] or job["status"] in ("succeeded", "failed"),
        interval=0.1,
    )
    assert secret not in json.dumps(job), job


def test_a_503_does_not_carry_the_database_drivers_message(fresh_db: str, redis_url: str) -> None:
    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        api = Api.at(srv.url, "down")
        api.observe({"key": "k", "value": "v"})
        with psycopg.connect(fresh_db, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        seen = []
        for _ in range(10):  # until a request meets a connection that was cut
            r = api.client.post(
                f"{api.base}/memories:batch", json={"memories": [{"key": "k", "value": "v"}]}
            )
            seen.append(r.status_code)
            if r.status_code == 503:
                message = r.json()["error"]["message"]
                assert message.startswith("PostgreSQL is unreachable"), message
                for leak in ("terminat", "administrator", "server closed", "consuming input"):
                    assert leak not in message, message
                assert r.headers["Retry-After"]
                return
        pytest.fail(f"no request met a cut connection: {seen}")


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("https://user:pw@llm.example.com:8443/v1?api-key=k#x", "https://llm.example.com:8443/v1"),
        ("http://[::1]:11434/v1", "http://[::1]:11434/v1"),
        ("api.openai.com", "api.openai.com"),
        ("user:pw@host/v1?key=k", "host/v1"),
        ("http://host:99999999/v1", "(a URL that cannot be parsed)"),
    ],
)
def test_urls_are_shown_without_userinfo_or_query(given: str, shown: str) -> None:
    from hindsight import disclose

    assert disclose.url(given) == shown
