"""Long-term memory: observe, read, list, update, delete, history.

The rules users asked for live here and in the SQL they call: re-observing a value raises
its confidence, a new value supersedes the old one (kept in history), and every batch is
all-or-nothing.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from pgvector import HalfVector
from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.db.reads import ReadRouter
from hindsight.embeddings.base import Embedder
from hindsight.errors import Conflict, InvalidInput, NotFound, Unavailable
from hindsight.ids import uuid7
from hindsight.observability import metrics
from hindsight.retrieval.keywords import document_vector
from hindsight.services import roles
from hindsight.services.access_recorder import AccessRecorder
from hindsight.services.erasure import erase_traces
from hindsight.services.observing import Observation, ObserveBatch, Outcome, normalise_tags
from hindsight.services.policy import PolicyService
from hindsight.services.redaction import scrubber
from hindsight.services.roles import Role, vouching
from hindsight.stores import (
    erasure as erasure_store,
    memories as store,
    quarantine as quarantine_store,
)
from hindsight.stores.filters import MemoryFilter
from hindsight.text import memory_text as memory_text  # re-exported: callers import it here

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class ForgetPolicy:
    """Which memories to let go of: all set criteria must hold."""

    max_confidence: float | None = None
    idle_days: float | None = None  # not recalled (or, never recalled, not created) since
    stale_days: float | None = None  # not observed again since
    memory_types: Sequence[str] = ()
    action: str = "archive"  # archive (reversible) or delete
    dry_run: bool = False
    limit: int = 1000
    # narrow the selection, like memory_types (occurred_at, else created_at)
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None

    def reason(self) -> str:
        """The criteria, for the history entry of each memory forgotten."""
        parts = []
        if self.max_confidence is not None:
            parts.append(f"confidence <= {self.max_confidence:g}")
        if self.idle_days is not None:
            parts.append(f"not accessed for {self.idle_days:g} days")
        if self.stale_days is not None:
            parts.append(f"not observed for {self.stale_days:g} days")
        if self.memory_types:
            parts.append("type in " + ", ".join(self.memory_types))
        if self.occurred_after is not None:
            parts.append(f"occurred from {self.occurred_after.isoformat()}")
        if self.occurred_before is not None:
            parts.append(f"occurred before {self.occurred_before.isoformat()}")
        return "forget: " + "; ".join(parts)


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


async def with_retry(
    pool: AsyncConnectionPool[Connection],
    work: Callable[[Connection], Awaitable[T]],
    *,
    attempts: int = 5,
) -> T:
    """Run `work` in one transaction, retrying only a deadlock or serialization failure
    (the transaction was rolled back whole, so a retry cannot double anything)."""
    for attempt in range(1, attempts + 1):
        try:
            async with pool.connection() as conn, conn.transaction():
                return await work(conn)
        except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure):
            if attempt == attempts:
                raise
            log.info("transaction retried after a deadlock (attempt %d)", attempt)
        except psycopg.OperationalError as exc:
            # psycopg's message names hosts, users and databases: the log gets it, not callers
            log.warning("PostgreSQL unreachable: %s", exc)
            raise Unavailable(
                "PostgreSQL is unreachable; try again shortly", retry_after=2
            ) from exc
    raise AssertionError("unreachable")


class MemoryService:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        embedder: Embedder,
        recorder: AccessRecorder | None = None,
        reads: ReadRouter | None = None,
        policies: PolicyService | None = None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._embedder = embedder
        self._recorder = recorder
        self._reads = reads or ReadRouter(pool, pool)
        self._policies = policies or PolicyService(settings, pool)
        self.policies = self._policies  # the same rules for writes that skip this service

    async def _write(self, namespace: str, work: Callable[[Connection], Awaitable[T]]) -> T:
        """`work` in one transaction on the primary; later reads of the namespace by this
        process go to the primary until a read replica has replayed it."""
        try:
            return await with_retry(self._pool, work)
        finally:
            self._reads.wrote(namespace)  # also after a failure: the commit may have landed

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

    async def get(self, namespace: str, memory_id: uuid.UUID) -> dict[str, Any]:
        async with self._pool.connection() as conn:
            row = await store.get(conn, namespace, memory_id)
        if row is None:
            raise NotFound(f"no memory {memory_id} in namespace {namespace!r}")
        return row

    async def list_page(
        self, namespace: str, f: MemoryFilter, *, limit: int, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        after = decode_cursor(cursor) if cursor else None

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

    async def delete(self, namespace: str, memory_id: uuid.UUID, *, actor: str) -> None:
        """Erase the memory: a tombstone stays in its history, its values go everywhere."""
        if self._recorder is not None:  # a buffered recall of it would be logged later
            await self._recorder.flush()

        async def work(conn: Connection) -> bool:
            texts = await erasure_store.history_texts(conn, [memory_id])
            deleted = await store.delete_many(conn, namespace, [memory_id], actor=actor)
            await erase_traces(conn, namespace, deleted, texts)
            return bool(deleted)

        if not await self._write(namespace, work):
            raise NotFound(f"no memory {memory_id} in namespace {namespace!r}")

    async def approve(
        self, namespace: str, memory_id: uuid.UUID, *, actor: str, role: Role, note: str | None
    ) -> dict[str, Any]:
        """A curator's yes to a quarantined claim: it becomes the live memory of its key,
        and the memory it contended with (a verified one, say) is archived."""
        roles.require(role, Role.CURATOR, "approving a quarantined memory")
        reason = "approved by a curator" + (f": {note}" if note else "")

        async def work(conn: Connection) -> dict[str, Any] | None:
            return await quarantine_store.activate(
                conn, namespace, memory_id, actor=actor, change="approved", reason=reason
            )

        row = await self._write(namespace, work)
        if row is None:
            raise await self._not_waiting(namespace, memory_id)
        return row

    async def reject(
        self, namespace: str, memory_id: uuid.UUID, *, actor: str, role: Role, note: str | None
    ) -> None:
        """A curator's no: the claim is erased like a deleted memory (no value left
        anywhere); its history ends with a `rejected` tombstone and the reason."""
        roles.require(role, Role.CURATOR, "rejecting a quarantined memory")
        if self._recorder is not None:
            await self._recorder.flush()
        reason = "rejected by a curator" + (f": {note}" if note else "")

        async def work(conn: Connection) -> bool:
            texts = await erasure_store.history_texts(conn, [memory_id])
            deleted = await quarantine_store.reject(
                conn, namespace, memory_id, actor=actor, reason=reason
            )
            await erase_traces(conn, namespace, deleted, texts)
            return bool(deleted)

        if not await self._write(namespace, work):
            raise await self._not_waiting(namespace, memory_id)

    async def _not_waiting(self, namespace: str, memory_id: uuid.UUID) -> Exception:
        """The error for a review of a memory that is not waiting for one."""
        row = await self.get(namespace, memory_id)  # NotFound when there is none
        return Conflict(
            f"memory {memory_id} is {row['status']}, not quarantined: only a quarantined "
            "memory is approved or rejected"
        )

    async def forget(
        self, namespace: str, policy: ForgetPolicy, *, actor: str
    ) -> list[dict[str, Any]]:
        """Archive (or delete) what the policy selects; permanent memories never. Returns
        the memories selected; with `dry_run`, nothing changes."""
        if (
            policy.max_confidence is None
            and policy.idle_days is None
            and (policy.stale_days is None)
        ):
            raise InvalidInput(
                "a forgetting policy needs at least one of max_confidence, not_accessed_days "
                "or not_observed_days"
            )

        async def work(conn: Connection) -> list[dict[str, Any]]:
            rows = await store.forgettable(
                conn,
                namespace,
                max_confidence=policy.max_confidence,
                idle_days=policy.idle_days,
                stale_days=policy.stale_days,
                memory_types=list(policy.memory_types),
                limit=policy.limit,
                occurred=MemoryFilter(
                    occurred_after=policy.occurred_after, occurred_before=policy.occurred_before
                )
                if policy.occurred_after or policy.occurred_before
                else None,
            )
            if rows and not policy.dry_run:
                ids = [r["id"] for r in rows]
                reason = policy.reason()
                if policy.action == "delete":
                    texts = await erasure_store.history_texts(conn, ids)
                    deleted = await store.delete_many(
                        conn, namespace, ids, actor=actor, permanent_too=False, reason=reason
                    )
                    await erase_traces(conn, namespace, deleted, texts)
                else:
                    await store.archive_many(conn, namespace, ids, actor=actor, reason=reason)
            return rows

        return await self._write(namespace, work)

    async def history(self, namespace: str, memory_id: uuid.UUID) -> list[dict[str, Any]]:

        async def read(conn: Connection) -> list[dict[str, Any]]:
            return await store.history(conn, namespace, memory_id)

        rows = await self._reads.read(namespace, read)
        if not rows:
            raise NotFound(f"no memory {memory_id} (nor any history of it) in {namespace!r}")
        return rows
