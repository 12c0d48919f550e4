"""Bulk import: many memories at COPY speed (`hindsight import`).

Rows whose (namespace, key) is new are staged with binary COPY, thousands per statement,
and merged into long_term_memory in the same transaction, so the history and
keyword-statistics triggers run once per chunk and a key another client writes meanwhile
is not an error: it joins the rest. Everything else — a key that already exists, or a key
the input names again later — goes through the ordinary observe path afterwards, in input
order, so reinforcement and supersession mean exactly what they mean anywhere else.

A re-run is idempotent. An import is identified by a hash of its lines (and default
namespace); every line written is recorded in the transaction that writes it, so running
the same input again after a failure writes only what is missing (nothing is reinforced
twice), and running it again after it finished does nothing.

For a large load into a table that is small next to it, the HNSW indexes are dropped first
and built once at the end, which is several times faster than keeping them up to date row
by row (measured in benchmarks/), and concurrently, so writes go on meanwhile. Recall still
answers by exact search. An import killed in between leaves them dropped: the service
notices and builds them (services/search_indexes.py). An advisory lock keeps one import or
index build at a time.
Near-duplicate merging does not apply to imports: they are for data known to be distinct.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import psycopg
from pgvector import HalfVector
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.ids import uuid7
from hindsight.retrieval.keywords import document_vector
from hindsight.services.names import check_namespace
from hindsight.services.observe import Observer
from hindsight.services.observing import Observation, Outcome, normalise_tags, observation_from
from hindsight.services.redaction import scrubber
from hindsight.services.roles import Role
from hindsight.services.search_indexes import build_missing
from hindsight.stores import (
    imports as store,
    maintenance as maintenance_store,
    search_indexes as index_store,
)
from hindsight.stores.reads import ReadRouter
from hindsight.text import memory_text

CHUNK = 5_000
# Rebuild the search indexes when the import at least doubles the table.
REBUILD_RATIO = 1.0


@dataclass(frozen=True)
class ImportItem:
    namespace: str
    observation: Observation
    line: int = 0  # set by the importer: its 1-based position, what a re-run knows it by


@dataclass
class ImportReport:
    copied: int = 0
    observed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    indexes_rebuilt: bool = False
    already_written: int = 0  # lines an earlier run of the same input wrote
    finished_before: str | None = None  # set when an earlier run finished this input


class ImportId:
    """A hash of an input's lines and default namespace, fed line by line."""

    def __init__(self, default_namespace: str | None) -> None:
        self._hash = hashlib.sha256((default_namespace or "").encode() + b"\n")

    def add(self, number: int, line: str) -> None:
        self._hash.update(f"{number}\t{line.rstrip()}\n".encode())

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def chunks(items: Iterable[ImportItem], size: int) -> Iterator[list[ImportItem]]:
    batch: list[ImportItem] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class BulkImporter:
    def __init__(
        self,
        settings: Settings,
        pool: AsyncConnectionPool[Connection],
        embedder: Embedder,
        observer: Observer,
        reads: ReadRouter | None = None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._embedder = embedder
        self._observer = observer
        self._reads = reads or ReadRouter(pool, pool)

    async def _copy(self, import_id: str, items: list[ImportItem], actor: str) -> set[int]:
        """Stage and merge one chunk in one transaction; the lines written (the others'
        keys became active meanwhile)."""
        texts = [memory_text(i.observation.key, i.observation.value) for i in items]
        vectors = await self._embedder.embed(texts)
        initial = Decimal(str(self._settings.initial_confidence))
        async with self._pool.connection() as conn, conn.transaction():
            await store.set_actor(conn, actor)
            await store.stage(conn)
            async with conn.cursor().copy(store.STAGE_COPY) as copy:
                copy.set_types(store.STAGE_TYPES)
                for item, text, vector in zip(items, texts, vectors, strict=True):
                    o = item.observation
                    keywords, terms = document_vector(text)
                    confidence = initial if o.confidence is None else Decimal(str(o.confidence))
                    await copy.write_row(
                        (
                            uuid7(),
                            item.namespace,
                            o.key,
                            o.value,
                            o.memory_type,
                            HalfVector(vector),
                            keywords,
                            terms,
                            confidence,
                            o.importance,
                            o.source,
                            normalise_tags(o.tags),
                            Jsonb(dict(o.metadata)),
                            o.verified,
                            o.permanent,
                            actor,
                            o.occurred_at,
                            item.line,
                        )
                    )
            copied = await store.merge(conn, import_id)
        # the COPY skips the Writer, which does this for the observed lines
        for namespace in {i.namespace for i in items}:
            self._reads.wrote(namespace)
        return copied

    async def _scrubbed(self, item: ImportItem) -> ImportItem:
        """Secrets redacted (or refused) as in any other write: COPY skips the observe path."""
        o = item.observation
        scrub = await scrubber(self._observer.policies, item.namespace)
        (cleaned,), _ = scrub.observations([o])
        return item if cleaned == o else replace(item, observation=cleaned)

    async def run(
        self,
        items: Iterable[ImportItem],
        *,
        total: int,
        import_id: str,
        actor: str = "import",
        rebuild_indexes: bool | None = None,
        progress: Callable[[int], None] = lambda n: None,
    ) -> ImportReport:
        report = ImportReport()
        # one import or index build at a time, held until the indexes are back; on a
        # connection of its own, so the pool keeps all of its connections for the work
        conninfo = self._pool.conninfo
        assert isinstance(conninfo, str)  # open_pool gives a URL
        async with await psycopg.AsyncConnection.connect(
            conninfo, autocommit=True, row_factory=dict_row
        ) as lock_conn:
            await index_store.lock(lock_conn)
            try:
                await self._run(items, total, import_id, actor, rebuild_indexes, progress, report)
            finally:
                await index_store.unlock(lock_conn)
        return report

    async def _run(
        self,
        items: Iterable[ImportItem],
        total: int,
        import_id: str,
        actor: str,
        rebuild_indexes: bool | None,
        progress: Callable[[int], None],
        report: ImportReport,
    ) -> None:
        async with self._pool.connection() as conn:
            earlier = await store.begin(conn, import_id, total)
            if earlier["finished_at"] is not None:
                report.finished_before = earlier["finished_at"].isoformat()
                report.already_written = total
                return
            if rebuild_indexes is None:
                rows = await index_store.table_rows(conn)
                rebuild_indexes = total >= 10_000 and total >= REBUILD_RATIO * rows
            if rebuild_indexes:
                for name in await index_store.present(conn):
                    await index_store.drop(conn, name)
                report.indexes_rebuilt = True
        later: list[ImportItem] = []  # keys seen before: observed in order at the end
        seen: set[tuple[str, str]] = set()
        try:
            numbered = (i if i.line else replace(i, line=n) for n, i in enumerate(items, start=1))
            for batch in chunks(numbered, CHUNK):
                batch = [await self._scrubbed(i) for i in batch]
                async with self._pool.connection() as conn:
                    done = await store.written(conn, import_id, [i.line for i in batch])
                fresh: list[ImportItem] = []
                deferred = len(later)
                for item in batch:
                    key = (item.namespace, item.observation.key)
                    if item.line in done:
                        report.already_written += 1
                        seen.add(key)
                    elif key in seen:
                        later.append(item)
                    else:
                        seen.add(key)
                        fresh.append(item)
                if fresh:
                    copied = await self._copy(import_id, fresh, actor)
                    report.copied += len(copied)
                    # a key that is active already (or became so meanwhile) is observed
                    later.extend(i for i in fresh if i.line not in copied)
                progress(len(batch) - (len(later) - deferred))  # the rest count when observed
        finally:
            if rebuild_indexes:
                async with self._pool.connection() as conn:
                    await build_missing(
                        conn, self._embedder.dimensions, self._settings.index_build_memory_mb
                    )
        later.sort(key=lambda i: i.line)
        for namespace, group in _by_namespace(later):
            for part in chunks(group, 1000):
                lines = [i.line for i in part]

                async def record(
                    conn: Connection, _: list[Outcome], lines: list[int] = lines
                ) -> None:
                    await store.mark_written(conn, import_id, lines)

                outcomes = await self._observer.observe(
                    namespace,
                    [i.observation for i in part],
                    actor=actor,
                    # the operator's own tool, run with database access
                    role=Role.ADMIN,
                    dedup=False,
                    then=record,
                )
                report.observed += len(outcomes)
                for o in outcomes:
                    report.outcomes[o.outcome] = report.outcomes.get(o.outcome, 0) + 1
                progress(len(part))
        await self._merge_statistics()
        async with self._pool.connection() as conn:
            await store.finish(conn, import_id)

    async def _merge_statistics(self) -> None:
        """Each chunk left a document-frequency row per term it holds; merge them into one,
        as the maintenance pass would later. Until then every recall sums them (a common
        term's ~200 rows after 1M Zipf memories: DB CPU a recall 12.1 ms against 10.2-10.7
        merged), and the service's pass merges them in one ~20 s transaction beside its
        recalls (p50 22-24 ms meanwhile, 12 before and after; benchmarks/README item 44).
        Skipped while a maintenance pass holds its lock: that pass merges them. Before
        `finish`, so a re-run after a failure merges too."""
        async with self._pool.connection() as conn:
            if not await maintenance_store.try_lock(conn):
                return
            try:
                async with conn.transaction():
                    await maintenance_store.compact_keyword_stats(conn)
            finally:
                await maintenance_store.unlock(conn)


def _by_namespace(items: list[ImportItem]) -> Iterator[tuple[str, list[ImportItem]]]:
    """Consecutive runs of one namespace, keeping the input order inside each."""
    run: list[ImportItem] = []
    for item in items:
        if run and run[-1].namespace != item.namespace:
            yield run[0].namespace, run
            run = []
        run.append(item)
    if run:
        yield run[0].namespace, run


def parse_line(line: str, default_namespace: str | None, number: int) -> ImportItem:
    """One JSON line: a memory as in the batch call, with an optional `namespace`."""
    import json

    from pydantic import ValidationError

    from hindsight.errors import InvalidInput
    from hindsight.wire.errors import field_path
    from hindsight.wire.memories import MemoryIn

    try:
        data: dict[str, Any] = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {number}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"line {number}: expected a JSON object")
    namespace = data.pop("namespace", None) or default_namespace
    if not namespace:
        raise InvalidInput(f"line {number}: no namespace (give --namespace or a namespace field)")
    check_namespace(namespace)
    try:
        m = MemoryIn.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InvalidInput(f"line {number}: {field_path(first['loc'])}: {first['msg']}") from None
    return ImportItem(namespace, observation_from(m))
