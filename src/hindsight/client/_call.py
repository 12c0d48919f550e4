"""A `Call` is one REST call as data: method, path, body, how to read the answer, and
whether it is safe to send twice. `_calls` builds them; `_sending` reads their answers
and decides whether to try again; the clients send them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    parse: Callable[[Any], Any]
    json: Any = None
    params: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # Safe to send again when the outcome is unknown (a timeout after sending): reads,
    # recall, and writes that carry an idempotency key.
    idempotent: bool = False
    # the answer is JSON lines, not one JSON document: `parse` gets the text
    lines: bool = False
