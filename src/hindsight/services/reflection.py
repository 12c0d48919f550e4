"""The lifecycle pass's reflection: looking back over a namespace's memories as a whole.

Three things, each recorded in history and reversible (archived or sent to review, never
deleted), and each listed without being done on a dry run:
- duplicates are merged by the retroactive merge (`merge`), run by the pass itself;
- contradictions under different keys are settled by the write-time rules
  (`contradictions`): the newer supersedes the older when trusted at least as much, else
  both go to the review queue;
- with an LLM configured, patterns that several memories support ("the user prefers
  morning meetings" from many events) are distilled into new memories of source
  `reflection` (its trust in the policy's `trust.sources`), each naming its evidence in
  its metadata and history.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hindsight.db.pool import Connection
from hindsight.errors import ProviderError, Unavailable
from hindsight.llm.prompts import PATTERN_SYSTEM, PATTERN_VERSION, pattern_user
from hindsight.services.contradictions import (
    Resolved,
    contradiction,
    judge_for,
    link,
    resolve,
    stored_trust,
)
from hindsight.services.moves import Move
from hindsight.services.observe import Observer
from hindsight.services.observing import Observation, Outcome
from hindsight.stores import contradictions as contradiction_store, reflection as store
from hindsight.wire.policy import Policy

log = logging.getLogger(__name__)

SOURCE = "reflection"
# a pattern is a habit only when this many memories show it
MIN_EVIDENCE = 3


class _Pattern(BaseModel):
    key: str = Field(min_length=1, max_length=200)
    value: str = Field(min_length=1, max_length=2000)
    memory_type: Literal["preference", "fact", "reflection"] = "preference"
    evidence: list[str] = Field(default_factory=list)


class _Patterns(BaseModel):
    patterns: list[_Pattern] = Field(default_factory=list)


@dataclass(frozen=True)
class Reflection:
    observer: Observer

    async def run(
        self,
        conn: Connection,
        namespace: str,
        policy: Policy,
        *,
        now: datetime,
        dry_run: bool,
        actor: str,
        emit: Callable[[Move], None],
    ) -> None:
        life, trust = policy.lifecycle, policy.trust
        assert life is not None and trust is not None
        per_run = life.reflection_per_run or 0
        if not per_run:
            return
        threshold = trust.contradiction_similarity or 0.0
        if threshold > 0:
            await self._contradictions(
                conn, namespace, policy, threshold, per_run, now, dry_run, actor, emit
            )
        if self.observer.llm is not None:
            await self._patterns(conn, namespace, per_run, dry_run, actor, emit)

    async def _contradictions(
        self,
        conn: Connection,
        namespace: str,
        policy: Policy,
        threshold: float,
        per_run: int,
        now: datetime,
        dry_run: bool,
        actor: str,
        emit: Callable[[Move], None],
    ) -> None:
        trust = policy.trust
        assert trust is not None
        judge = judge_for(self.observer.llm)
        pairs = await store.contradiction_pairs(conn, namespace, threshold, per_run, now)
        settled: set[uuid.UUID] = set()
        for pair in pairs:
            newer = {k: pair[k] for k in ("id", "key", "value", "source", "source_capped")}
            older = {k.removeprefix("b_"): pair[k] for k in pair if k.startswith("b_")}
            older["similarity"] = pair["similarity"]
            if newer["id"] in settled or older["id"] in settled:
                continue
            hit = await contradiction(judge, newer, [older])
            if hit is None:
                continue
            resolved = resolve(
                trust,
                trust=_trust(policy, newer),
                source=newer["source"],
                older=older,
                why=hit[1],
                curator=False,
            )
            settled |= {newer["id"], older["id"]}
            names = f"memory {newer['id']} (key {newer['key']!r})"
            if dry_run:
                self._report(emit, namespace, resolved.how, newer, older, names, resolved.reason)
                continue
            async with conn.transaction():
                a = await contradiction_store.lock_live(conn, namespace, newer["id"])
                b = await contradiction_store.lock_live(conn, namespace, older["id"])
                if (
                    a is None
                    or b is None
                    or (a["value"], b["value"])
                    != (
                        newer["value"],
                        older["value"],
                    )
                ):
                    continue  # changed since the scan
                await self._settle(conn, namespace, resolved, a, b, names, actor)
            self._report(emit, namespace, resolved.how, newer, older, names, resolved.reason)

    async def _settle(
        self,
        conn: Connection,
        namespace: str,
        resolved: Resolved,
        newer: dict[str, Any],
        older: dict[str, Any],
        names: str,
        actor: str,
    ) -> None:
        await link(
            conn,
            namespace,
            older=older,
            newer=newer,
            resolved=resolved,
            actor=actor,
            prefix="reflection: ",
        )
        if resolved.how == "supersede":
            await contradiction_store.move(
                conn,
                namespace,
                older["id"],
                "archived",
                actor=actor,
                reason=f"reflection: superseded by contradicting {names}: {resolved.reason}",
            )
            return
        await contradiction_store.move(
            conn,
            namespace,
            newer["id"],
            "quarantined",
            actor=actor,
            reason=f"reflection: sent to review: {resolved.reason}",
        )
        if resolved.how == "review":
            await contradiction_store.move(
                conn,
                namespace,
                older["id"],
                "quarantined",
                actor=actor,
                reason=f"reflection: sent to review: contradicted by {names}",
            )

    @staticmethod
    def _report(
        emit: Callable[[Move], None],
        namespace: str,
        how: str,
        newer: dict[str, Any],
        older: dict[str, Any],
        names: str,
        reason: str,
    ) -> None:
        if how == "supersede":
            emit(
                Move(
                    namespace,
                    older["id"],
                    older["key"],
                    "superseded",
                    "reflection",
                    f"superseded by contradicting {names}: {reason}",
                )
            )
            return
        emit(Move(namespace, newer["id"], newer["key"], "review", "reflection", reason))
        if how == "review":
            emit(
                Move(
                    namespace,
                    older["id"],
                    older["key"],
                    "review",
                    "reflection",
                    f"contradicted by {names}",
                )
            )

    async def _patterns(
        self,
        conn: Connection,
        namespace: str,
        per_run: int,
        dry_run: bool,
        actor: str,
        emit: Callable[[Move], None],
    ) -> None:
        llm = self.observer.llm
        assert llm is not None
        read = await store.recent(conn, namespace, per_run)
        # what reflection said before is not evidence for itself, nor said again
        distilled = {m["key"] for m in read if m["source"] == SOURCE}
        memories = [m for m in read if m["source"] != SOURCE]
        if len(memories) < MIN_EVIDENCE:
            return
        try:
            answer = await llm.complete_json(PATTERN_SYSTEM, pattern_user(memories), _Patterns)
        except (ProviderError, Unavailable) as exc:
            log.warning("reflection on %s: no patterns distilled: %s", namespace, exc)
            return
        known = {str(m["id"]): m for m in memories}
        for pattern in answer.patterns:
            evidence = sorted({e for e in pattern.evidence if e in known})
            if len(evidence) < MIN_EVIDENCE or pattern.key in distilled:
                continue  # the model's word alone, or too few memories: not a pattern
            reason = (
                f"distilled by reflection ({PATTERN_VERSION}, {llm.name}) from "
                f"{len(evidence)} memories: {', '.join(evidence)}"
            )
            if dry_run:
                emit(
                    Move(
                        namespace, uuid.UUID(int=0), pattern.key, "distilled", "reflection", reason
                    )
                )
                continue
            (done,) = await self.observer.observe(
                namespace,
                [
                    Observation(
                        key=pattern.key,
                        value=pattern.value,
                        memory_type=pattern.memory_type,
                        source=SOURCE,
                        metadata={"evidence": evidence, "prompt": PATTERN_VERSION},
                    )
                ],
                actor=actor,
                then=_noted(namespace, actor, reason),
            )
            if done.id is not None and done.outcome in ("created", "superseded", "quarantined"):
                emit(Move(namespace, done.id, done.key, "distilled", "reflection", reason))


def _trust(policy: Policy, memory: dict[str, Any]) -> float:
    assert policy.trust is not None
    return stored_trust(policy.trust, memory)


def _noted(
    namespace: str, actor: str, reason: str
) -> Callable[[Connection, list[Outcome]], Awaitable[None]]:
    """A history entry on the distilled memory naming its evidence, in its transaction."""

    async def then(conn: Connection, outcomes: list[Outcome]) -> None:
        for o in outcomes:
            if o.id is not None and o.outcome in ("created", "superseded", "quarantined"):
                await contradiction_store.note(
                    conn, namespace, o.id, change="updated", actor=actor, reason=reason
                )

    return then
