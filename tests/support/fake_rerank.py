"""A small local server that speaks the rerank protocols (TEI: `POST /rerank`; Cohere and
Jina: `POST /v1/rerank`), so the service's real HTTP client code runs in tests and
benchmarks. Deterministic: `scorer(query, texts)` scores the texts; the default reverses
them (the last text scores highest), so a reranked recall is visibly reordered.

Failure injection: `fail_next(status, times)` answers the next requests with that HTTP
status; `delay_next(seconds)` stalls them; `malformed_next()` sends a body that is not JSON.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from tests.support.poll import wait_until
from tests.support.servers import free_port

Scorer = Callable[[str, list[str]], list[float]]


def reverse(query: str, texts: list[str]) -> list[float]:
    n = len(texts)
    return [(i + 1) / n for i in range(n)]


class FakeRerank:
    def __init__(self, scorer: Scorer = reverse) -> None:
        self.scorer = scorer
        self.requests: list[dict[str, Any]] = []
        self.faults: deque[tuple[str, Any]] = deque()
        self.closing = threading.Event()  # set on exit: stalled requests end
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(self._build(), host="127.0.0.1", port=self.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def fail_next(self, status: int, times: int = 1, body: Any = None) -> None:
        for _ in range(times):
            self.faults.append(("status", (status, body)))

    def delay_next(self, seconds: float, times: int = 1) -> None:
        for _ in range(times):
            self.faults.append(("delay", seconds))

    def malformed_next(self, times: int = 1) -> None:
        for _ in range(times):
            self.faults.append(("malformed", None))

    def _build(self) -> FastAPI:
        app = FastAPI()

        async def received(request: Request, path: str) -> tuple[dict[str, Any], Response | None]:
            body = await request.json()
            self.requests.append(
                {
                    "path": path,
                    "body": body,
                    "auth": request.headers.get("authorization"),
                    "query": dict(request.query_params),
                }
            )
            if not self.faults:
                return body, None
            kind, arg = self.faults.popleft()
            if kind == "status":
                status, payload = arg
                return body, JSONResponse(
                    payload or {"error": f"injected {status}"}, status_code=status
                )
            if kind == "delay":
                await self._stall(arg)
                return body, None
            return body, PlainTextResponse("not json {", media_type="application/json")

        async def scored(query: str, texts: list[str]) -> list[tuple[int, float]]:
            scores = await asyncio.to_thread(self.scorer, query, texts)
            return sorted(enumerate(scores), key=lambda p: -p[1])

        @app.post("/rerank")
        async def tei(request: Request) -> Response:
            body, injected = await received(request, "tei")
            if injected is not None:
                return injected
            ranked = await scored(body["query"], body["texts"])
            return JSONResponse([{"index": i, "score": s} for i, s in ranked])

        @app.post("/v1/rerank")
        async def cohere_or_jina(request: Request) -> Response:
            body, injected = await received(request, "v1")
            if injected is not None:
                return injected
            ranked = await scored(body["query"], body["documents"])
            top = ranked[: body.get("top_n") or len(ranked)]
            return JSONResponse(
                {
                    "id": "fake",
                    "model": body.get("model"),
                    "results": [{"index": i, "relevance_score": s} for i, s in top],
                    "usage": {"total_tokens": 1},
                }
            )

        return app

    def __enter__(self) -> FakeRerank:
        self.thread.start()
        wait_until(
            lambda: self.server.started or not self.thread.is_alive(),
            "the fake rerank server starts",
            timeout=30,
        )
        if not self.server.started:
            raise RuntimeError("fake rerank server did not start")
        return self

    async def _stall(self, seconds: float) -> None:
        """Sleep `seconds`, or until the server closes: uvicorn's shutdown waits for every
        request in progress, and a test may stall one far longer than it runs."""
        end = time.monotonic() + seconds
        while not self.closing.is_set() and time.monotonic() < end:
            await asyncio.sleep(0.05)

    def __exit__(self, *exc: Any) -> None:
        self.closing.set()
        self.server.should_exit = True
        self.thread.join(timeout=10)
