"""Long-term memory: observe, read, list, update, delete, history.

The rules users asked for live here and in the SQL they call: re-observing a value raises
its confidence, a new value supersedes the old one (kept in history), and every batch is
all-or-nothing.

The service is three classes, by responsibility: `memory_core.MemoryCore` (collaborators,
the write transaction, reading one memory), `memory_curation.MemoryCuration` (delete,
review, forgetting) and `MemoryService` here (observe, list, update, history).
`ForgetPolicy`, `with_retry` and `memory_text` are re-exported: this is where they have
always been imported from.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from pgvector import HalfVector
from psycopg import errors as pg_errors

from hindsight.db.pool import Connection
from hindsight.errors import Conflict, InvalidInput, NotFound
from hindsight.ids import uuid7
from hindsight.observability import metrics
from hindsight.retrieval.keywords import document_vector
from hindsight.services import roles
from hindsight.services.memory_core import with_retry as with_retry
from hindsight.services.memory_curation import (
    ForgetPolicy as ForgetPolicy,
    MemoryCuration,
)
from hindsight.services.observing import Observation, ObserveBatch, Outcome, normalise_tags
from hindsight.services.redaction import scrubber
from hindsight.services.roles import Role, vouching
from hindsight.stores import memories as store
from hindsight.stores.filters import MemoryFilter
from hindsight.text import memory_text as memory_text  # re-exported: callers import it here


def encode_cursor(memory_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(memory_id.bytes).decode().rstrip("=")


def decode_cursor(cursor: str) -> uuid.UUID:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return uuid.UUID(bytes=raw)
    except (binascii.Error, ValueError):
        raise InvalidInput(
            "cursor: not a cursor this server issued; pass next_cursor from the previous page "
            "unchanged"
        ) from None


class MemoryService(MemoryCuration):
    async def _claims(
        self, items: Sequence[Observation], confidences: Sequence[float]
    ) -> list[store.NewClaim]:
        texts = [memory_text(o.key, o.value) for o in items]
        vectors = await self._embedder.embed(texts)
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
        initial = self._settings.initial_confidence
        for i, o in enumerate(items):
            what = vouching(o.verified or None, o.permanent or None, o.confidence, initial)
            if what is not None:
                roles.require(role, Role.CURATOR, f"memories[{i}]: {what}")
        scrub = await scrubber(self._policies, namespace)
        cleaned, redactions = scrub.claims([(o.key, o.value) for o in items])
        items = [
            dataclasses.replace(o, key=k, value=v) for o, (k, v) in zip(items, cleaned, strict=True)
        ]
        trust = (await self._policies.get(namespace)).trust
        assert trust is not None
        batch = ObserveBatch(
            namespace=namespace,
            items=items,
            redactions=redactions,
            trust=trust,
            curator=role.at_least(Role.CURATOR),
            initial=initial,
            threshold=self._settings.dedup_threshold if dedup else 0.0,
            exact_max=self._settings.exact_search_max_rows,
            step=self._settings.reinforcement_step,
            actor=actor,
            then=then,
        )
        batch.prepared = await self._claims(
            items, [batch.verdict(o, None).confidence for o in items]
        )
        outcomes = await self._write(namespace, batch.run)
        for done in outcomes:
            label = "deduplicated" if done.requested_key else done.outcome
            metrics.OBSERVE_OUTCOMES.labels(label).inc()
        return outcomes

    async def list_page(
        self,
        namespace: str,
        *,
        limit: int,
        cursor: str | None,
        memory_types: tuple[str, ...] = (),
        tags_all: tuple[str, ...] = (),
        min_confidence: float | None = None,
        key: str | None = None,
        key_prefix: str | None = None,
        status: str | None = None,
        occurred_after: datetime | None = None,
        occurred_before: datetime | None = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of memories in creation order. `status`: None lists the live ones,
        "all" every status, else that one."""
        after = decode_cursor(cursor) if cursor else None
        f = MemoryFilter(
            memory_types=memory_types,
            tags_all=tags_all,
            min_confidence=min_confidence,
            key=key,
            key_prefix=key_prefix,
            status=("active", "cold") if status is None else None if status == "all" else status,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
        )

        async def read(conn: Connection) -> list[dict[str, Any]]:
            return await store.list_page(conn, namespace, f, after=after, limit=limit + 1)

        rows = await self._reads.read(namespace, read)
        more = len(rows) > limit
        rows = rows[:limit]
        return rows, (encode_cursor(rows[-1]["id"]) if more else None)

    async def update(
        self,
        namespace: str,
        memory_id: uuid.UUID,
        changes: dict[str, Any],
        *,
        actor: str,
        role: Role = Role.WRITER,
    ) -> dict[str, Any]:
        """Apply a client's explicit edit. A new value is re-embedded and, unless the edit
        sets a confidence, starts over at the initial confidence (it is a new claim).
        Changing verified or permanent either way, or raising confidence above the
        initial one, is a curator's call."""
        what = vouching(
            changes.get("verified"),
            changes.get("permanent"),
            changes.get("confidence"),
            self._settings.initial_confidence,
        )
        if what is not None:
            roles.require(role, Role.CURATOR, what)
        if "status" in changes and (await self.get(namespace, memory_id))["status"] == (
            "quarantined"
        ):
            raise Conflict(
                f"status: memory {memory_id} is quarantined; a curator approves or rejects it "
                f"(POST .../memories/{memory_id}:approve or :reject)"
            )
        scrub = await scrubber(self._policies, namespace)
        changes = {
            name: scrub(name, value) if name in ("key", "value") else value
            for name, value in changes.items()
        }
        columns: dict[str, Any] = {}
        for name, value in changes.items():
            if name == "key":
                columns["mem_key"] = value
            elif name == "value":
                columns["mem_value"] = value
            elif name == "tags":
                columns["tags"] = normalise_tags(value)
            else:
                columns[name] = value
        if "mem_value" in columns or "mem_key" in columns:
            current = await self.get(namespace, memory_id)
            key = columns.get("mem_key", current["key"])
            value = columns.get("mem_value", current["value"])
            text = memory_text(key, value)
            (vector,) = await self._embedder.embed([text])
            keywords, terms = document_vector(text)
            columns.update(embedding=HalfVector(vector), keywords=keywords, keyword_terms=terms)
            if "mem_value" in columns and "confidence" not in columns:
                columns["confidence"] = self._settings.initial_confidence

        async def work(conn: Connection) -> dict[str, Any] | None:
            return await store.update(conn, namespace, memory_id, columns, actor=actor)

        try:
            row = await self._write(namespace, work)
        except pg_errors.UniqueViolation:
            # a new key, or (restoring an archived memory) the memory's own
            key = changes.get("key") or (await self.get(namespace, memory_id))["key"]
            raise InvalidInput(
                f"key: another active memory in {namespace!r} already has key "
                f"{key!r}; delete or archive it first"
            ) from None
        if row is None:
            raise NotFound(f"no memory {memory_id} in namespace {namespace!r}")
        return row

    async def history(self, namespace: str, memory_id: uuid.UUID) -> list[dict[str, Any]]:

        async def read(conn: Connection) -> list[dict[str, Any]]:
            return await store.history(conn, namespace, memory_id)

        rows = await self._reads.read(namespace, read)
        if not rows:
            raise NotFound(f"no memory {memory_id} (nor any history of it) in {namespace!r}")
        return rows
