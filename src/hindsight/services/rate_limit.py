"""Request rate limits per API key and per client address: token buckets in this process.

Each worker process keeps its own buckets, so with N workers (or replicas) a client may get
up to N times the configured rate; the limits are there to stop floods (a leaked key in a
loop, a scan of guessed keys), not to meter fair use, and a shared store on every request
would cost more than the floods it stops.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from hindsight.errors import RateLimited

# Buckets kept per limiter; the least recently used go first. A bucket that was dropped
# comes back full, which only ever errs towards letting a client through.
MAX_BUCKETS = 100_000


class TokenBuckets:
    """`rate` requests per second per caller, with bursts up to one second's worth."""

    def __init__(
        self, rate: float, *, what: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.capacity = max(rate, 1.0)
        self.what = what
        self._clock = clock
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()

    def take(self, caller: Hashable) -> None:
        """Spend one request of `caller`'s budget, or raise RateLimited (429)."""
        if self.rate <= 0:
            return
        now = self._clock()
        tokens, then = self._buckets.pop(caller, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[caller] = (tokens, now)
            wait = math.ceil((1.0 - tokens) / self.rate)
            raise RateLimited(
                f"too many requests {self.what} (limit {self.rate:g} per second); "
                f"retry after {wait} s",
                retry_after=wait,
            )
        self._buckets[caller] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_BUCKETS:
            self._buckets.popitem(last=False)
