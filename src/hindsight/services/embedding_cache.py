"""Embeddings kept by content hash and model, so the same text is never embedded twice.

A re-observation of a known claim, a repeated query, or a re-run consolidation costs a
lookup instead of a call to the model. An in-process LRU answers hot texts without a round
trip; the `embedding_cache` table survives restarts and is shared by replicas. Not used for
the built-in embedder, which computes a vector faster than a lookup returns one.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder, Vector
from hindsight.stores import embedding_cache as store


class CachedEmbedder:
    def __init__(
        self, inner: Embedder, pool: AsyncConnectionPool[Connection], *, lru_size: int = 20_000
    ) -> None:
        self._inner = inner
        self._pool = pool
        self._lru: OrderedDict[bytes, Vector] = OrderedDict()
        self._lru_size = lru_size
        self._model = f"{inner.name}/{inner.dimensions}"

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    @property
    def inner(self) -> Embedder:
        return self._inner

    def _remember(self, digest: bytes, vector: Vector) -> None:
        self._lru[digest] = vector
        self._lru.move_to_end(digest)
        if len(self._lru) > self._lru_size:
            self._lru.popitem(last=False)

    async def embed(self, texts: list[str]) -> list[Vector]:
        digests = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        found: dict[bytes, Vector] = {}
        for d in digests:
            if d in self._lru:
                found[d] = self._lru[d]
                self._lru.move_to_end(d)
        missing = list({d for d in digests if d not in found})
        if missing:
            async with self._pool.connection() as conn:
                stored = await store.lookup(conn, self._model, missing)
            for digest, vector in stored.items():
                found[digest] = vector
                self._remember(digest, vector)
        todo: dict[bytes, str] = {}
        for d, t in zip(digests, texts, strict=True):
            if d not in found:
                todo.setdefault(d, t)
        if todo:
            vectors = await self._inner.embed(list(todo.values()))
            fresh = dict(zip(todo.keys(), vectors, strict=True))
            async with self._pool.connection() as conn:
                await store.keep(conn, self._model, fresh)
            for d, v in fresh.items():
                found[d] = v
                self._remember(d, v)
        return [found[d] for d in digests]

    async def aclose(self) -> None:
        await self._inner.aclose()
