"""Recall: rank long-term memories for a query and explain every score."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pgvector import HalfVector
from psycopg_pool import AsyncConnectionPool

from hindsight import limits
from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.errors import InvalidInput, ProviderError, Unavailable
from hindsight.ids import uuid7
from hindsight.observability import metrics, timing
from hindsight.rerank.base import Reranker
from hindsight.rerank.combine import reranked
from hindsight.retrieval.factors import LifecycleFactors
from hindsight.retrieval.keywords import weighted_query_terms
from hindsight.retrieval.ranking import (
    Fusion,
    Ranked,
    RankingConfig,
    merge_arms,
    merge_hops,
    rank,
)
from hindsight.retrieval.searched import Searched, combined, searched
from hindsight.services.access_recorder import AccessRecorder
from hindsight.services.policy import PolicyService
from hindsight.services.redaction import scrubber
from hindsight.stores import recall_log, search as store
from hindsight.stores.filters import MemoryFilter
from hindsight.stores.reads import ReadRouter
from hindsight.stores.recall_log import RecallEntry
from hindsight.stores.specificity import Kept, Specificities
from hindsight.text import anchored, timeexpr
from hindsight.text.conversation import Turn
from hindsight.text.timeexpr import TimeWindow
from hindsight.wire.recall import RecallIn

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecallRequest:
    """What to recall and how to rank it; unset options take the configured defaults."""

    query: str  # may be empty when `context` is given
    k: int = 10
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    fusion: Fusion | None = None
    keyword_weight: float | None = None
    min_relevance: float = 0.0
    hops: int = 1
    # when the question is asked, for its time expressions (None: now)
    reference_time: datetime | None = None
    resolve_time: bool | None = None  # None: HINDSIGHT_RESOLVE_TIME
    # the conversation's recent turns, oldest first (the query, if any, is the latest)
    context: tuple[Turn, ...] = ()
    # search a conversation as weighted turns (None: HINDSIGHT_RECALL_CONVERSATION)
    conversation: bool | None = None

    @property
    def asked(self) -> str:
        """The query as the recall log keeps it: the query, else the context's turns."""
        return self.query or "\n".join(f"{t.role}: {t.content}" for t in self.context)


# a time window's two ends in a recall body; each must be earlier than the other end
WINDOWS = (
    ("created_after", "created_before"),
    ("observed_after", "observed_before"),
    ("occurred_after", "occurred_before"),
)


def recall_request(body: RecallIn, *, default_hops: int) -> RecallRequest:
    """The API's recall body as the service's request; a time window must not be empty,
    and there must be something to search for."""
    if not body.query and not body.context:
        raise InvalidInput("query: give a query, a context (recent turns) or both")
    ends = {end: getattr(body, end) for window in WINDOWS for end in window}
    for low, high in WINDOWS:
        if ends[low] is not None and ends[high] is not None and ends[low] >= ends[high]:
            raise InvalidInput(f"{low}: must be earlier than {high}")
    return RecallRequest(
        query=body.query or "",
        k=body.k,
        filter=MemoryFilter(
            memory_types=tuple(body.memory_types or ()),
            tags=tuple(body.tags or ()),
            tags_any=tuple(body.tags_any or ()),
            min_confidence=body.min_confidence,
            min_importance=body.min_importance,
            **ends,
        ),
        fusion=body.fusion,
        keyword_weight=body.keyword_weight,
        min_relevance=body.min_relevance,
        hops=body.hops or default_hops,
        reference_time=body.reference_time,
        resolve_time=body.resolve_time,
        context=tuple(Turn(t.role, t.content) for t in body.context or ()),
        conversation=body.conversation,
    )


@dataclass(frozen=True)
class Ranking:
    results: list[Ranked]
    # why the vector arm was skipped (the query could not be embedded), else None
    vector_skipped: str | None = None
    # the time the query named, which ranked the results, and what the arms searched for
    time_window: TimeWindow | None = None
    searched_query: str | None = None
    # the conversation the arms searched, turn by turn (None: a plain query)
    conversation: dict[str, Any] | None = None


@dataclass(frozen=True)
class RecallResult:
    recall_id: uuid.UUID
    results: list[Ranked]
    vector_skipped: str | None = None
    # why the results were not reranked (the reranker failed), else None
    rerank_skipped: str | None = None
    time_window: TimeWindow | None = None
    searched_query: str | None = None
    conversation: dict[str, Any] | None = None


def _logged(item: Ranked) -> dict[str, Any]:
    row = item.row
    return {
        "id": str(row["id"]),
        "key": row["key"],
        "value": row["value"],
        "score": item.score,
        "components": item.components,
    }


def _logged_filters(request: RecallRequest, ranking: Ranking) -> dict[str, Any]:
    """The filters as sent, and the time the query was read to name (why results outside
    it scored less)."""
    out = request.filter.as_json()
    if request.reference_time is not None:
        out["reference_time"] = request.reference_time.isoformat()
    window = ranking.time_window
    if window is not None:
        out["time_window"] = {
            "start": window.start.isoformat(),
            "end": window.end.isoformat(),
            "expression": window.expression,
        }
        if window.anchor is not None:
            out["time_window"]["anchor"] = window.anchor
        if window.vague:
            out["time_window"]["vague"] = True
    if ranking.conversation is not None:
        out["conversation"] = ranking.conversation
    return out


# Least relevance of the memory that anchors "the week before the wedding" (built-in
# embedder: an unrelated memory scores about 0.03, one that names the wedding 0.4 and more).
ANCHOR_MIN_RELEVANCE = 0.2


class RecallService:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        search_pool: AsyncConnectionPool[Connection],
        embedder: Embedder,
        recorder: AccessRecorder,
        policies: PolicyService,
        reads: ReadRouter | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self._settings = settings
        self._reranker = reranker
        self._pool = pool
        self._reads = reads or ReadRouter(pool, search_pool)
        self._embedder = embedder
        self._recorder = recorder
        self._policies = policies

    def ranking(self, request: RecallRequest) -> RankingConfig:
        weight = request.keyword_weight
        return RankingConfig(
            keyword_weight=self._settings.resolved_keyword_weight if weight is None else weight,
            access_alpha=self._settings.access_alpha,
            access_boost_max=self._settings.access_boost_max,
            fusion=request.fusion or "linear",
            specificity_weight=self._settings.specificity_weight,
        )

    async def rank(self, namespace: str, request: RecallRequest) -> Ranking:
        """Recall without recording anything (no access counts, no log), for the service's
        own lookups and for `recall`: the ranking, and whether it had to do without the
        vector arm. With `hops=2`, a
        second search follows the best hit ("where does my sister live?" finds the
        sister, then where she lives). A time the query names ("last May") ranks the
        results (`time_window`). A conversation (`context`, or a query that is a
        transcript) is searched as weighted turns (`retrieval.searched`), its time read
        from its latest user turn."""
        search = self.searched(request)
        timed = dataclasses.replace(request, query=search.time_text)
        window = await self.time_window(namespace, timed) if timed.query else None
        if window is not None and self._settings.time_strip_query and not search.conversation:
            search = Searched.plain(window.without(search.text))
        first = await self._rank_once(namespace, search, request, window)
        explained = search.explained()
        if request.hops < 2 or not first.results:
            return dataclasses.replace(
                first, time_window=window, searched_query=search.text, conversation=explained
            )
        anchor = first.results[0]
        second = await self._rank_once(namespace, search.plus(anchor.row["value"]), request, window)
        return Ranking(
            merge_hops(first.results, second.results, anchor, request.k),
            first.vector_skipped or second.vector_skipped,
            window,
            search.text,
            explained,
        )

    def searched(self, request: RecallRequest) -> Searched:
        """What the arms search for: the query, or the conversation it and the context
        make (`conversation`, default HINDSIGHT_RECALL_CONVERSATION)."""
        wanted = request.conversation
        on = self._settings.recall_conversation if wanted is None else wanted
        return searched(request.query, request.context, on)

    async def time_window(self, namespace: str, request: RecallRequest) -> TimeWindow | None:
        """The time the query names: a date or a span ("last May"), else one anchored on an
        event ("two weeks before the wedding"), whose time is that of the best memory
        for the event's words (occurred_at, else created_at)."""
        wanted = request.resolve_time
        if not (self._settings.resolve_time if wanted is None else wanted):
            return None
        window = timeexpr.resolve(request.query, request.reference_time)
        if window is not None:
            return window
        found = anchored.find(request.query)
        if found is None:
            return None
        # an anchor must be about the event: not merely the least unrelated memory
        lookup = dataclasses.replace(
            request, query=found.event, k=1, min_relevance=ANCHOR_MIN_RELEVANCE
        )
        best = (await self._rank_once(namespace, Searched.plain(found.event), lookup, None)).results
        if not best:
            return None
        row = best[0].row
        moment = row["occurred_at"] or row["created_at"]
        window = found.window(moment, request.reference_time or datetime.now(UTC))
        if window is None:
            return None
        anchor = {"id": str(row["id"]), "key": row["key"], "time": moment.isoformat()}
        return dataclasses.replace(window, anchor=anchor)

    async def _query_vector(self, search: Searched) -> tuple[HalfVector | None, str | None]:
        """The query's embedding (a conversation's: the weighted mean of its turns', in one
        request); or, when the endpoint is down or answers nonsense, None and why. Recall
        then ranks by keywords alone: a degraded answer beats none, and the response says
        it was degraded."""
        texts = [text[: limits.QUERY_MAX_CHARS * 3] for text, _ in search.parts]
        try:
            with timing.span("embed"):
                vectors = await self._embedder.embed(texts)
        except (Unavailable, ProviderError) as exc:
            log.warning("recall without the vector arm: %s", exc)
            metrics.RECALL_VECTOR_SKIPPED.inc()
            return None, f"the query could not be embedded: {exc}"
        if len(vectors) == 1:
            return HalfVector(vectors[0]), None
        return HalfVector(combined(vectors, [w for _, w in search.parts])), None

    async def _rank_once(
        self, namespace: str, query: Searched, request: RecallRequest, window: TimeWindow | None
    ) -> Ranking:
        vector, skipped = await self._query_vector(query)
        terms, counts = weighted_query_terms(query.parts)
        search = store.Search(
            namespace=namespace,
            query_vector=vector,
            terms=terms,
            term_counts=counts,
            filter=request.filter,
            # twice k: an arm's 11th-20th can win once confidence and access count
            per_arm=max(2 * request.k, self._settings.recall_candidates),
            exact_max=self._settings.exact_search_max_rows,
            postings_budget=self._settings.keyword_postings_budget,
            specificity=self._settings.specificity_weight > 0,
            keyword_of_memory=query.conversation,
        )
        searches = [search]
        narrowed = request.filter.within(window.start, window.end) if window else None
        if narrowed is not None and self._settings.time_window_candidates:
            # the window's own best candidates: the time factor only reorders candidates,
            # and a question about a month can be all small words ("what did I do?")
            per_arm = self._settings.time_window_candidates
            searches.append(dataclasses.replace(search, filter=narrowed, per_arm=per_arm))
        arms = ["keyword"] if vector is None else ["vector", "keyword"]
        with timing.span("db"):  # the arms run at once: the slower one's time
            found, factors = await asyncio.gather(
                asyncio.gather(*(self._arm(s, arm) for arm in arms for s in searches)),
                self.factors(namespace, window),
            )
        self._keep_specificities(namespace, found)
        n = len(searches)
        by_arm = {
            arm: [row for rows in found[i * n : (i + 1) * n] for row in rows]
            for i, arm in enumerate(arms)
        }
        by_vector, by_keyword = by_arm.get("vector", []), by_arm["keyword"]
        if vector is None:
            for row in by_keyword:
                row["similarity"] = 0.0
            # relevance is then the keyword score alone, not a fraction of it
            ranking = dataclasses.replace(self.ranking(request), keyword_weight=1.0)
        else:
            ranking = self.ranking(request)
        rows = merge_arms(by_vector, by_keyword)
        explain: dict[str, Any] = {"keyword_of": "memory" if query.conversation else "query"}
        if query.conversation:
            explain["conversation_turns"] = len(query.turns)
        ranked = rank(rows, ranking, request.k, request.min_relevance, factors, explain)
        return Ranking(ranked, skipped)

    def _keep_specificities(self, namespace: str, found: list[list[dict[str, Any]]]) -> None:
        """The specificities and keyword masses the statements computed (not read back),
        for the recorder to store: the next recall of those memories reads them instead
        (stores.search)."""
        fresh: Specificities = {}
        for rows in found:
            for row in rows:
                corpus_n = row.pop("corpus_n")
                terms = row.pop("terms")
                if row.pop("terms_new") and terms is not None and terms[0] is not None:
                    fresh[(namespace, row["id"])] = Kept(
                        terms[0], terms[1], corpus_n, row["updated_at"]
                    )
        if fresh:
            self._recorder.keep_specificities(fresh)

    async def factors(self, namespace: str, window: TimeWindow | None = None) -> LifecycleFactors:
        """The namespace policy's ranking terms (cached per process, see PolicyService), with
        the time window the query named, if any."""
        policy = await self._policies.get(namespace)
        ranking, trust = policy.ranking, policy.trust
        assert ranking is not None and ranking.tier_weights is not None and trust is not None
        weights = ranking.tier_weights.model_dump()
        return LifecycleFactors(
            now=datetime.now(UTC),
            tier_weights=weights,
            recency_weight=ranking.recency_weight or 0.0,
            recency_tau_days=ranking.recency_tau_days or 30.0,
            importance_weight=ranking.importance_weight or 0.0,
            trust_weight=ranking.trust_weight or 0.0,
            trust_levels=dict(trust.sources or {}),
            trust_default=trust.of(None),
            time_window=(window.start, window.end) if window is not None else None,
            # a vague window ("recently") only nudges
            time_weight=(ranking.time_weight or 0.0)
            * (self._settings.vague_time_strength if window and window.vague else 1.0),
        )

    async def _arm(self, search: store.Search, arm: str) -> list[dict[str, Any]]:
        async def read(conn: Connection) -> list[dict[str, Any]]:
            return await store.arm_candidates(conn, search, arm)

        with metrics.timed(metrics.RECALL_ARM_SECONDS, arm):
            rows = await self._reads.read(search.namespace, read, search=True)
        metrics.RECALL_CANDIDATES.labels(arm).observe(len(rows))
        return rows

    async def recall(self, namespace: str, request: RecallRequest, *, actor: str) -> RecallResult:
        """Rank memories for the request, count the accesses and log the recall."""
        started = time.perf_counter()
        # the query is logged: no secret in it is kept (or, in reject mode, the recall is
        # refused)
        scrub = await scrubber(self._policies, namespace)
        query = scrub("query", request.query) if request.query else request.query
        context = tuple(Turn(t.role, scrub("context", t.content)) for t in request.context)
        if context != request.context:
            request = dataclasses.replace(request, context=context)
        # so are the tag filters (stored tags are redacted alike, so a filter still matches)
        where = request.filter
        tags = tuple(scrub.strings("tags", where.tags))
        tags_any = tuple(scrub.strings("tags_any", where.tags_any))
        if (query, tags, tags_any) != (request.query, where.tags, where.tags_any):
            where = dataclasses.replace(where, tags=tags, tags_any=tags_any)
            request = dataclasses.replace(request, query=query, filter=where)
        if self._reranker is None:
            ranking = await self.rank(namespace, request)
            ranked, rerank_skipped = ranking.results, None
        else:
            # the reranker scores the best max(k, HINDSIGHT_RERANK_CANDIDATES); k are kept
            depth = max(request.k, self._settings.rerank_candidates)
            ranking = await self.rank(namespace, dataclasses.replace(request, k=depth))
            with timing.span("rerank"):
                # a conversation is reranked against the turns the arms searched
                plain = ranking.conversation is None
                ranked, rerank_skipped = await reranked(
                    self._reranker,
                    request.query if plain else ranking.searched_query or request.asked,
                    ranking.results,
                    request.k,
                    self._settings.rerank_weight,
                )
        metrics.RECALL_SECONDS.observe(time.perf_counter() - started)
        metrics.RECALL_RESULTS.observe(len(ranked))
        recall_id = uuid7()
        self._recorder.record(
            RecallEntry(
                id=recall_id,
                namespace=namespace,
                query=request.asked,
                k=request.k,
                filters=_logged_filters(request, ranking),
                result_ids=[r.row["id"] for r in ranked],
                scores=[r.score for r in ranked],
                results=[_logged(r) for r in ranked],
                actor=actor,
                duration_ms=(time.perf_counter() - started) * 1000,
                created_at=datetime.now(UTC),
            ),
            cold={r.row["id"] for r in ranked if r.row["status"] == "cold"},
        )
        return RecallResult(
            recall_id=recall_id,
            results=ranked,
            vector_skipped=ranking.vector_skipped,
            rerank_skipped=rerank_skipped,
            time_window=ranking.time_window,
            searched_query=ranking.searched_query,
            conversation=ranking.conversation,
        )

    async def explain(self, namespace: str, recall_id: uuid.UUID) -> dict[str, Any] | None:
        """A logged recall, flushing pending log entries first so a fresh id is found."""
        await self._recorder.flush()
        async with self._pool.connection() as conn:
            return await recall_log.get(conn, namespace, recall_id)
