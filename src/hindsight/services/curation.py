"""Curation: a client's explicit edit of a memory, and letting memories go (delete, the
curator's review of a quarantined claim, the forgetting policy). Each change is one write
transaction; what is erased takes its traces (recall log, job results, cached
embeddings) with it, and its history keeps only a tombstone.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgvector import HalfVector
from psycopg import errors as pg_errors

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.errors import Conflict, InvalidInput, NotFound
from hindsight.retrieval.keywords import document_vector
from hindsight.services import permissions, roles
from hindsight.services.access_recorder import AccessRecorder
from hindsight.services.erasure import erase_traces
from hindsight.services.memory_reads import MemoryReads
from hindsight.services.observing import normalise_tags
from hindsight.services.policy import PolicyService
from hindsight.services.redaction import Scrubber, scrubber
from hindsight.services.roles import Role, vouching
from hindsight.services.transactions import Writer
from hindsight.stores import (
    erasure as erasure_store,
    memories as store,
    quarantine as quarantine_store,
)
from hindsight.stores.filters import MemoryFilter
from hindsight.text import memory_text
from hindsight.wire.memories import ForgetIn


@dataclass(frozen=True)
class ForgetPolicy:
    """Which memories to let go of: all set criteria must hold."""

    max_confidence: float | None = None
    max_importance: float | None = None
    not_accessed_days: float | None = None  # not recalled (or, never recalled, not created) since
    not_observed_days: float | None = None  # not observed again since
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
        if self.max_importance is not None:
            parts.append(f"importance <= {self.max_importance:g}")
        if self.not_accessed_days is not None:
            parts.append(f"not accessed for {self.not_accessed_days:g} days")
        if self.not_observed_days is not None:
            parts.append(f"not observed for {self.not_observed_days:g} days")
        if self.memory_types:
            parts.append("type in " + ", ".join(self.memory_types))
        if self.occurred_after is not None:
            parts.append(f"occurred from {self.occurred_after.isoformat()}")
        if self.occurred_before is not None:
            parts.append(f"occurred before {self.occurred_before.isoformat()}")
        return "forget: " + "; ".join(parts)


def forget_policy(body: ForgetIn) -> ForgetPolicy:
    return ForgetPolicy(
        max_confidence=body.max_confidence,
        max_importance=body.max_importance,
        not_accessed_days=body.not_accessed_days,
        not_observed_days=body.not_observed_days,
        memory_types=tuple(body.memory_types or ()),
        action=body.action,
        dry_run=body.dry_run,
        limit=body.limit,
        occurred_after=body.occurred_after,
        occurred_before=body.occurred_before,
    )


async def _still_allowed(
    conn: Connection,
    namespace: str,
    memory_id: uuid.UUID,
    role: Role,
    actions: Sequence[permissions.Action],
) -> None:
    """The permission check again on the row locked in the write's transaction: a curator
    may have verified the memory since it was first read, and the write must not land on
    what is now vouched for."""
    # a curator's only limit on these actions is a quarantined memory's status, and no
    # stored memory becomes quarantined: nothing to re-check
    if role.at_least(Role.CURATOR):
        return
    row = await store.get(conn, namespace, memory_id, lock=True)
    if row is not None:
        for action in actions:
            permissions.require(role, action, permissions.states(row), str(memory_id))


@dataclass(frozen=True)
class Curation:
    settings: Settings
    embedder: Embedder
    writer: Writer
    memories: MemoryReads
    policies: PolicyService
    recorder: AccessRecorder | None = None

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
            self.settings.initial_confidence,
        )
        if what is not None:
            roles.require(role, Role.CURATOR, what)
        current = await self.memories.get(namespace, memory_id)
        if "status" in changes and current["status"] == "quarantined":
            raise Conflict(
                f"status: memory {memory_id} is quarantined; a curator approves or rejects it "
                f"(POST .../memories/{memory_id}:approve or :reject)"
            )
        actions = permissions.patch_actions(changes, self.settings.initial_confidence)
        for action in actions:
            permissions.require(role, action, permissions.states(current), str(memory_id))
        scrub = await scrubber(self.policies, namespace)
        changes = {name: _scrubbed(scrub, name, value) for name, value in changes.items()}
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
        if "source" in columns:  # whoever names the source decides how far it is trusted
            columns["source_capped"] = columns["source"] is not None and not role.at_least(
                Role.CURATOR
            )
        if "mem_value" in columns or "mem_key" in columns:
            key = columns.get("mem_key", current["key"])
            value = columns.get("mem_value", current["value"])
            text = memory_text(key, value)
            (vector,) = await self.embedder.embed([text])
            keywords, terms = document_vector(text)
            columns.update(embedding=HalfVector(vector), keywords=keywords, keyword_terms=terms)
            if "mem_value" in columns and "confidence" not in columns:
                columns["confidence"] = self.settings.initial_confidence

        async def work(conn: Connection) -> dict[str, Any] | None:
            await _still_allowed(conn, namespace, memory_id, role, actions)
            return await store.update(conn, namespace, memory_id, columns, actor=actor)

        try:
            row = await self.writer.write(namespace, work)
        except pg_errors.UniqueViolation:
            # a new key, or (restoring an archived memory) the memory's own
            key = changes.get("key") or (await self.memories.get(namespace, memory_id))["key"]
            raise InvalidInput(
                f"key: another active memory in {namespace!r} already has key "
                f"{key!r}; delete or archive it first"
            ) from None
        if row is None:
            raise NotFound(f"no memory {memory_id} in namespace {namespace!r}")
        return row

    async def delete(
        self, namespace: str, memory_id: uuid.UUID, *, actor: str, role: Role = Role.WRITER
    ) -> None:
        """Erase the memory: a tombstone stays in its history, its values go everywhere."""
        current = await self.memories.get(namespace, memory_id)
        permissions.require(
            role, permissions.Action.DELETE, permissions.states(current), str(memory_id)
        )
        if self.recorder is not None:  # a buffered recall of it would be logged later
            await self.recorder.flush()

        async def work(conn: Connection) -> bool:
            await _still_allowed(conn, namespace, memory_id, role, [permissions.Action.DELETE])
            texts = await erasure_store.history_texts(conn, [memory_id])
            deleted = await store.delete_many(conn, namespace, [memory_id], actor=actor)
            await erase_traces(conn, namespace, deleted, texts)
            return bool(deleted)

        if not await self.writer.write(namespace, work):
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

        row = await self.writer.write(namespace, work)
        if row is None:
            raise await self._not_waiting(namespace, memory_id)
        return row

    async def reject(
        self, namespace: str, memory_id: uuid.UUID, *, actor: str, role: Role, note: str | None
    ) -> None:
        """A curator's no: the claim is erased like a deleted memory (no value left
        anywhere); its history ends with a `rejected` tombstone and the reason."""
        roles.require(role, Role.CURATOR, "rejecting a quarantined memory")
        if self.recorder is not None:
            await self.recorder.flush()
        reason = "rejected by a curator" + (f": {note}" if note else "")

        async def work(conn: Connection) -> bool:
            texts = await erasure_store.history_texts(conn, [memory_id])
            deleted = await quarantine_store.reject(
                conn, namespace, memory_id, actor=actor, reason=reason
            )
            await erase_traces(conn, namespace, deleted, texts)
            return bool(deleted)

        if not await self.writer.write(namespace, work):
            raise await self._not_waiting(namespace, memory_id)

    async def _not_waiting(self, namespace: str, memory_id: uuid.UUID) -> Exception:
        """The error for a review of a memory that is not waiting for one."""
        row = await self.memories.get(namespace, memory_id)  # NotFound when there is none
        return Conflict(
            f"memory {memory_id} is {row['status']}, not quarantined: only a quarantined "
            "memory is approved or rejected"
        )

    async def forget(
        self, namespace: str, policy: ForgetPolicy, *, actor: str, role: Role = Role.WRITER
    ) -> list[dict[str, Any]]:
        """Archive (or delete) what the policy selects; permanent memories never, and
        verified ones only for a curator (`permissions`). Returns the memories selected;
        with `dry_run`, nothing changes."""
        spare_verified = (
            permissions.decide(role, permissions.Action.FORGET, {permissions.State.VERIFIED})
            is not permissions.Decision.ALLOW
        )
        if (
            policy.max_confidence is None
            and policy.max_importance is None
            and policy.not_accessed_days is None
            and (policy.not_observed_days is None)
        ):
            raise InvalidInput(
                "a forgetting policy needs at least one of max_confidence, max_importance, "
                "not_accessed_days or not_observed_days"
            )

        async def work(conn: Connection) -> list[dict[str, Any]]:
            rows = await store.forgettable(
                conn,
                namespace,
                max_confidence=policy.max_confidence,
                max_importance=policy.max_importance,
                not_accessed_days=policy.not_accessed_days,
                not_observed_days=policy.not_observed_days,
                memory_types=list(policy.memory_types),
                limit=policy.limit,
                spare_verified=spare_verified,
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

        return await self.writer.write(namespace, work)


def _scrubbed(scrub: Scrubber, name: str, value: Any) -> Any:
    """An edit's text fields are read as an observation's are: every one that is stored."""
    if name in ("key", "value", "source") and isinstance(value, str):
        return scrub(name, value)
    if name == "tags" and value is not None:
        return scrub.strings(name, value)
    if name == "metadata" and value is not None:
        return scrub.json(name, value)
    return value
