"""What an LLM provider offers: one call that returns a validated object."""

from __future__ import annotations

from typing import Protocol, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


class LLM(Protocol):
    @property
    def name(self) -> str: ...

    async def complete_json(self, system: str, user: str, schema: type[M]) -> M:
        """Ask for a JSON object matching `schema`; raise ProviderError if none comes back,
        Unavailable if the endpoint is down or overloaded after retries."""
        ...

    async def aclose(self) -> None: ...
