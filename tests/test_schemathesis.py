"""Any input the OpenAPI schema allows, and plenty it does not: never a 5xx.

Schemathesis generates requests for every /v1 operation from the live schema (bounded
examples, derandomized so a failure repeats), sent with an admin key to a service of its
own, each aimed at one namespace so nothing else is touched."""

from __future__ import annotations

from collections.abc import Iterator

import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck

from tests.conftest import ADMIN_KEY, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer

EXAMPLES = 12  # per operation: ~60 operations, a minute or so in all
NAMESPACE = "fuzzed"


@pytest.fixture(scope="module")
def fuzz_server(module_db: str, redis_url: str, brain: FakeOpenAI) -> Iterator[ThreadServer]:
    # an LLM, so extraction runs instead of answering 503 "not configured"
    settings = make_settings(llm_base_url=brain.url, llm_model="fake-chat")
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


def test_no_generated_request_gets_a_server_error(fuzz_server: ThreadServer) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzz_server.url}/openapi.json")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {ADMIN_KEY}"
    # something to find, read, change and delete
    session.post(
        f"{fuzz_server.url}/v1/namespaces/{NAMESPACE}/memories",
        json={"key": "user.city", "value": "Oslo"},
    ).raise_for_status()
    session.post(
        f"{fuzz_server.url}/v1/namespaces/{NAMESPACE}/sessions/s1/steps",
        json={"content": "planned the trip"},
    ).raise_for_status()

    failures: dict[tuple[str, str, int], str] = {}
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith("/v1/"):
            continue
        operations += 1

        @hypothesis.given(case=operation.as_strategy())
        @hypothesis.settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case: schemathesis.Case) -> None:
            if case.path_parameters and "namespace" in case.path_parameters:
                case.path_parameters["namespace"] = NAMESPACE
            response = case.call(base_url=fuzz_server.url, session=session, timeout=30)
            if response.status_code >= 500:
                failures.setdefault(
                    (case.method, case.path, response.status_code),
                    f"{response.text[:300]}\n  reproduce: {case.as_curl_command()[:600]}",
                )

        run()
    assert operations > 30
    assert not failures, "\n".join(f"{m} {p} -> {s}: {why}" for (m, p, s), why in failures.items())
