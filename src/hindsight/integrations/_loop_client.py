"""An `AsyncHindsight` for whichever event loop is running.

An httpx.AsyncClient belongs to the loop it first ran on; adapters are often built once and
then used from several `asyncio.run` calls (scripts, tests, notebooks), so each loop gets
its own client.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hindsight.client import AsyncHindsight


class LoopClient:
    def __init__(self, url: str, api_key: str | None, **options: Any) -> None:
        self._url = url
        self._api_key = api_key
        self._options = options
        self._client: AsyncHindsight | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> AsyncHindsight:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = AsyncHindsight(self._url, self._api_key, **self._options)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None
