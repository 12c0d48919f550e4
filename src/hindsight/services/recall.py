"""Recall: rank long-term memories for a query and explain every score."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pgvector import HalfVector
from psycopg_pool import AsyncConnectionPool

from hindsight import limits
from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.ids import uuid7
from hindsight.retrieval.keywords import query_terms
from hindsight.retrieval.ranking import Fusion, Ranked, RankingConfig, merge_hops, rank
from hindsight.services.access_recorder import AccessRecorder
from hindsight.stores import memories as store
from hindsight.stores import recall_log
from hindsight.stores.filters import MemoryFilter
from hindsight.stores.recall_log import RecallEntry


@dataclass(frozen=True)
class RecallResult:
    recall_id: uuid.UUID
    results: list[Ranked]


def _logged(item: Ranked) -> dict[str, Any]:
    row = item.row
    return {
        "id": str(row["id"]),
        "key": row["key"],
        "value": row["value"],
        "score": item.score,
        "components": item.components,
    }


class RecallService:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        embedder: Embedder,
        recorder: AccessRecorder,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._embedder = embedder
        self._recorder = recorder

    def ranking(
        self, fusion: Fusion | None = None, keyword_weight: float | None = None
    ) -> RankingConfig:
        return RankingConfig(
            keyword_weight=(
                self._settings.keyword_weight if keyword_weight is None else keyword_weight
            ),
            access_alpha=self._settings.access_alpha,
            fusion=fusion or "linear",
        )

    async def search(
        self,
        namespace: str,
        query: str,
        *,
        k: int,
        f: MemoryFilter,
        fusion: Fusion | None = None,
        keyword_weight: float | None = None,
        min_relevance: float = 0.0,
        hops: int = 1,
    ) -> list[Ranked]:
        """Rank memories for `query` without recording anything (no access counts, no log):
        for the service's own lookups. With `hops=2`, a second search follows the best
        hit ("where does my sister live?" finds the sister, then where she lives)."""
        first = await self._search_once(
            namespace,
            query,
            k=k,
            f=f,
            fusion=fusion,
            keyword_weight=keyword_weight,
            min_relevance=min_relevance,
        )
        if hops < 2 or not first:
            return first
        anchor = first[0]
        second = await self._search_once(
            namespace,
            f"{query} {anchor.row['value']}",
            k=k,
            f=f,
            fusion=fusion,
            keyword_weight=keyword_weight,
            min_relevance=min_relevance,
        )
        return merge_hops(first, second, anchor, k)

    async def _search_once(
        self,
        namespace: str,
        query: str,
        *,
        k: int,
        f: MemoryFilter,
        fusion: Fusion | None,
        keyword_weight: float | None,
        min_relevance: float,
    ) -> list[Ranked]:
        (vector,) = await self._embedder.embed([query[: limits.QUERY_MAX_CHARS * 3]])
        terms, counts = query_terms(query)
        async with self._pool.connection() as conn:
            rows = await store.candidates(
                conn,
                namespace,
                query_vector=HalfVector(vector),
                terms=terms,
                term_counts=counts,
                f=f,
                per_arm=max(k, self._settings.recall_candidates),
                exact_max=self._settings.exact_search_max_rows,
            )
        ranked = rank(rows, self.ranking(fusion, keyword_weight), len(rows))
        return [r for r in ranked if r.components["relevance"] > min_relevance][:k]

    async def recall(
        self,
        namespace: str,
        query: str,
        *,
        k: int,
        f: MemoryFilter,
        actor: str,
        fusion: Fusion | None = None,
        keyword_weight: float | None = None,
        min_relevance: float = 0.0,
        hops: int = 1,
    ) -> RecallResult:
        """Rank memories for `query`, count the accesses and log the recall."""
        started = time.perf_counter()
        ranked = await self.search(
            namespace,
            query,
            k=k,
            f=f,
            fusion=fusion,
            keyword_weight=keyword_weight,
            min_relevance=min_relevance,
            hops=hops,
        )
        recall_id = uuid7()
        self._recorder.record(
            RecallEntry(
                id=recall_id,
                namespace=namespace,
                query=query,
                k=k,
                filters=f.as_json(),
                result_ids=[r.row["id"] for r in ranked],
                scores=[r.score for r in ranked],
                results=[_logged(r) for r in ranked],
                actor=actor,
                duration_ms=(time.perf_counter() - started) * 1000,
                created_at=datetime.now(UTC),
            )
        )
        return RecallResult(recall_id=recall_id, results=ranked)

    async def explain(self, namespace: str, recall_id: uuid.UUID) -> dict[str, Any] | None:
        """A logged recall, flushing pending log entries first so a fresh id is found."""
        await self._recorder.flush()
        async with self._pool.connection() as conn:
            return await recall_log.get(conn, namespace, recall_id)
