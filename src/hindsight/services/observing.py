"""What one observe call does inside its transaction, and the claims and outcomes it
deals in: each key stored, reinforced or superseded in order, a near-identical new key
folded into the memory it repeats, and what the trust policy holds back quarantined or
released (`observe.Observer` prepares the batch and runs it)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hindsight.db.pool import Connection
from hindsight.retrieval.keywords import twin_term_groups
from hindsight.services.contradictions import Judge, Resolved, contradiction, link, resolve
from hindsight.services.trust import Verdict, judge, releases
from hindsight.stores import (
    contradictions as contradiction_store,
    lifecycle_moves,
    memories as store,
    quarantine as quarantine_store,
    search as search_store,
)
from hindsight.text.importance import estimate_importance
from hindsight.text.subjects import comparable, prefix
from hindsight.text.twins import same_words
from hindsight.wire.memories import MemoryIn, expiry
from hindsight.wire.policy import TrustPolicy


@dataclass(frozen=True)
class Observation:
    """One claim as a client states it."""

    key: str
    value: str
    memory_type: str = "fact"
    source: str | None = None
    confidence: float | None = None  # initial confidence when the key is new or superseded
    importance: float = 0.5
    tags: Sequence[str] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    verified: bool = False
    permanent: bool = False
    expires_at: datetime | None = None  # hard expiry
    occurred_at: datetime | None = None  # when it happened (None: unknown)
    # set by a caller that knows the claim is suspect (why): it is quarantined
    suspect: str | None = None
    # the client rated nothing: `importance` is an estimate (the built-in one, or the
    # LLM's: `importance_by`), and the policy's write_below_importance gate judges it
    importance_estimated: bool = False
    # who rated `importance`: client | builtin | llm | builtin_fallback (an LLM is
    # configured but did not answer in time, so the built-in estimate stands)
    importance_by: str = "client"


def observation_from(m: MemoryIn) -> Observation:
    """A claim as the API's body states it, with its time to live made an expiry."""
    claim = m.model_dump(exclude={"expires_at", "ttl_seconds", "importance"})
    estimated = m.importance is None
    return Observation(
        **claim,
        importance=estimate_importance(m.value) if m.importance is None else m.importance,
        importance_estimated=estimated,
        importance_by="builtin" if estimated else "client",
        expires_at=expiry(m.expires_at, m.ttl_seconds),
    )


# (connection, memory ids) -> those a recall by this batch's actor returned lately
Recalled = Callable[[Connection, set[uuid.UUID]], Awaitable[set[uuid.UUID]]]


@dataclass(frozen=True)
class Outcome:
    id: uuid.UUID | None  # None: dropped, nothing stored
    key: str
    # created | reinforced | superseded | quarantined | released | echoed | stored_cold | dropped
    outcome: str
    confidence: float
    observation_count: int
    memory_type: str
    # Set when a new key was a near-duplicate of another memory, which it reinforced.
    requested_key: str | None = None
    similarity: float | None = None
    # secrets and personal data replaced before storage, per kind (never the secret)
    redactions: dict[str, int] = field(default_factory=dict)
    trust: float | None = None  # the source's trust in the namespace's policy
    confidence_capped: bool = False  # the initial confidence was lowered to the trust
    reason: str | None = None  # why it was quarantined, or released
    # the importance this write gave its claim, and who rated it (`Observation.importance_by`)
    importance: float | None = None
    importance_by: str | None = None


def normalise_tags(tags: Sequence[str]) -> list[str]:
    return sorted({t.strip() for t in tags if t.strip()})


def _rounds(claims: Sequence[store.NewClaim]) -> list[list[int]]:
    """Round r holds the r-th occurrence of each key: one statement per round, since one
    INSERT ... ON CONFLICT cannot touch the same row twice."""
    rounds: list[list[int]] = []
    seen: dict[str, int] = {}
    for position, claim in enumerate(claims):
        r = seen.get(claim.key, 0)
        seen[claim.key] = r + 1
        if r == len(rounds):
            rounds.append([])
        rounds[r].append(position)
    return rounds


@dataclass
class _Run:
    """One run of a batch in its transaction: a deadlock retry runs the batch again, from
    the prepared claims."""

    conn: Connection
    claims: list[store.NewClaim]  # a claim folded into its twin takes its key and value
    verdicts: list[Verdict] = field(default_factory=list)
    done: dict[int, Outcome] = field(default_factory=dict)  # by position in the batch
    # the waiting claim a position joins instead of being held as a row of its own
    rejoin: dict[int, uuid.UUID] = field(default_factory=dict)
    # the live memory under another key a position contradicts, and what is done about it
    contradicts: dict[int, tuple[dict[str, Any], Resolved]] = field(default_factory=dict)


@dataclass
class ObserveBatch:
    """One observe call's items, ready to write (`prepared`: embedded, confidence set)."""

    namespace: str
    items: Sequence[Observation]
    redactions: list[dict[str, int]]
    trust: TrustPolicy
    curator: bool
    initial: float
    threshold: float  # near-duplicate similarity; 0: no folding
    exact_max: int
    step: float
    actor: str
    # how high reinforcement may lift a confidence: a writer's repetitions stop short of
    # certainty (`trust.WRITER_CONFIDENCE_MAX`)
    ceiling: float = 1.0
    then: Callable[[Connection, list[Outcome]], Awaitable[None]] | None = None
    # which of these memories recall returned to this actor within the echo window
    recalled: Recalled | None = None
    # contradictions under other keys: how alike a pair must be (0: not checked), and
    # who tells a different claim (`contradictions`)
    contradiction_similarity: float = 0.0
    contradiction_judge: Judge | None = None
    prepared: list[store.NewClaim] = field(default_factory=list)

    def verdict(self, o: Observation, live: dict[str, Any] | None) -> Verdict:
        return judge(
            self.trust,
            key=o.key,
            value=o.value,
            source=o.source,
            confidence=self.initial if o.confidence is None else o.confidence,
            explicit=o.confidence is not None,
            curator=self.curator,
            verified=o.verified,
            live=live,
            suspect=o.suspect,
        )

    async def run(self, conn: Connection) -> list[Outcome]:
        state = _Run(conn, list(self.prepared))
        keys = [c.key for c in state.claims]
        live = await self._judge(state, keys)
        held = await quarantine_store.waiting(conn, self.namespace, keys)
        holding, releasing = self._partition(state, live, held)
        normal = [p for p in range(len(keys)) if p not in releasing and p not in holding]
        twins = await self._twins(state, normal)
        echoes = await self._echoes(state, normal, live, twins)
        normal = [p for p in normal if p not in echoes]
        await self._contradictions(state, normal, live, twins)
        holding += [p for p, (_, r) in state.contradicts.items() if r.how != "supersede"]
        normal = [p for p in normal if p not in holding]
        await self._write_rounds(state, normal, twins)
        await self._release(state, releasing)
        await self._hold(state, holding, held)
        await self._settle(state)
        outcomes = [state.done[p] for p in sorted(state.done)]
        if self.then is not None:
            await self.then(conn, outcomes)
        return outcomes

    async def _judge(self, state: _Run, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The trust policy's verdict on each claim, against the live memory of its key
        (returned, by key). An expired memory's key starts over: the old claim is deleted,
        not reinforced. Read first and deleted only when one has expired: deleting on
        every write took three of a single observe's fifteen round trips."""
        live = await quarantine_store.live_rows(state.conn, self.namespace, keys)
        expired = [key for key, row in live.items() if row.pop("expired")]
        if expired:
            await lifecycle_moves.delete_expired_keys(state.conn, self.namespace, expired)
            live = {key: row for key, row in live.items() if key not in expired}
        state.verdicts = [self.verdict(o, live.get(o.key)) for o in self.items]
        return live

    def _partition(
        self, state: _Run, live: dict[str, dict[str, Any]], held: list[dict[str, Any]]
    ) -> tuple[list[int], dict[int, dict[str, Any]]]:
        """The positions that wait for review, and those that release a claim waiting
        (with the claim each releases, taken out of `held`); the rest are written."""
        holding: list[int] = []
        releasing: dict[int, dict[str, Any]] = {}
        for p, (claim, v) in enumerate(zip(state.claims, state.verdicts, strict=True)):
            if v.reason is not None:
                holding.append(p)
                continue
            current = live.get(claim.key)
            if current is not None and current["value"] == claim.value:
                continue  # the live memory already says so: it is reinforced
            for w in held:
                if (w["key"], w["value"]) != (claim.key, claim.value):
                    continue
                if not self.curator and self.actor in w["actors"]:
                    # the key that sent a waiting claim, sending it again under another
                    # label, is the same evidence again: it joins the claim in the queue
                    state.verdicts[p] = dataclasses.replace(
                        v,
                        reason=f"claim {w['id']} from this API key waits for review; "
                        "the same key sending it again is not independent evidence",
                    )
                    state.rejoin[p] = w["id"]
                    holding.append(p)
                    break
                if releases(
                    self.trust,
                    claim.source,
                    w["source"],
                    actor=self.actor,
                    held_by=w["actors"],
                    curator=self.curator,
                ):
                    releasing[p] = w
                    held.remove(w)
                    break
        return holding, releasing

    async def _twins(self, state: _Run, normal: list[int]) -> dict[int, dict[str, Any]]:
        """The near-identical memory each new claim folds into, by position; the claim
        takes its twin's key and value."""
        claims = state.claims
        found = (
            await search_store.near_duplicates(
                state.conn,
                self.namespace,
                [claims[p] for p in normal],
                [twin_term_groups(claims[p].value) for p in normal],
                self.threshold,
                self.exact_max,
            )
            if self.threshold > 0 and normal
            else {}
        )
        # a twin by the embedder's judgement must also say it in the same words: a fold
        # keeps the twin's value, so a wrong one loses the new claim
        twins = {
            normal[i]: twin
            for i, twin in found.items()
            if same_words(claims[normal[i]].value, twin["value"])
        }
        for position, twin in twins.items():
            claims[position] = dataclasses.replace(
                claims[position], key=twin["key"], value=twin["value"]
            )
        return twins

    async def _echoes(
        self,
        state: _Run,
        normal: list[int],
        live: dict[str, dict[str, Any]],
        twins: dict[int, dict[str, Any]],
    ) -> set[int]:
        """The positions that store back what recall just gave this key: the memory they
        would reinforce (of their key, or the twin they fold into) was among its results,
        and they bring no source of their own. Repeating what it was told is not evidence,
        so they change nothing."""
        if self.recalled is None:
            return set()
        claims = state.claims
        targets: dict[int, uuid.UUID] = {}
        for p in normal:
            o = self.items[p]
            if o.confidence is not None or o.verified or o.permanent:
                continue  # a curator setting the memory's standing, not repeating it
            row = twins.get(p) or live.get(claims[p].key)
            if row is not None and row["value"] == claims[p].value:
                targets[p] = row["id"]
        recalled = await self.recalled(state.conn, set(targets.values())) if targets else set()
        echoes = set()
        for p, memory_id in targets.items():
            if memory_id not in recalled:
                continue
            current = live.get(claims[p].key)
            if p in twins:  # a twin's standing is not among the rows of the batch's keys
                current = await store.get(state.conn, self.namespace, memory_id, lock=True)
            if current is None or claims[p].source not in (None, current["source"]):
                continue  # a source that saw it for itself: real evidence
            self._outcome(
                state,
                p,
                current,
                "echoed",
                "recall returned this memory to this API key moments ago; storing it back "
                "is not new evidence",
                twin=twins.get(p),
            )
            echoes.add(p)
        return echoes

    async def _contradictions(
        self,
        state: _Run,
        normal: list[int],
        live: dict[str, dict[str, Any]],
        twins: dict[int, dict[str, Any]],
    ) -> None:
        """The live memory under another key each new claim contradicts, and how it is
        resolved (`contradictions.resolve`); a claim held for review gets its reason."""
        if self.contradiction_similarity <= 0 or self.contradiction_judge is None:
            return
        claims = state.claims
        ps = [
            p
            for p in normal
            if p not in twins and claims[p].key not in live and comparable(claims[p].key)
        ]
        if not ps:
            return
        found = await search_store.contenders(
            state.conn,
            self.namespace,
            [claims[p] for p in ps],
            [prefix(claims[p].key) for p in ps],
            self.contradiction_similarity,
            self.exact_max,
        )
        taken: set[uuid.UUID] = set()
        for i, candidates in found.items():
            p = ps[i]
            newer = {"key": claims[p].key, "value": claims[p].value}
            hit = await contradiction(
                self.contradiction_judge, newer, [c for c in candidates if c["id"] not in taken]
            )
            if hit is None:
                continue
            older = await contradiction_store.lock_live(state.conn, self.namespace, hit[0]["id"])
            if older is None or older["value"] != hit[0]["value"]:
                continue  # changed since the search: judged against what it no longer says
            taken.add(older["id"])
            resolved = resolve(
                self.trust,
                trust=state.verdicts[p].trust,
                source=claims[p].source,
                older=older,
                why=hit[1],
                curator=self.curator,
            )
            state.contradicts[p] = (older, resolved)
            if resolved.how != "supersede":
                state.verdicts[p] = dataclasses.replace(state.verdicts[p], reason=resolved.reason)

    async def _settle(self, state: _Run) -> None:
        """Each contradiction's older memory archived (superseded) or sent to review, and
        both memories' history naming the other (`contradictions.link`)."""
        for p, (older, resolved) in state.contradicts.items():
            done = state.done[p]
            if done.id is None:  # dropped by the importance gate: nothing stands against it
                continue
            await link(
                state.conn,
                self.namespace,
                older=older,
                newer={"id": done.id, "key": done.key},
                resolved=resolved,
                actor=self.actor,
            )
            newer = f"memory {done.id} (key {done.key!r})"
            if resolved.how == "supersede":
                await contradiction_store.move(
                    state.conn,
                    self.namespace,
                    older["id"],
                    "archived",
                    actor=self.actor,
                    reason=f"superseded by contradicting {newer}: {resolved.reason}",
                )
                state.done[p] = dataclasses.replace(
                    done, outcome="superseded", reason=resolved.reason
                )
            elif resolved.how == "review":
                await contradiction_store.move(
                    state.conn,
                    self.namespace,
                    older["id"],
                    "quarantined",
                    actor=self.actor,
                    reason=f"sent to review: contradicted by quarantined {newer}",
                )

    async def _write_rounds(
        self, state: _Run, normal: list[int], twins: dict[int, dict[str, Any]]
    ) -> None:
        claims = state.claims
        for positions in _rounds([claims[p] for p in normal]):
            positions = [normal[i] for i in positions]
            # sorted by key, so concurrent batches lock rows in the same order
            positions.sort(key=lambda p: claims[p].key)
            rows = await store.observe(
                state.conn,
                self.namespace,
                [claims[p] for p in positions],
                actor=self.actor,
                step=self.step,
                ceiling=self.ceiling,
            )
            by_key = {row["key"]: row for row in rows}
            for p in positions:
                row = by_key[claims[p].key]
                if row["created"]:
                    outcome = "created"
                elif row["observation_count"] == 1:
                    outcome = "superseded"
                else:
                    outcome = "reinforced"
                self._outcome(state, p, row, outcome, twin=twins.get(p))

    async def _release(self, state: _Run, releasing: dict[int, dict[str, Any]]) -> None:
        for p, w in releasing.items():
            why = (
                f"released: observed again by "
                f"{state.claims[p].source or 'a client with no source'}"
                f" (trust {state.verdicts[p].trust:g}), independently of "
                f"{w['source'] or 'no source'}"
            )
            freed = await quarantine_store.activate(
                state.conn,
                self.namespace,
                w["id"],
                actor=self.actor,
                change="released",
                reason=why,
                step=self.step,
                ceiling=self.ceiling,
            )
            assert freed is not None  # locked by `waiting`
            self._outcome(state, p, freed, "released", why)

    async def _hold(self, state: _Run, holding: list[int], held: list[dict[str, Any]]) -> None:
        # the same claim from the same source, waiting already or held earlier in this
        # batch, is reinforced rather than held twice
        again: dict[tuple[str, str, str | None], Any] = {
            (w["key"], w["value"], w["source"]): w["id"] for w in held
        }
        for p in holding:
            c = state.claims[p]
            reason = state.verdicts[p].reason
            assert reason is not None
            kept = await quarantine_store.hold(
                state.conn,
                self.namespace,
                c,
                actor=self.actor,
                reason="quarantined: " + reason,
                step=self.step,
                again=state.rejoin.get(p) or again.get((c.key, c.value, c.source)),
            )
            again[(c.key, c.value, c.source)] = kept["id"]
            self._outcome(state, p, kept, "quarantined", reason)

    def _outcome(
        self,
        state: _Run,
        p: int,
        row: dict[str, Any],
        outcome: str,
        reason: str | None = None,
        twin: dict[str, Any] | None = None,
    ) -> None:
        verdict = state.verdicts[p]
        state.done[p] = Outcome(
            id=row["id"],
            key=row["key"],
            outcome=outcome,
            confidence=float(row["confidence"]),
            observation_count=int(row["observation_count"]),
            memory_type=row["memory_type"],
            # a near-duplicate: the key asked for, and how like its twin it was
            requested_key=self.prepared[p].key if twin else None,
            similarity=round(float(twin["similarity"]), 6) if twin else None,
            redactions=self.redactions[p],
            trust=verdict.trust,
            confidence_capped=verdict.capped,
            reason=reason,
            importance=self.items[p].importance,
            importance_by=self.items[p].importance_by,
        )
