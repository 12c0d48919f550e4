"""Past its capacity a worker refuses early instead of letting every answer wait.

Without a bound, an overloaded worker accepts everything and serves it all late: offered
twice what it can do, every answer waited seconds, longer for as long as the overload
lasted. Here a worker works on at most HINDSIGHT_MAX_IN_FLIGHT requests at once; the next
ones wait for a slot in arrival order, and one that cannot start within
HINDSIGHT_QUEUE_WAIT_MS is answered 503 `overloaded` with `Retry-After: 1` (the SDKs retry
it). So the queue, and with it the latency of what is served, stays bounded: what is
waited for is the queue's time, never the overload's.

Probes, metrics, the docs and the panel's files are never held or refused, nor is an SSE
event stream (it lasts as long as its client stays); MCP's messages are work like REST's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque

from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight.observability import metrics

_WORK = ("/v1/", "/mcp", "/messages/")


def _is_work(scope: Scope) -> bool:
    path: str = scope["path"]
    return path.startswith(_WORK)


class _Slots:
    """A counting semaphore whose waiters give up after a while, handing a slot straight to
    the next waiter on release (so a late arrival cannot jump the queue)."""

    def __init__(self, slots: int) -> None:
        self.free = slots
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def take(self, timeout: float) -> bool:
        if self.free > 0 and not self.waiting:
            self.free -= 1
            return True
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(ticket)
        try:
            await asyncio.wait_for(asyncio.shield(ticket), timeout)
            return True
        except TimeoutError:
            if ticket.done():  # handed a slot as the wait ran out: it is ours
                return True
            ticket.cancel()
            self.waiting.remove(ticket)
            return False
        except BaseException:
            if ticket.done() and not ticket.cancelled():
                self.give()  # handed a slot, then cancelled ourselves: pass it on
            else:
                ticket.cancel()
                if ticket in self.waiting:
                    self.waiting.remove(ticket)
            raise

    def give(self) -> None:
        while self.waiting:
            ticket = self.waiting.popleft()
            if not ticket.done():
                ticket.set_result(None)
                return
        self.free += 1


class LoadShedder:
    def __init__(self, app: ASGIApp, *, max_in_flight: int, queue_wait_ms: int) -> None:
        self.app = app
        self.max_in_flight = max_in_flight
        self.wait = queue_wait_ms / 1000
        self._slots: _Slots | None = None  # made on first use, in the server's event loop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.max_in_flight <= 0 or scope["type"] != "http" or not _is_work(scope):
            await self.app(scope, receive, send)
            return
        if self._slots is None:
            self._slots = _Slots(self.max_in_flight)
        slots = self._slots
        started = time.monotonic()
        if not await slots.take(self.wait):
            metrics.SHED_REQUESTS.inc()
            waited = (time.monotonic() - started) * 1000
            await _overloaded(send, self.max_in_flight, waited)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            slots.give()


async def _overloaded(send: Send, max_in_flight: int, waited_ms: float) -> None:
    body = json.dumps(
        {
            "error": {
                "code": "overloaded",
                "message": f"the server is at capacity: {max_in_flight} requests in progress "
                f"and no slot came free within {waited_ms:.0f} ms; retry after 1 s "
                "(HINDSIGHT_MAX_IN_FLIGHT, HINDSIGHT_QUEUE_WAIT_MS)",
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
