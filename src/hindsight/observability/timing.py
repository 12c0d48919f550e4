"""Where a request's time went, returned as a W3C `Server-Timing` header.

The request middleware opens a record per request; code on the request path adds spans to
it (`add("db", seconds)`), and the header lists them with the app's own time up to the
response (`db;dur=2.41, app;dur=3.87`): browser tools show it, and a client can tell its
own and the network's share of a slow call from the service's without access to metrics.
Spans run in tasks the request starts share the record (a context variable holds it).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

_spans: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar(
    "server_timing", default=None
)

HEADER = b"server-timing"


def start() -> contextvars.Token[dict[str, float] | None]:
    return _spans.set({})


def reset(token: contextvars.Token[dict[str, float] | None]) -> None:
    _spans.reset(token)


def add(name: str, seconds: float) -> None:
    """Add to the span `name` of the current request (none outside a request)."""
    spans = _spans.get()
    if spans is not None:
        spans[name] = spans.get(name, 0.0) + seconds


@contextmanager
def span(name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        add(name, time.perf_counter() - started)


def header(app_seconds: float) -> bytes:
    spans = _spans.get() or {}
    parts = [f"{name};dur={seconds * 1000:.2f}" for name, seconds in spans.items()]
    parts.append(f"app;dur={app_seconds * 1000:.2f}")
    return ", ".join(parts).encode("ascii")
