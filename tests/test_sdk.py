"""The Python SDK: the same round trips with the sync and the async client, against a live
server; errors carrying the server's message; retries on transient failures only."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request, Response

from hindsight.client import APIError, AsyncHindsight, Hindsight, TransportError
from tests.conftest import ADMIN_KEY
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer, free_port


class Sync:
    """Calls the sync client as the async one is called, so one scenario serves both."""

    def __init__(self, client: Hindsight) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call


async def scenario(hs: Any, ns: str) -> None:
    me = await hs.whoami()
    assert me.is_admin and me.name == "bootstrap-admin"

    first = await hs.observe(
        ns, "user.city", "Oslo", memory_type="fact", source="sdk", tags=["home"]
    )
    assert first.outcome == "created" and first.confidence == 0.5
    results = await hs.observe_many(
        ns,
        [{"key": "user.city", "value": "Oslo"}, {"key": "user.pet", "value": "a cat named Miso"}],
    )
    assert [r.outcome for r in results] == ["reinforced", "created"]
    assert results[0].confidence == 0.6

    found = await hs.recall(ns, "which city does the user live in", k=2, tags=["home"])
    assert found.results[0].key == "user.city" and found.results[0].components.confidence == 0.6
    log = await hs.explain(ns, str(found.recall_id))
    assert log.query == "which city does the user live in"
    # the conversation so far, beside or instead of a query
    talk = [
        {"role": "user", "content": "My cat keeps me up at night"},
        {"role": "assistant", "content": "Oh no! Is it a kitten?"},
    ]
    found = await hs.recall(ns, context=talk, k=1)
    assert found.results[0].key == "user.pet" and found.conversation is not None
    assert [t.weight for t in found.conversation.turns] == [0.9, 0.5]
    found = await hs.recall(ns, "what is its name again?", context=talk, k=1)
    assert found.results[0].key == "user.pet"
    assert found.conversation is not None and len(found.conversation.turns) == 3
    found = await hs.recall(ns, context=talk, conversation=False, k=1)
    assert found.conversation is None

    memory = await hs.get(ns, str(first.id))
    assert memory.value == "Oslo" and memory.tags == ["home"]
    page = await hs.list_memories(ns, limit=1)
    assert len(page.memories) == 1 and page.next_cursor
    updated = await hs.update(ns, str(first.id), value="Bergen")
    assert updated.value == "Bergen" and updated.confidence == 0.5
    history = await hs.history(ns, str(first.id))
    assert [h.change for h in history] == ["created", "reinforced", "updated"]

    forget = await hs.forget(ns, max_confidence=0.5, dry_run=True)
    assert forget.count == 2 and forget.dry_run
    await hs.delete(ns, str(results[1].id))
    with pytest.raises(APIError) as missing:
        await hs.get(ns, str(results[1].id))
    assert missing.value.status == 404 and "no memory" in missing.value.message

    step = await hs.append(ns, "s1", "looked up trains", role="assistant")
    assert step.step_index == 0
    await hs.append(
        ns,
        "s1",
        "booked the 07:42",
        metadata={"memory": {"key": "user.train", "value": "takes the 07:42"}},
    )
    assert [s.content for s in await hs.steps(ns, "s1")] == ["looked up trains", "booked the 07:42"]
    context = await hs.context(ns, "s1", recent=1)
    assert [s.step_index for s in context.recent] == [1] and context.earlier[0].step_index == 0
    assert (await hs.session(ns, "s1")).step_count == 2
    ended = await hs.end_session(ns, "s1")
    job = await hs.wait_for_job(ns, str(ended.consolidation.job_id), timeout=30)
    assert job.status == "succeeded" and job.method == "deterministic"
    assert (await hs.recall(ns, "train")).results[0].key == "user.train"
    again = await hs.consolidate(ns, "s1")
    assert (await hs.wait_for_job(ns, str(again.job_id))).result["note"] == "no new steps"
    deleted = await hs.delete_session(ns, "s1")
    assert deleted.deleted_steps == 2

    with pytest.raises(APIError) as bad:
        await hs.observe(ns, "k" * 300, "v")
    assert bad.value.status == 422 and bad.value.code == "invalid_input"
    assert bad.value.message == "key: String should have at most 256 characters"


async def the_namespace_as_a_whole(hs: Any, ns: str) -> None:
    exported = await hs.export(ns)
    assert exported[0]["format"] == "hindsight-export"
    assert exported[-1] == {"type": "end", "memories": 2, "sessions": 0, "steps": 0}
    receipt = await hs.erase_namespace(ns)
    assert receipt.namespace == ns and receipt.postgres["long_term_memory"] == 2
    assert (await hs.list_memories(ns)).memories == []


def test_sync_client_round_trip(server: ThreadServer, ns: str) -> None:
    with Hindsight(server.url, ADMIN_KEY) as hs:
        asyncio.run(scenario(Sync(hs), ns))
        assert len(list(hs.iter_memories(ns, page_size=1))) == 2
        asyncio.run(the_namespace_as_a_whole(Sync(hs), ns))


def test_async_client_round_trip(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with AsyncHindsight(server.url, ADMIN_KEY) as hs:
            await scenario(hs, ns)
            assert len([m async for m in hs.iter_memories(ns, page_size=1)]) == 2
            await the_namespace_as_a_whole(hs, ns)

    asyncio.run(go())


def test_auth_errors_carry_status_and_message(server: ThreadServer, ns: str) -> None:
    with Hindsight(server.url) as anonymous, pytest.raises(APIError) as err:
        anonymous.recall(ns, "x")
    assert err.value.status == 401 and "Authorization" in err.value.message


# --- retries, against a real HTTP hop that fails on purpose --------------------------------


class Flaky:
    """A proxy in front of the test server that answers the next requests with a chosen
    status, hangs, or passes them through."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.plan: list[int | str] = []
        self.closing = threading.Event()  # set on exit: a hung answer ends
        self.seen: list[tuple[str, str]] = []
        app = FastAPI()

        @app.api_route("/{path:path}", methods=["GET", "POST", "PATCH", "DELETE"])
        async def relay(path: str, request: Request) -> Response:
            body = await request.body()
            self.seen.append((request.method, "/" + path))
            step = self.plan.pop(0) if self.plan else "pass"
            if isinstance(step, int):
                return Response(
                    status_code=step,
                    headers={"retry-after": "0"},
                    content=b'{"error": {"code": "busy", "message": "try later"}}',
                )
            async with httpx.AsyncClient(base_url=self.upstream) as client:
                upstream = await client.request(
                    request.method,
                    "/" + path,
                    params=request.query_params,
                    content=body,
                    headers={k: v for k, v in request.headers.items() if k != "host"},
                )
            if step == "hang":  # the request went through, the answer does not come back
                await asyncio.to_thread(self.closing.wait, 60)
            return Response(
                upstream.content,
                upstream.status_code,
                media_type=upstream.headers.get("content-type"),
            )

        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Flaky:
        self.thread.start()
        wait_until(lambda: self.server.started, "the proxy to start")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closing.set()
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def flaky(server: ThreadServer) -> Iterator[Flaky]:
    with Flaky(server.url) as proxy:
        yield proxy


def test_transient_failures_are_retried_others_are_not(flaky: Flaky, ns: str) -> None:
    with Hindsight(flaky.url, ADMIN_KEY, max_retries=3) as hs:
        flaky.plan = [503, 429, "pass"]
        assert hs.observe(ns, "k", "v").outcome == "created"
        assert len(flaky.seen) == 3
        flaky.seen.clear()
        flaky.plan = [503, 503, 503, 503, 503]
        with pytest.raises(APIError) as err:
            hs.recall(ns, "k")
        assert err.value.status == 503 and len(flaky.seen) == 4  # 1 + 3 retries
        flaky.seen.clear()
        flaky.plan = [400]
        with pytest.raises(APIError):
            hs.recall(ns, "k")
        assert len(flaky.seen) == 1


def test_a_configuration_error_is_not_retried(flaky: Flaky, ns: str) -> None:
    """Extraction without an LLM is a 503 no wait cures: answered once, at once, with no
    Retry-After (it used to say 3600, and the SDK waited 90 s over three retries)."""
    conversation = [{"role": "user", "content": "I live in Oslo"}]
    raw = httpx.post(
        f"{flaky.url}/v1/namespaces/{ns}/memories:extract",
        json={"messages": conversation},
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
    )
    assert raw.status_code == 503 and raw.json()["error"]["code"] == "not_configured"
    assert "retry-after" not in raw.headers
    assert "HINDSIGHT_LLM_MODEL" in raw.json()["error"]["message"]
    flaky.seen.clear()
    with Hindsight(flaky.url, ADMIN_KEY, max_retries=3) as hs, pytest.raises(APIError) as err:
        hs.extract(ns, conversation)
    assert err.value.code == "not_configured" and len(flaky.seen) == 1


def test_a_timed_out_append_is_retried_without_doubling_the_step(flaky: Flaky, ns: str) -> None:
    # a timeout well above any answer's time on a busy machine: a slow answer to a request
    # that was not hung must not time out (an observe is not retried)
    with Hindsight(flaky.url, ADMIN_KEY, timeout=4.0, max_retries=2) as hs:
        flaky.plan = ["hang", "pass"]
        step = hs.append(ns, "retry", "only once")
        assert step.step_index == 0
        assert [s.content for s in hs.steps(ns, "retry")] == ["only once"]
        # an observe is not safe to repeat after a timeout: it is not retried
        flaky.plan = ["hang"]
        with pytest.raises(TransportError):
            hs.observe(ns, "once", "v")
        assert hs.get(ns, str(hs.observe(ns, "once", "v").id)).observation_count == 2


def test_unreachable_service_is_a_transport_error() -> None:
    with (
        Hindsight(f"http://127.0.0.1:{free_port()}", ADMIN_KEY, max_retries=1) as hs,
        pytest.raises(TransportError, match="GET /v1/whoami"),
    ):
        hs.whoami()


def test_append_is_the_former_name_of_append_step() -> None:
    """One verb for one operation: append_step, as REST and MCP name it; code written
    against the SDK's former name keeps working."""
    from hindsight.client import AsyncHindsight, Hindsight

    assert Hindsight.append is Hindsight.append_step
    assert AsyncHindsight.append is AsyncHindsight.append_step
