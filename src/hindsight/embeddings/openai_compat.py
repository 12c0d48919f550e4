"""Embeddings from any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, TEI, LiteLLM ...).

The `openai` client retries what is worth retrying (connection errors, timeouts, 408, 409,
429 and 5xx) with backoff; everything else surfaces at once as a `ProviderError` whose
message names the endpoint and what it said.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from hindsight import admission, openai_endpoint
from hindsight.embeddings.base import Vector
from hindsight.errors import ProviderError
from hindsight.observability import metrics


class OpenAICompatibleEmbedder:
    def __init__(
        self,
        *,
        base_url: str | None,
        model: str,
        api_key: str | None,
        dimensions: int | None,
        batch_size: int = 256,
        timeout: float = 30.0,
        max_retries: int = 3,
        concurrency: int = 4,
    ) -> None:
        self._client = openai_endpoint.client(
            base_url, api_key, timeout=timeout, max_retries=max_retries
        )
        self._model = model
        # A configured width is sent with each request (models such as text-embedding-3
        # shorten their output on request); without one, `start` asks the model.
        self._request_dimensions = dimensions is not None
        self._dimensions = dimensions or 0
        self._batch_size = batch_size
        self._where = base_url or "api.openai.com"
        # at most this many requests in flight from this process, however many callers
        self._slots = asyncio.Semaphore(concurrency)

    @staticmethod
    def name_for(model: str) -> str:
        return f"openai:{model}"

    @property
    def name(self) -> str:
        return self.name_for(self._model)

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: list[str]) -> list[Vector]:
        batches = [
            texts[start : start + self._batch_size]
            for start in range(0, len(texts), self._batch_size)
        ]
        results = await asyncio.gather(*(self._embed_batch(b) for b in batches))
        return [v for batch in results for v in batch]

    async def _create(self, texts: list[str]) -> Any:
        if self._request_dimensions:
            return await self._client.embeddings.create(
                model=self._model,
                input=texts,
                encoding_format="float",
                dimensions=self._dimensions,
            )
        return await self._client.embeddings.create(
            model=self._model, input=texts, encoding_format="float"
        )

    async def _embed_batch(self, texts: list[str]) -> list[Vector]:
        try:
            async with admission.away(), self._slots:
                with metrics.timed(metrics.PROVIDER_SECONDS, "embedding", self._model):
                    response = await self._create(texts)
        except openai_endpoint.ERRORS as exc:
            metrics.PROVIDER_ERRORS.labels("embedding", self._model).inc()
            raise openai_endpoint.translate(exc, what="embedding", where=self._where) from exc
        metrics.count_tokens("embedding", self._model, getattr(response, "usage", None))
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(texts):
            raise ProviderError(
                f"embedding endpoint {self._where} returned {len(data)} vectors "
                f"for {len(texts)} inputs"
            )
        out: list[Vector] = []
        for item in data:
            vector = np.asarray(item.embedding, dtype=np.float32)
            if vector.shape != (self._dimensions,):
                raise ProviderError(
                    f"embedding model {self._model} returned {vector.shape[0]} dimensions, "
                    f"expected {self._dimensions}; set HINDSIGHT_EMBEDDING_DIMENSIONS to the "
                    "model's width"
                )
            norm = float(np.linalg.norm(vector))
            out.append(vector / norm if norm > 0 else vector)
        return out

    async def start(self) -> None:
        """Learn the model's width from one probe, unless the operator configured it."""
        if self._request_dimensions:
            return
        try:
            response = await self._create(["dimension probe"])
        except openai_endpoint.ERRORS as exc:
            problem = openai_endpoint.translate(exc, what="embedding", where=self._where)
            raise ProviderError(
                f"cannot learn the width of embedding model {self._model}: {problem.message}; "
                "check HINDSIGHT_EMBEDDING_BASE_URL/MODEL/API_KEY or set "
                "HINDSIGHT_EMBEDDING_DIMENSIONS"
            ) from exc
        self._dimensions = len(response.data[0].embedding)

    async def aclose(self) -> None:
        await self._client.close()
