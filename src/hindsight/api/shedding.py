"""Past its capacity a worker refuses early instead of letting every answer wait.

Without a bound, an overloaded worker accepts everything and serves it all late: offered
twice what it can do, every answer waited seconds, longer for as long as the overload
lasted. Here a worker works on at most HINDSIGHT_MAX_IN_FLIGHT requests at once; the next
ones wait for a slot, and one that cannot start in time is answered 503 `overloaded` with
`Retry-After: 1` (the SDKs retry it).

How long is "in time" depends on why there is a queue, as in the queue timeouts of
Facebook's "Fail at Scale" (CoDel applied to a server's queue). A burst on a worker that
keeps up makes a queue that drains within HINDSIGHT_QUEUE_WAIT_MS: its requests wait, in
arrival order, and are all served. A request that waited that long and gave up shows a queue
that will not drain by itself, where waiting longer only makes every answer later: from then
until the queue is next empty, a new request waits at most HINDSIGHT_QUEUE_CONGESTED_WAIT_MS,
and a freed slot goes to the newest waiter (who can still be answered fast) rather than the
oldest (the next to give up). So no request waits longer than the queue wait, and under
sustained overload the refusals come within milliseconds. A request waiting on a remote
embedding, LLM or rerank endpoint lends its slot out meanwhile (`hindsight.admission`), so
the bound is on the work of this machine's cores, not on an endpoint's latency.

Probes, metrics, the docs and the panel's files are never held or refused, nor is an SSE
event stream (it lasts as long as its client stays); MCP's messages are work like REST's.
"""

from __future__ import annotations

import json
import time

from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight import admission
from hindsight.observability import metrics

_WORK = ("/v1/", "/mcp", "/messages/")


def _is_work(scope: Scope) -> bool:
    path: str = scope["path"]
    return path.startswith(_WORK)


class LoadShedder:
    def __init__(
        self, app: ASGIApp, *, max_in_flight: int, queue_wait_ms: int, queue_congested_wait_ms: int
    ) -> None:
        self.app = app
        self.max_in_flight = max_in_flight
        self.wait = queue_wait_ms / 1000
        self.congested_wait = min(queue_congested_wait_ms, queue_wait_ms) / 1000
        self._slots: admission.Slots | None = None  # made on first use, in the server's loop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.max_in_flight <= 0 or scope["type"] != "http" or not _is_work(scope):
            await self.app(scope, receive, send)
            return
        if self._slots is None:
            self._slots = admission.Slots(self.max_in_flight)
        slots = self._slots
        started = time.monotonic()
        if not await slots.take(self.congested_wait if slots.congested() else self.wait):
            metrics.SHED_REQUESTS.inc()
            waited = (time.monotonic() - started) * 1000
            await _overloaded(send, self.max_in_flight, waited)
            return
        hold = admission.hold(slots)
        try:
            await self.app(scope, receive, send)
        finally:
            hold.release()


async def _overloaded(send: Send, max_in_flight: int, waited_ms: float) -> None:
    body = json.dumps(
        {
            "error": {
                "code": "overloaded",
                "message": f"the server is at capacity: {max_in_flight} requests in progress "
                f"and no slot came free within {waited_ms:.0f} ms; retry after 1 s "
                "(HINDSIGHT_MAX_IN_FLIGHT, HINDSIGHT_QUEUE_WAIT_MS, "
                "HINDSIGHT_QUEUE_CONGESTED_WAIT_MS)",
                "details": None,
            }
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
