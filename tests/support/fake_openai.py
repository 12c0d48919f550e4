"""A small local server that speaks the OpenAI HTTP protocol, so the real `openai` client
code runs in tests. Deterministic: embeddings come from the built-in hashing embedder at
the requested width; chat answers (Chat Completions and Responses) come from a script the
test sets.

Failure injection: `fail_next(status, times)` answers the next requests with that HTTP
status; `delay_next(seconds)` stalls them; `malformed_next()` returns a body that is not
JSON.

Concurrency: `in_flight[path]` is how many requests to a path ("embeddings", "chat",
"responses") are being answered right now, `max_in_flight[path]` the most there have been
at once since the start or `reset_max_in_flight()`.
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
from starlette.types import Receive, Scope, Send

from hindsight.embeddings.builtin import BuiltinEmbedder
from tests.support.poll import wait_until
from tests.support.servers import free_port


class FakeOpenAI:
    def __init__(
        self,
        *,
        dimensions: int = 64,
        model: str = "fake-embed",
        sees: Callable[[str], str] | None = None,
    ) -> None:
        self.dimensions = dimensions
        self.model = model
        # what the model makes of a text before embedding it: a model blind to a script
        # (an English one reading Chinese) is one that drops its characters
        self.sees = sees or (lambda text: text)
        self.requests: list[dict[str, Any]] = []
        self.faults: deque[tuple[str, Any]] = deque()
        self.closing = threading.Event()  # set on exit: stalled requests end
        self.chat_replies: deque[str | Callable[[dict[str, Any]], str]] = deque()
        # answers every chat request when no scripted reply is queued
        self.brain: Callable[[dict[str, Any]], str] | None = None
        self.in_flight: dict[str, int] = {}
        self.max_in_flight: dict[str, int] = {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.app = self._build()
        self.server = uvicorn.Server(
            uvicorn.Config(
                self._counted,
                interface="asgi3",
                host="127.0.0.1",
                port=self.port,
                log_level="warning",
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    # --- test controls ---
    def fail_next(self, status: int, times: int = 1) -> None:
        for _ in range(times):
            self.faults.append(("status", status))

    def delay_next(self, seconds: float, times: int = 1) -> None:
        for _ in range(times):
            self.faults.append(("delay", seconds))

    def malformed_next(self, times: int = 1) -> None:
        for _ in range(times):
            self.faults.append(("malformed", None))

    def reply(self, *answers: str | Callable[[dict[str, Any]], str]) -> None:
        self.chat_replies.extend(answers)

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r["path"] == path)

    def reset_max_in_flight(self) -> None:
        self.max_in_flight = dict(self.in_flight)

    # --- server ---
    async def _counted(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, counting the requests in flight per path (one event loop serves them
        all: no lock needed)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"].removeprefix("/v1/").removesuffix("/completions")
        self.in_flight[path] = self.in_flight.get(path, 0) + 1
        self.max_in_flight[path] = max(self.max_in_flight.get(path, 0), self.in_flight[path])
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight[path] -= 1

    def _build(self) -> FastAPI:
        app = FastAPI()

        async def fault() -> Response | None:
            if not self.faults:
                return None
            kind, arg = self.faults.popleft()
            if kind == "status":
                return JSONResponse(
                    {"error": {"message": f"injected {arg}", "type": "server_error"}},
                    status_code=arg,
                    headers={"retry-after-ms": "10"},
                )
            if kind == "delay":
                await self._stall(arg)
                return None
            return PlainTextResponse("this is not json {", media_type="application/json")

        @app.post("/v1/embeddings")
        async def embeddings(request: Request) -> Response:
            body = await request.json()
            self.requests.append(
                {
                    "path": "embeddings",
                    "body": body,
                    "auth": request.headers.get("authorization"),
                    "query": dict(request.query_params),
                }
            )
            injected = await fault()
            if injected is not None:
                return injected
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            width = body.get("dimensions") or self.dimensions
            embedder = BuiltinEmbedder(width)
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": [float(x) for x in embedder.embed_one(self.sees(text))],
                }
                for i, text in enumerate(inputs)
            ]
            return JSONResponse(
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            )

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            body = await request.json()
            self.requests.append({"path": "chat", "body": body})
            injected = await fault()
            if injected is not None:
                return injected
            if not self.chat_replies:
                content = self.brain(body) if self.brain is not None else "{}"
            else:
                answer = self.chat_replies.popleft()
                content = answer(body) if callable(answer) else answer
            return JSONResponse(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )

        @app.post("/v1/responses")
        async def responses(request: Request) -> Response:
            """The Responses API (what the OpenAI Agents SDK calls by default), text only."""
            body = await request.json()
            self.requests.append({"path": "responses", "body": body})
            injected = await fault()
            if injected is not None:
                return injected
            if not self.chat_replies:
                content = self.brain(body) if self.brain is not None else "{}"
            else:
                answer = self.chat_replies.popleft()
                content = answer(body) if callable(answer) else answer
            n = len(self.requests)
            return JSONResponse(
                {
                    "id": f"resp_fake{n}",
                    "object": "response",
                    "created_at": int(time.time()),
                    "status": "completed",
                    "model": body["model"],
                    "output": [
                        {
                            "type": "message",
                            "id": f"msg_fake{n}",
                            "status": "completed",
                            "role": "assistant",
                            "content": [
                                {"type": "output_text", "text": content, "annotations": []}
                            ],
                        }
                    ],
                    "parallel_tool_calls": True,
                    "tool_choice": "auto",
                    "tools": [],
                    "usage": {
                        "input_tokens": 1,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 1,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 2,
                    },
                }
            )

        return app

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        wait_until(
            lambda: self.server.started or not self.thread.is_alive(),
            "the fake OpenAI server starts",
            timeout=30,
        )
        if not self.server.started:
            raise RuntimeError("fake OpenAI server did not start")
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
