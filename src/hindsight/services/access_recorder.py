"""Keeps access counts and the recall log off recall's critical path without losing them.

Recall hands its results here and answers at once. A background task writes everything
gathered so far every `interval` (one UPDATE for all counts, one INSERT for all log
entries), with `synchronous_commit = off`: the commit does not wait for the disk, yet a
killed service loses nothing it has flushed — only a crash of PostgreSQL itself could drop
the last few hundred milliseconds. On shutdown everything pending is written before exit.

While PostgreSQL is unreachable the pending data waits, within a bound (the oldest log
entries, and counts for memories not yet pending, are dropped beyond it, with a log line).
A batch the database refuses is split until the entry it refuses is found; that one is
dropped with a log line, so it cannot hold back everything recorded after it.

The specificities recall computed are written here too, in their own transaction after
the rest: they are a cache (stores.search), so a batch that fails is dropped and the next
recall of those memories computes them again.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Collection
from datetime import datetime

import psycopg
from psycopg_pool import AsyncConnectionPool

from hindsight.background import BackgroundLoop
from hindsight.db.pool import Connection
from hindsight.stores import (
    lifecycle_moves,
    memories as memory_store,
    recall_log,
    specificity as specificity_store,
)
from hindsight.stores.recall_log import RecallEntry
from hindsight.stores.specificity import Specificities

log = logging.getLogger(__name__)

MAX_PENDING_ENTRIES = 10_000
MAX_PENDING_COUNTS = 100_000
MAX_PENDING_SPECIFICITIES = 100_000

# by (namespace, memory id): the access table's key leads with the namespace; the count,
# the latest access, and whether a recall found the memory cold
_Counts = dict[tuple[str, uuid.UUID], tuple[int, datetime, bool]]
# errors that say nothing about the data: wait and write the same batch again
_TRANSIENT = (psycopg.OperationalError, OSError)


class AccessRecorder(BackgroundLoop):
    def __init__(
        self,
        pool: AsyncConnectionPool[Connection],
        *,
        interval: float,
        max_entries: int = MAX_PENDING_ENTRIES,
        max_counts: int = MAX_PENDING_COUNTS,
    ) -> None:
        super().__init__("hindsight-access-recorder", self._run)
        self._pool = pool
        self._interval = interval
        self._max_entries = max_entries
        self._max_counts = max_counts
        self._counts: _Counts = {}
        self._entries: deque[RecallEntry] = deque()
        # entries taken for a write that has not committed yet: still pending to a reader
        self._writing: list[RecallEntry] = []
        self._specificities: Specificities = {}
        self._dropped_entries = 0
        self._dropped_counts = 0
        self._wake = asyncio.Event()
        self._closing = False
        self._flush_lock = asyncio.Lock()

    def record(self, entry: RecallEntry, cold: Collection[uuid.UUID] = ()) -> None:
        """`cold`: the results that were cold when recalled, to become active again. Only
        those are moved: the move is a statement (and its attribution) of its own, which
        nearly every flush can then skip."""
        self._merge_counts(
            {(entry.namespace, i): (1, entry.created_at, i in cold) for i in entry.result_ids}
        )
        self._entries.append(entry)
        self._trim()
        self._wake.set()

    def keep_specificities(self, found: Specificities) -> None:
        """Specificities recall computed, for the next recall of those memories to read."""
        for key, value in found.items():
            if len(self._specificities) >= MAX_PENDING_SPECIFICITIES:
                break  # a cache: the next recall computes the rest again
            self._specificities[key] = value
        self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._entries)

    async def recalled(
        self,
        conn: Connection,
        namespace: str,
        actor: str,
        memory_ids: Collection[uuid.UUID],
        since: datetime,
    ) -> set[uuid.UUID]:
        """Which of these memories a recall by `actor` returned since then: the entries
        still pending here, and the log. (Another worker's pending entries are not seen;
        they reach the log within `interval`.)"""
        wanted = set(memory_ids)
        found = {
            i
            for e in (*self._writing, *self._entries)
            if e.namespace == namespace and e.actor == actor and e.created_at >= since
            for i in e.result_ids
            if i in wanted
        }
        return found | await recall_log.recalled(conn, namespace, actor, wanted - found, since)

    def _merge_counts(self, counts: _Counts) -> None:
        for memory_id, (n, at, cold) in counts.items():
            known = self._counts.get(memory_id)
            if known is None and len(self._counts) >= self._max_counts:
                self._dropped_counts += 1
                continue
            m, later, was_cold = known or (0, at, False)
            self._counts[memory_id] = (n + m, max(at, later), cold or was_cold)

    def _trim(self) -> None:
        while len(self._entries) > self._max_entries:
            self._entries.popleft()
            self._dropped_entries += 1

    def _report_drops(self) -> None:
        if self._dropped_entries or self._dropped_counts:
            log.warning(
                "access recorder over its bound while PostgreSQL lagged: dropped %d recall "
                "log entries (oldest first) and the counts of %d memories",
                self._dropped_entries,
                self._dropped_counts,
            )
            self._dropped_entries = self._dropped_counts = 0

    async def _run(self) -> None:
        while not self._closing:
            await self._wake.wait()
            await asyncio.sleep(self._interval)  # gather what else arrives meanwhile
            self._wake.clear()
            try:
                await self.flush()
            except Exception:  # unreachable: keep the data and try again on the next tick
                log.exception("writing access counts failed; will retry")
                await asyncio.sleep(min(5.0, self._interval * 20))
                self._wake.set()
            self._report_drops()

    async def flush(self) -> None:
        async with self._flush_lock:
            if not self._entries and not self._counts and not self._specificities:
                return
            counts, entries = self._counts, list(self._entries)
            self._counts, self._entries, self._writing = {}, deque(), entries
            # each part is a batch to write; a refused one is split in two
            todo: list[tuple[_Counts, list[RecallEntry]]] = (
                [(counts, entries)] if counts or entries else []  # else only specificities
            )
            while todo:
                part_counts, part_entries = todo.pop()
                try:
                    await self._write(part_counts, part_entries)
                except _TRANSIENT:
                    self._put_back([(part_counts, part_entries), *todo])
                    raise
                except Exception as exc:
                    if len(part_counts) + len(part_entries) <= 1:
                        self._drop(part_counts, part_entries, exc)
                    else:
                        todo.extend(reversed(_halves(part_counts, part_entries)))
                except BaseException:
                    self._put_back([(part_counts, part_entries), *todo])
                    raise
            self._writing = []
            self._report_drops()
            await self._write_specificities()

    async def _write_specificities(self) -> None:
        found, self._specificities = self._specificities, {}
        if not found:
            return
        try:
            async with self._pool.connection() as conn, conn.transaction():
                await recall_log.relax_commit(conn)
                await specificity_store.remember(conn, found)
        except Exception as exc:
            log.warning("not kept: %d specificities (%s)", len(found), type(exc).__name__)

    async def _write(self, counts: _Counts, entries: list[RecallEntry]) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            await recall_log.relax_commit(conn)
            if counts:
                await memory_store.record_access(
                    conn, {key: (n, at) for key, (n, at, _) in counts.items()}
                )
                cold = [key for key, (_, _, was_cold) in counts.items() if was_cold]
                if cold:
                    await lifecycle_moves.warm(conn, cold)  # recalled: not cold
            if entries:
                await recall_log.insert_many(conn, entries)

    def _put_back(self, parts: list[tuple[_Counts, list[RecallEntry]]]) -> None:
        """Return unwritten parts, merged with anything recorded meanwhile (older first)."""
        for part_counts, _ in parts:
            self._merge_counts(part_counts)
        unwritten = sorted((e for _, es in parts for e in es), key=lambda e: e.created_at)
        self._entries.extendleft(reversed(unwritten))
        self._trim()

    @staticmethod
    def _drop(counts: _Counts, entries: list[RecallEntry], exc: BaseException) -> None:
        what = (
            f"recall log entry {entries[0].id} (namespace {entries[0].namespace!r})"
            if entries
            else f"access count of memory {next(iter(counts))}"
        )
        log.error("dropped the %s: the database refuses it (%s)", what, type(exc).__name__)

    async def aclose(self) -> None:
        self._closing = True
        await super().aclose()
        for attempt in range(3):
            try:
                await self.flush()
                return
            except Exception:
                log.exception("final flush of access counts failed (attempt %d)", attempt + 1)
                await asyncio.sleep(0.5)
        log.error(
            "lost %d recall log entries and access counts for %d memories at shutdown",
            len(self._entries),
            len(self._counts),
        )


def _halves(counts: _Counts, entries: list[RecallEntry]) -> list[tuple[_Counts, list[RecallEntry]]]:
    """Two smaller batches: the counts apart from the entries first, then each in halves."""
    if counts and entries:
        return [(counts, []), ({}, entries)]
    if counts:
        items = list(counts.items())
        mid = len(items) // 2
        return [(dict(items[:mid]), []), (dict(items[mid:]), [])]
    mid = len(entries) // 2
    return [({}, entries[:mid]), ({}, entries[mid:])]
