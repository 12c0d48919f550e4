"""The lifecycle scheduler: applies each namespace's policy to its memories.

One replica at a time (a session-level advisory lock, held across the pass), in bounded
batches, each its own short transaction, so a pass over a large namespace never holds
locks for long and a client's write waits at most one batch. The clock is a parameter:
`now` decides every rule, so tests (and a dry run "as of next month") move time instead of
waiting.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.services.merge import merge_near_duplicates
from hindsight.services.moves import Move
from hindsight.services.policy import PolicyService
from hindsight.services.reflection import Reflection
from hindsight.stores import (
    lifecycle as store,
    lifecycle_moves as moves_store,
    lifecycle_rules as rules_store,
    maintenance as maintenance_store,
)
from hindsight.stores.reads import ReadRouter
from hindsight.wire.policy import LifecyclePolicy, Policy, Retention

log = logging.getLogger(__name__)

ACTOR = "lifecycle"


@dataclass
class LifecycleReport:
    ran: bool = False
    dry_run: bool = False
    now: datetime | None = None
    namespaces: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    over_capacity: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "dry_run": self.dry_run,
            "now": self.now.isoformat() if self.now else None,
            "namespaces": self.namespaces,
            "counts": dict(self.counts),
            "over_capacity": self.over_capacity,
            "seconds": round(self.seconds, 3),
        }


OnMove = Callable[[Move], None]
OnProgress = Callable[[str, str, int], None]  # namespace, rule, memories moved so far


@dataclass
class _Visit:
    """The pass's visit of one namespace: where what it moves is counted and reported."""

    conn: Connection
    ns: str
    now: datetime
    dry_run: bool
    report: LifecycleReport
    on_move: OnMove | None
    on_progress: OnProgress | None

    def emit(self, row: dict[str, Any], action: str, rule: str, reason: str) -> None:
        self.report.counts[rule] += 1
        if self.on_move is not None:
            self.on_move(Move(self.ns, row["id"], row["key"], action, rule, reason))


def _scopes(life: LifecyclePolicy) -> list[rules_store.Scope]:
    """The namespace's retention, then each tag's and memory type's over it."""
    day = 86_400.0
    base = rules_store.Scope(
        cold_s=(life.cold_after_days or 0) * day,
        archive_s=(life.archive_after_days or 0) * day,
        archive_imp=1.0 if life.archive_below_importance is None else life.archive_below_importance,
        del_imp=life.delete_below_importance or 0.0,
        del_s=(life.delete_after_days or 0) * day,
    )

    def over(kind: str, name: str, own: Retention) -> rules_store.Scope:
        def days(value: float | None, default: float) -> float:
            return value * day if value else default

        def level(value: float | None, default: float) -> float:
            return default if value is None else value

        return rules_store.Scope(
            kind=kind,
            name=name,
            cold_s=days(own.cold_after_days, base.cold_s),
            archive_s=days(own.archive_after_days, base.archive_s),
            archive_imp=level(own.archive_below_importance, base.archive_imp),
            del_imp=level(own.delete_below_importance, base.del_imp),
            del_s=days(own.delete_after_days, base.del_s),
        )

    return [
        base,
        *(over("tag", tag, own) for tag, own in (life.by_tag or {}).items()),
        *(over("memory_type", t, own) for t, own in (life.by_type or {}).items()),
    ]


def _params(settings: Settings, policy: Policy, namespace: str, now: datetime) -> dict[str, Any]:
    life, ranking = policy.lifecycle, policy.ranking
    assert life is not None and ranking is not None
    day = 86_400.0
    return {
        "ns": namespace,
        "now": now,
        **rules_store.scope_params(_scopes(life)),
        "low_conf": life.low_confidence_below or 0.0,
        "low_conf_s": (life.low_confidence_every_days or 0) * day,
        "batch": settings.lifecycle_batch_size,
        "alpha": settings.access_alpha,
        "tau_s": (ranking.recency_tau_days or 30) * day,
    }


class LifecycleService:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        policies: PolicyService,
        reads: ReadRouter | None = None,
        reflection: Reflection | None = None,
    ) -> None:
        self._settings = settings
        self._reflection = reflection
        self._pool = pool
        self._policies = policies
        self._reads = reads or ReadRouter(pool, pool)

    async def run(
        self,
        *,
        now: datetime | None = None,
        namespace: str | None = None,
        dry_run: bool = False,
        on_move: OnMove | None = None,
        on_progress: OnProgress | None = None,
        due_after_seconds: float | None = None,
    ) -> LifecycleReport:
        """One pass over `namespace` (default: every namespace). With `due_after_seconds`,
        only if no pass has finished within that long (the periodic caller)."""
        now = now or datetime.now(UTC)
        report = LifecycleReport(dry_run=dry_run, now=now)
        started = time.perf_counter()
        async with self._pool.connection() as conn:
            if not await maintenance_store.try_lock(conn, store.LIFECYCLE_LOCK):
                return report  # another replica is at it
            try:
                if due_after_seconds is not None and not await self._due(
                    conn, now, due_after_seconds
                ):
                    return report
                report.ran = True
                names = [namespace] if namespace else await store.namespaces(conn)
                for ns in names:
                    visit = _Visit(conn, ns, now, dry_run, report, on_move, on_progress)
                    await self._tracked(visit)
                    report.namespaces += 1
                if namespace is None and not dry_run:
                    await store.set_last_run(conn, now)
            finally:
                await maintenance_store.unlock(conn, store.LIFECYCLE_LOCK)
                report.seconds = time.perf_counter() - started
        return report

    async def _due(self, conn: Connection, now: datetime, interval: float) -> bool:
        last = await store.last_run(conn)
        return last is None or now - last >= timedelta(seconds=interval)

    async def _tracked(self, visit: _Visit) -> None:
        """The pass over `visit.ns`; when it moved memories (by a rule, a demotion, a merge
        or the cap), this process's reads of it go to the primary until a read replica has
        them."""
        moved = visit.report.counts.total()
        try:
            await self._namespace(visit)
        except BaseException:
            if not visit.dry_run:
                self._reads.wrote(visit.ns)  # a batch's commit may have landed before the failure
            raise
        if not visit.dry_run and visit.report.counts.total() > moved:
            self._reads.wrote(visit.ns)

    async def _namespace(self, visit: _Visit) -> None:
        policy = await self._policies.get(visit.ns)
        life, capacity = policy.lifecycle, policy.capacity
        assert life is not None and capacity is not None
        params = _params(self._settings, policy, visit.ns, visit.now)
        state = await store.state(visit.conn, visit.ns)
        last_low = state["low_confidence_pass_at"] if state else None
        low_due = last_low is None or visit.now - last_low >= timedelta(
            seconds=params["low_conf_s"]
        )
        await self._rules(visit, rules_store.rules(params, low_confidence_due=low_due), params)
        if not visit.dry_run:
            await self._demote(
                visit,
                life.session_demotion_delay_seconds or 0,
                life.session_demotion_factor or 0.0,
            )
        await self._merge(visit, life.merge_per_run or 0)
        if self._reflection is not None:
            await self._reflection.run(
                visit.conn,
                visit.ns,
                policy,
                now=visit.now,
                dry_run=visit.dry_run,
                actor=ACTOR,
                emit=lambda move: self._moved(visit, move),
            )
        cap = capacity.max_active_memories or self._settings.namespace_capacity
        active, archived = await self._capacity(visit, cap, params)
        if not visit.dry_run:
            async with visit.conn.transaction():
                await store.save_state(
                    visit.conn,
                    visit.ns,
                    last_pass_at=visit.now,
                    low_confidence_pass_at=visit.now if low_due else last_low,
                    active_count=active,
                    capacity=cap,
                    capacity_archived=archived,
                )

    async def _rules(
        self, visit: _Visit, rules: list[rules_store.Rule], params: dict[str, Any]
    ) -> None:
        """Each rule in turn, batch by batch in id order, until it selects nothing more."""
        for i, rule in enumerate(rules):
            after = uuid.UUID(int=0)
            done = 0
            while True:
                rows, moved = await self._batch(visit, rules, i, params, after)
                if not rows:
                    break
                after = rows[-1]["id"]
                for r in moved:
                    visit.emit(r, rule.action, rule.name, rule.reason)
                done += len(moved)
                if visit.on_progress is not None:
                    visit.on_progress(visit.ns, rule.name, done)
                if len(rows) < self._settings.lifecycle_batch_size:
                    break

    async def _batch(
        self,
        visit: _Visit,
        rules: list[rules_store.Rule],
        i: int,
        params: dict[str, Any],
        after: uuid.UUID,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Rule `i`'s next batch after the id `after`: the memories it selected, and those
        it moved (on a dry run, all it selected)."""
        conn, rule = visit.conn, rules[i]
        async with conn.transaction():
            rows = await rules_store.candidates(conn, rules, i, params, after)
            if visit.dry_run or not rows:
                return rows, rows
            if rule.action != "cold":
                ids = [r["id"] for r in rows]
                return rows, await rules_store.apply(conn, rules, i, params, ids, actor=ACTOR)
        # cooling is the one move here that can stay on the row's page (HOT: no index
        # entry written); archiving changes `live`, deleting writes no new version
        moved: list[dict[str, Any]] = []
        for ids in rules_store.page_rounds(rows):
            async with conn.transaction():
                moved += await rules_store.apply(conn, rules, i, params, ids, actor=ACTOR)
        return rows, sorted(moved, key=lambda r: r["id"])

    async def _demote(self, visit: _Visit, delay: int, factor: float) -> None:
        before = visit.now - timedelta(seconds=delay)
        while True:
            async with visit.conn.transaction():
                due = await moves_store.due_demotions(visit.conn, visit.ns, before, 100)
                for session in due:
                    reason = f"session {session['session_id']} ended"
                    for r in await moves_store.demote_session(
                        visit.conn, visit.ns, session["session_id"], factor, actor=ACTOR
                    ):
                        visit.emit(r, "demote", "session_demotion", reason)
            if len(due) < 100:
                return

    async def _merge(self, visit: _Visit, per_run: int) -> None:
        if not per_run:
            return
        for move in await merge_near_duplicates(
            visit.conn,
            visit.ns,
            self._settings.dedup_threshold,
            per_run,
            actor=ACTOR,
            dry_run=visit.dry_run,
        ):
            self._moved(visit, move)

    @staticmethod
    def _moved(visit: _Visit, move: Move) -> None:
        visit.report.counts[move.action] += 1
        if visit.on_move is not None:
            visit.on_move(move)

    async def _capacity(self, visit: _Visit, cap: int, params: dict[str, Any]) -> tuple[int, int]:
        """Archive the lowest-value memories down to the cap (a dry run lists one batch of
        them): the active memories counted, and how many were archived."""
        active = await store.count_active(visit.conn, visit.ns, visit.now)
        if active <= cap:
            return active, 0
        visit.report.over_capacity[visit.ns] = active
        reason = f"over capacity: {active} active memories, cap {cap}; lowest value first"
        archived = 0
        excess = active - cap
        while excess > 0:
            n = min(self._settings.lifecycle_batch_size, excess)
            async with visit.conn.transaction():
                rows = (
                    await moves_store.lowest_value(visit.conn, visit.ns, n, params)
                    if visit.dry_run
                    else await moves_store.archive_lowest_value(
                        visit.conn, visit.ns, n, params, actor=ACTOR, reason=reason
                    )
                )
            for r in rows:
                visit.emit(r, "archived", "capacity", reason)
            archived += len(rows)
            excess -= len(rows)
            if not rows or visit.dry_run:
                break
        return active, archived

    async def capacity_warnings(self) -> list[dict[str, Any]]:
        """Namespaces the last pass found over their soft cap (for /readyz)."""
        async with self._pool.connection() as conn:
            return await store.over_capacity(conn)

    async def stats(self, namespace: str) -> dict[str, Any]:
        """Memories per tier, the capacity and whether the namespace is over it."""
        policy = await self._policies.get(namespace)
        assert policy.capacity is not None
        cap = policy.capacity.max_active_memories or self._settings.namespace_capacity
        async with self._pool.connection() as conn:
            counts = await store.tier_counts(conn, namespace)
            state = await store.state(conn, namespace)
        active = counts.get("active", 0)
        warnings = []
        if active > cap:
            warnings.append(
                f"{active} active memories, over the capacity of {cap}: the next lifecycle "
                "pass archives the lowest-value ones down to it"
            )
        return {
            "namespace": namespace,
            "memories": {s: counts.get(s, 0) for s in ("active", "cold", "archived", "expired")},
            "capacity": cap,
            "over_capacity": active > cap,
            "warnings": warnings,
            "last_lifecycle_pass": state["last_pass_at"] if state else None,
            "last_capacity_archived": state["capacity_archived"] if state else 0,
        }
