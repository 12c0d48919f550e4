"""Observing: what a client states becomes memories. `Observer.observe` checks who may
vouch for a claim, redacts secrets, embeds the claims and caps their confidence by the
trust policy, then runs the batch (`observing.ObserveBatch`) in one write transaction.

The rules users asked for live here and in the SQL they call: re-observing a value raises
its confidence, a new value supersedes the old one (kept in history), and every batch is
all-or-nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pgvector import HalfVector

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.ids import uuid7
from hindsight.llm import LLM
from hindsight.observability import metrics
from hindsight.retrieval.keywords import document_vector
from hindsight.services import roles
from hindsight.services.access_recorder import AccessRecorder
from hindsight.services.contradictions import judge_for
from hindsight.services.observing import (
    Observation,
    ObserveBatch,
    Outcome,
    Recalled,
    normalise_tags,
)
from hindsight.services.policy import PolicyService
from hindsight.services.redaction import scrubber
from hindsight.services.roles import Role, vouching
from hindsight.services.transactions import Writer
from hindsight.services.trust import WRITER_CONFIDENCE_MAX
from hindsight.stores import memories as store
from hindsight.text import memory_text


@dataclass(frozen=True)
class Observer:
    settings: Settings
    embedder: Embedder
    writer: Writer
    # also the rules for the writes that skip `observe` (a COPY import, summaries)
    policies: PolicyService
    # what recall returned to whom lately: an observation echoing it is not evidence
    recorder: AccessRecorder | None = None
    # tells a contradiction from two compatible claims when configured (else the rules)
    llm: LLM | None = None

    def _recalled(self, namespace: str, actor: str, window: float) -> Recalled | None:
        recorder = self.recorder
        if recorder is None or window <= 0:
            return None
        since = datetime.now(UTC) - timedelta(seconds=window)

        async def recalled(conn: Connection, ids: set[uuid.UUID]) -> set[uuid.UUID]:
            return await recorder.recalled(conn, namespace, actor, ids, since)

        return recalled

    async def claims(
        self, items: Sequence[Observation], confidences: Sequence[float], *, capped: bool = False
    ) -> list[store.NewClaim]:
        """The items as rows to write: embedded and keyword-indexed, at these confidences.
        `capped`: a writer sent them, so a source label they carry is its own word."""
        texts = [memory_text(o.key, o.value) for o in items]
        vectors = await self.embedder.embed(texts)
        claims = []
        for obs, text, vector, confidence in zip(items, texts, vectors, confidences, strict=True):
            keywords, terms = document_vector(text)
            claims.append(
                store.NewClaim(
                    id=uuid7(),
                    key=obs.key,
                    value=obs.value,
                    memory_type=obs.memory_type,
                    embedding=HalfVector(vector),
                    keywords=keywords,
                    keyword_terms=terms,
                    confidence=confidence,
                    importance=obs.importance,
                    source=obs.source,
                    tags=normalise_tags(obs.tags),
                    metadata=dict(obs.metadata),
                    verified=obs.verified,
                    permanent=obs.permanent,
                    expires_at=obs.expires_at,
                    occurred_at=obs.occurred_at,
                    source_capped=capped and obs.source is not None,
                )
            )
        return claims

    async def observe(
        self,
        namespace: str,
        items: Sequence[Observation],
        *,
        actor: str,
        role: Role = Role.WRITER,
        then: Callable[[Connection, list[Outcome]], Awaitable[None]] | None = None,
        dedup: bool = True,
        single: bool = False,
    ) -> list[Outcome]:
        """Store or reinforce each item, in order, all in one transaction.

        A key that appears more than once in a batch is applied in order, as if the items
        had been sent one after another. A new key whose memory is near-identical to an
        existing one of the same type reinforces that one instead (HINDSIGHT_DEDUP_THRESHOLD).
        `then` runs in the same transaction, so what it writes commits with the memories or
        not at all. Only a curator may vouch for a claim (`roles`). The namespace's trust
        policy caps each claim's initial confidence and decides which claims wait for review
        (`trust`): those are stored as quarantined rows beside the live memory of their key,
        and an independent trusted re-observation of one releases it.
        """
        initial = self.settings.initial_confidence
        for i, o in enumerate(items):
            what = vouching(o.verified or None, o.permanent or None, o.confidence, initial)
            if what is not None:
                roles.require(role, Role.CURATOR, what if single else f"memories[{i}]: {what}")
        scrub = await scrubber(self.policies, namespace)
        # `single`: one memory sent alone (POST /memories), whose errors name its fields bare
        items, redactions = scrub.observations(items, single=single)
        trust = (await self.policies.get(namespace)).trust
        assert trust is not None
        batch = ObserveBatch(
            namespace=namespace,
            items=items,
            redactions=redactions,
            trust=trust,
            curator=role.at_least(Role.CURATOR),
            initial=initial,
            threshold=self.settings.dedup_threshold if dedup else 0.0,
            exact_max=self.settings.exact_search_max_rows,
            step=self.settings.reinforcement_step,
            actor=actor,
            then=then,
            ceiling=1.0 if role.at_least(Role.CURATOR) else WRITER_CONFIDENCE_MAX,
            recalled=self._recalled(namespace, actor, trust.echo_window_seconds or 0.0),
            contradiction_similarity=(trust.contradiction_similarity or 0.0) if dedup else 0.0,
            contradiction_judge=judge_for(self.llm),
        )
        batch.prepared = await self.claims(
            items, [batch.verdict(o, None).confidence for o in items], capped=not batch.curator
        )
        outcomes = await self.writer.write(namespace, batch.run)
        for done in outcomes:
            label = "deduplicated" if done.requested_key else done.outcome
            metrics.OBSERVE_OUTCOMES.labels(label).inc()
        return outcomes
