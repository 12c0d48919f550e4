"""Python SDK for Hindsight: `Hindsight` (sync) and `AsyncHindsight` (asyncio), over httpx.

Every REST call has a method; results are the typed models of `hindsight.wire.memories`.
Errors raise `APIError` (with the server's status, code and message) or `TransportError`.
"""

from hindsight.client._sending import APIError, TransportError
from hindsight.client.aio import AsyncHindsight
from hindsight.client.sync import Hindsight

__all__ = ["APIError", "AsyncHindsight", "Hindsight", "TransportError"]
