"""Embeddings from a local sentence-transformers model (pip extra `hindsight[local]`).

HINDSIGHT_EMBEDDING_MODEL names the model: a directory on disk, or a Hugging Face name
that is already in the local cache (nothing is downloaded at run time when
HF_HUB_OFFLINE=1). Encoding runs in a worker thread, so requests keep being served.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from hindsight import local_models
from hindsight.embeddings.base import Vector


class SentenceTransformerEmbedder:
    def __init__(self, model: str, *, batch_size: int = 64) -> None:
        self._model: Any = local_models.load(
            "SentenceTransformer",
            model,
            setting="HINDSIGHT_EMBEDDING_PROVIDER=sentence-transformers",
            what="sentence-transformers model",
        )
        self._name = model
        self._batch_size = batch_size
        # renamed in sentence-transformers 5; older releases only have the long name
        width = getattr(self._model, "get_embedding_dimension", None)
        if width is None:
            width = self._model.get_sentence_embedding_dimension
        dims = width()
        self._dimensions = int(dims) if dims else len(self._encode(["probe"])[0])
        self._lock = asyncio.Lock()

    @staticmethod
    def name_for(model: str) -> str:
        return f"sentence-transformers:{model}"

    @property
    def name(self) -> str:
        return self.name_for(self._name)

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _encode(self, texts: list[str]) -> list[Vector]:
        out = self._model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [np.asarray(v, dtype=np.float32) for v in out]

    async def embed(self, texts: list[str]) -> list[Vector]:
        if not texts:
            return []
        # one encode at a time: the model is already parallel inside, and is not re-entrant
        async with self._lock:
            return await asyncio.to_thread(self._encode, texts)

    async def aclose(self) -> None:
        return None
