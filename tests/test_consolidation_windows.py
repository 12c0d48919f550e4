"""Consolidation reads every step past the mark: a long session is distilled in windows
that each fit the LLM's prompt, and one bad `metadata.memory` item is skipped, not fatal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hindsight.services.consolidation import WINDOW_MAX_CHARS
from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer


def settled(api: Api, job_id: str, timeout: float = 30) -> dict[str, Any]:
    """The job once it finished, or once its first attempt failed."""
    job: dict[str, Any] = wait_until(
        lambda: api.client.get(f"{api.base}/jobs/{job_id}").json(),
        "the job to finish or fail an attempt",
        timeout,
        accept=lambda job: job["status"] in ("succeeded", "failed") or job["error"],
    )
    return job


def end(api: Api, session: str) -> dict[str, Any]:
    r = api.client.post(f"{api.base}/sessions/{session}:end")
    assert r.status_code == 200, r.text
    return settled(api, r.json()["consolidation"]["job_id"])


@pytest.fixture(scope="module")
def llm_server(module_db: str, redis_url: str, brain: FakeOpenAI) -> Iterator[ThreadServer]:
    settings = make_settings(
        llm_base_url=brain.url, llm_model="fake-chat", job_poll_interval_seconds=0.05
    )
    with ThreadServer(settings, module_db, redis_url) as srv:
        yield srv


def test_a_session_longer_than_one_prompt_is_distilled_in_windows(
    llm_server: ThreadServer, ns: str
) -> None:
    api = Api.at(llm_server.url, ns)
    filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 530  # ~30,000
    assert WINDOW_MAX_CHARS // 2 < len(filler) < WINDOW_MAX_CHARS
    api.append("long", "my editor is vim")  # the oldest step: the one a trim would lose
    api.append("long", filler)
    api.append("long", filler)
    api.append("long", "my shell is zsh")
    job = end(api, "long")
    assert job["status"] == "succeeded", job
    assert sorted(o["key"] for o in job["result"]["observed"]) == ["user.editor", "user.shell"]
    assert (job["from_step"], job["through_step"]) == (0, 3)
    assert job["result"]["steps_read"] == 4
    assert job["result"]["windows"] == 2
    assert job["result"]["window_max_chars"] == WINDOW_MAX_CHARS
    # the mark is past every step: nothing is left to consolidate
    assert end(api, "long")["result"]["note"] == "no new steps"


def test_one_invalid_marked_memory_is_skipped_with_its_reason(api: Api) -> None:
    api.append(
        "marks",
        "two marks, one broken",
        metadata={
            "memory": [
                {"key": "user.home", "value": "Oslo"},
                {"key": "user.pet", "value": "a cat", "action": "adopt"},
            ]
        },
    )
    api.append("marks", "another", metadata={"memory": {"key": "user.job", "value": "baker"}})
    job = end(api, "marks")
    assert job["status"] == "succeeded" and job["attempts"] == 1, job
    assert sorted(o["key"] for o in job["result"]["observed"]) == ["user.home", "user.job"]
    [skipped] = job["result"]["skipped"]
    assert skipped["step_index"] == 0
    assert skipped["reason"].startswith("metadata.memory item is invalid: action: ")
    assert "adopt" not in skipped["reason"]  # the reason names the field, not the input
