"""Wait for a condition with a deadline instead of sleeping and hoping."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    what: str,
    timeout: float = 20.0,
    *,
    accept: Callable[[T], object] = bool,
    interval: float = 0.02,
    sleep: Callable[[float], object] = time.sleep,
) -> T:
    """Call `condition` until what it returns is accepted (is true, unless `accept` says
    otherwise: a job whose status is final, say) and return that. Past `timeout` seconds,
    fail with `what` and the last value. An exception raised by `condition` (a failed
    assert) ends the wait at once. `sleep` waits between calls: a Playwright page's must,
    so that the page's event handlers run meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if accept(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f} s: {what} (last: {value!r})")
        sleep(interval)
