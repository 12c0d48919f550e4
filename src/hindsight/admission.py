"""The slots that bound how much work a worker does at once (HINDSIGHT_MAX_IN_FLIGHT).

A request holds a slot while it works on this machine's cores: the event loop, the database.
While it waits on a remote embedding, LLM or rerank endpoint it uses neither, so it lends its
slot out (`away()`) and takes one back, ahead of new requests, when the answer comes. So the
bound can be what two cores sustain without an endpoint's latency, slow or not, capping what
a worker serves.

Who may wait how long for a slot is the load shedder's business (`api/shedding.py`); this
module only keeps the slots, the queue and the current request's hold.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar

from hindsight.observability import metrics


class Slots:
    """A counting semaphore whose waiters give up after a while; a release hands its slot
    straight to a waiter, so a late arrival cannot take it first. Requests coming back
    from a remote endpoint go before every new one; among new ones, arrival order while
    the queue is a burst, newest first while it is congested (see api/shedding.py)."""

    def __init__(self, slots: int) -> None:
        self.free = slots
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.returning: deque[asyncio.Future[None]] = deque()
        self._congested = False

    def congested(self) -> bool:
        """From the moment a request gave up waiting until the queue is next empty: a burst
        drains within the wait, and the queue's emptying is what ends an overload."""
        if not self.waiting:
            self._congested = False
        return self._congested

    async def take(self, wait: float) -> bool:
        """A slot for a new request, waiting at most `wait` seconds; False if none came."""
        if self.free > 0 and not self.waiting and not self.returning:
            self.free -= 1
            return True
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(ticket)
        metrics.QUEUED_REQUESTS.inc()
        try:
            await asyncio.wait_for(asyncio.shield(ticket), wait)
            return True
        except TimeoutError:
            if ticket.done():  # handed a slot as the wait ran out: it is ours
                return True
            ticket.cancel()
            self.waiting.remove(ticket)
            self._congested = True
            return False
        except BaseException:
            self._abandon(ticket, self.waiting)
            raise
        finally:
            metrics.QUEUED_REQUESTS.dec()

    async def take_back(self) -> None:
        """A slot for a request whose work is half done: it waits as long as it must."""
        if self.free > 0 and not self.returning:
            self.free -= 1
            return
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.returning.append(ticket)
        try:
            await asyncio.shield(ticket)
        except BaseException:
            self._abandon(ticket, self.returning)
            raise

    def _abandon(self, ticket: asyncio.Future[None], queue: deque[asyncio.Future[None]]) -> None:
        """The waiter was cancelled (its client went away)."""
        if ticket.done() and not ticket.cancelled():
            self.give()  # it had been handed a slot: pass it on
        else:
            ticket.cancel()
            if ticket in queue:
                queue.remove(ticket)

    def give(self) -> None:
        while self.returning:
            ticket = self.returning.popleft()
            if not ticket.done():
                ticket.set_result(None)
                return
        newest_first = self.congested()
        while self.waiting:
            ticket = self.waiting.pop() if newest_first else self.waiting.popleft()
            if not ticket.done():
                ticket.set_result(None)
                return
        self.free += 1


class Hold:
    """One request's claim on a slot, lent out while the request waits on an endpoint."""

    def __init__(self, slots: Slots) -> None:
        self.slots = slots
        self.held = True
        self.open = True  # False once the request has answered
        self.away = 0  # its awaits on endpoints now (a request may gather several)
        self.returning = asyncio.Lock()

    def release(self) -> None:
        self.open = False
        if self.held:
            self.held = False
            self.slots.give()


_hold: ContextVar[Hold | None] = ContextVar("hindsight_admission_hold", default=None)


def hold(slots: Slots) -> Hold:
    """The current request now holds a slot of `slots` (taken by the caller)."""
    h = Hold(slots)
    _hold.set(h)
    return h


@asynccontextmanager
async def away() -> AsyncIterator[None]:
    """Around an await on a remote endpoint: the request's slot serves others meanwhile."""
    h = _hold.get()
    if h is None or not h.open:
        yield
        return
    h.away += 1
    if h.held:
        h.held = False
        h.slots.give()
    try:
        yield
    finally:
        h.away -= 1
        if h.away == 0:
            async with h.returning:
                if h.open and not h.held and h.away == 0:
                    await h.slots.take_back()
                    h.held = True
                    if not h.open:  # answered while we queued (a task outliving it)
                        h.release()
