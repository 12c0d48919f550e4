"""Observing: what a client states becomes memories. `Observer.observe` checks who may
vouch for a claim, redacts secrets, embeds the claims and caps their confidence by the
trust policy, then runs the batch (`observing.ObserveBatch`) in one write transaction.

The rules users asked for live here and in the SQL they call: re-observing a value raises
its confidence, a new value supersedes the old one (kept in history), and every batch is
all-or-nothing.
"""

from __future__ import annotations

import dataclasses
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
from hindsight.services import importance, roles
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
from hindsight.wire.policy import LifecyclePolicy

Then = Callable[[Connection, list[Outcome]], Awaitable[None]]


@dataclass(frozen=True)
class _Gate:
    """The policy's judgment of the writes a client did not rate: those whose estimated
    importance is under `write_below_importance` are stored cold or dropped."""

    threshold: float
    action: str  # cold | drop

    @classmethod
    def of(cls, life: LifecyclePolicy) -> _Gate:
        return cls(life.write_below_importance or 0.0, life.write_below_importance_action or "cold")

    def catches(self, o: Observation) -> bool:
        return o.importance_estimated and o.importance < self.threshold

    def reason(self, o: Observation) -> str:
        by = {"llm": "rated by the LLM", "builtin_fallback": "built-in estimate, the LLM failed"}
        how = f" ({by[o.importance_by]})" if o.importance_by in by else ""
        return (
            f"estimated importance {o.importance:g}{how} is under the policy's "
            f"write_below_importance {self.threshold:g}"
        )

    def dropped(self, o: Observation) -> Outcome:
        return Outcome(
            id=None,
            key=o.key,
            outcome="dropped",
            confidence=0.0,
            observation_count=0,
            memory_type=o.memory_type,
            reason=self.reason(o) + ": not stored",
            importance=o.importance,
            importance_by=o.importance_by,
        )

    def cooling(
        self,
        namespace: str,
        items: Sequence[Observation],
        then: Then | None,
        cooled: dict[uuid.UUID, str],
    ) -> Then | None:
        """`then`, after cooling in the batch's transaction the memories the caught items
        created (noting them in `cooled`, id -> reason)."""
        caught = {i for i, o in enumerate(items) if self.catches(o)}
        if not caught:
            return then

        async def cool(conn: Connection, outcomes: list[Outcome]) -> None:
            for i in sorted(caught):
                done = outcomes[i]
                if done.outcome == "created" and done.id is not None:
                    reason = self.reason(items[i]) + ": stored cold"
                    await store.store_cold(
                        conn, namespace, done.id, actor="importance", reason=reason
                    )
                    cooled[done.id] = reason
            if then is not None:
                await then(conn, outcomes)

        return cool


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
        then: Then | None = None,
        dedup: bool = True,
        single: bool = False,
        rate: bool = False,
    ) -> list[Outcome]:
        """Store or reinforce each item, in order, all in one transaction.

        A key that appears more than once in a batch is applied in order, as if the items
        had been sent one after another. A new key whose memory is near-identical to an
        existing one of the same type reinforces that one instead (HINDSIGHT_DEDUP_THRESHOLD).
        `then` runs in the same transaction, so what it writes commits with the memories or
        not at all. Only a curator may vouch for a claim (`roles`). The namespace's trust
        policy caps each claim's initial confidence and decides which claims wait for review
        (`trust`): those are stored as quarantined rows beside the live memory of their key,
        and an independent trusted re-observation of one releases it. An item the client
        did not rate whose estimated importance is under the policy's
        write_below_importance is stored cold (outcome `stored_cold`) or not at all
        (`dropped`). `rate`: a client's direct write, whose unrated items the LLM rates
        when one is configured (`importance.rate`); other writers (imports, consolidation,
        reflection) rate their own or keep the built-in estimate.
        """
        if rate and self.settings.write_importance_llm:
            items = await importance.rate(
                self.llm, items, self.settings.write_importance_timeout_seconds
            )
        life = (await self.policies.get(namespace)).lifecycle
        assert life is not None
        gate = _Gate.of(life)
        if gate.action == "drop" and any(gate.catches(o) for o in items):
            kept = [o for o in items if not gate.catches(o)]
            stored = iter(
                await self.observe(
                    namespace, kept, actor=actor, role=role, then=then, dedup=dedup, single=single
                )
                if kept
                else []
            )
            return [gate.dropped(o) if gate.catches(o) else next(stored) for o in items]
        cooled: dict[uuid.UUID, str] = {}
        then = gate.cooling(namespace, items, then, cooled)
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
        outcomes = [
            dataclasses.replace(o, outcome="stored_cold", reason=cooled[o.id])
            if o.id in cooled
            else o
            for o in await self.writer.write(namespace, batch.run)
        ]
        for done in outcomes:
            label = "deduplicated" if done.requested_key else done.outcome
            metrics.OBSERVE_OUTCOMES.labels(label).inc()
        return outcomes
