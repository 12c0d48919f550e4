"""Bulk import: many memories at COPY speed (`hindsight import`).

Rows whose (namespace, key) is new go in with binary COPY, thousands per statement, so
the history and keyword-statistics triggers run once per chunk. Everything else — a key
that already exists, or a key the input names again later — goes through the ordinary
observe path afterwards, in input order, so reinforcement and supersession mean exactly
what they mean anywhere else.

For a large load into a table that is small next to it, the HNSW indexes are dropped first
and built once at the end, which is several times faster than keeping them up to date row
by row (measured in benchmarks/). Recall still answers meanwhile, by exact search.
Near-duplicate merging does not apply to imports: they are for data known to be distinct.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from pgvector import HalfVector
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from hindsight.config import Settings
from hindsight.db.pool import Connection
from hindsight.db.schema import SEARCH_INDEXES, index_build_session
from hindsight.embeddings.base import Embedder
from hindsight.ids import uuid7
from hindsight.retrieval.keywords import document_vector
from hindsight.services.memory import MemoryService, Observation, memory_text, normalise_tags
from hindsight.services.redaction import scrub_claims
from hindsight.services.roles import Role

CHUNK = 5_000
# Rebuild the search indexes when the import at least doubles the table.
REBUILD_RATIO = 1.0

_COPY = (
    "COPY long_term_memory (id, namespace, mem_key, mem_value, memory_type, embedding, "
    "keywords, keyword_terms, confidence, importance, source, tags, metadata, verified, "
    "permanent, changed_by) FROM STDIN WITH (FORMAT BINARY)"
)
_TYPES = [
    "uuid",
    "text",
    "text",
    "text",
    "text",
    "halfvec",
    "sparsevec",
    "int4[]",
    "numeric",
    "float8",
    "text",
    "text[]",
    "jsonb",
    "bool",
    "bool",
    "text",
]


@dataclass(frozen=True)
class ImportItem:
    namespace: str
    observation: Observation


@dataclass
class ImportReport:
    copied: int = 0
    observed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    indexes_rebuilt: bool = False


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
        memories: MemoryService,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._embedder = embedder
        self._memories = memories

    async def _table_size(self) -> int:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'long_term_memory'"
            )
            row = await cur.fetchone()
        return max(0, int(row["n"])) if row else 0

    async def _drop_indexes(self) -> None:
        async with self._pool.connection() as conn:
            for name in SEARCH_INDEXES:
                await conn.execute(f"DROP INDEX IF EXISTS {name}")

    async def _build_indexes(self) -> None:
        async with self._pool.connection() as conn:
            await conn.execute("ANALYZE long_term_memory")
            cur = await conn.execute(
                "SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'long_term_memory'"
            )
            rows = int((await cur.fetchone() or {"n": 0})["n"])
            cur = await conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'long_term_memory'"
            )
            present = {r["indexname"] for r in await cur.fetchall()}
            async with index_build_session(
                conn, rows, self._embedder.dimensions, self._settings.index_build_memory_mb
            ):
                for name, ddl in SEARCH_INDEXES.items():
                    if name not in present:
                        await conn.execute(ddl)

    async def _existing(self, items: list[ImportItem]) -> set[tuple[str, str]]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT m.namespace, m.mem_key FROM long_term_memory m "
                "JOIN unnest(%s::text[], %s::text[]) AS x(ns, key) "
                "ON m.namespace = x.ns AND m.mem_key = x.key WHERE m.status = 'active'",
                ([i.namespace for i in items], [i.observation.key for i in items]),
            )
            return {(r["namespace"], r["mem_key"]) for r in await cur.fetchall()}

    async def _copy(self, items: list[ImportItem], actor: str) -> None:
        texts = [memory_text(i.observation.key, i.observation.value) for i in items]
        vectors = await self._embedder.embed(texts)
        initial = Decimal(str(self._settings.initial_confidence))
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT set_config('hindsight.actor', %s, true)", (actor,))
            async with conn.cursor().copy(_COPY) as copy:
                copy.set_types(_TYPES)
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
                        )
                    )

    def _scrubbed(self, item: ImportItem) -> ImportItem:
        """Secrets redacted (or refused) as in any other write: COPY skips the observe path."""
        o = item.observation
        ((key, value),), _ = scrub_claims(self._settings, item.namespace, [(o.key, o.value)])
        if (key, value) == (o.key, o.value):
            return item
        return ImportItem(item.namespace, replace(o, key=key, value=value))

    async def run(
        self,
        items: Iterable[ImportItem],
        *,
        total: int,
        actor: str = "import",
        rebuild_indexes: bool | None = None,
        progress: Callable[[int], None] = lambda n: None,
    ) -> ImportReport:
        report = ImportReport()
        if rebuild_indexes is None:
            rebuild_indexes = total >= 10_000 and total >= REBUILD_RATIO * await self._table_size()
        if rebuild_indexes:
            await self._drop_indexes()
            report.indexes_rebuilt = True
        later: list[ImportItem] = []  # keys seen before: observed in order at the end
        seen: set[tuple[str, str]] = set()
        try:
            for batch in chunks(items, CHUNK):
                batch = [self._scrubbed(i) for i in batch]
                existing = await self._existing(batch)
                fresh: list[ImportItem] = []
                for item in batch:
                    key = (item.namespace, item.observation.key)
                    if key in seen or key in existing:
                        later.append(item)
                    else:
                        seen.add(key)
                        fresh.append(item)
                if fresh:
                    # One namespace's rows side by side: recall of a small namespace reads
                    # every row of it, and reads fewer pages when they share them.
                    fresh.sort(key=lambda i: i.namespace)
                    await self._copy(fresh, actor)
                    report.copied += len(fresh)
                progress(len(fresh))
        finally:
            if rebuild_indexes:
                await self._build_indexes()
        for namespace, group in _by_namespace(later):
            for part in chunks(group, 1000):
                outcomes = await self._memories.observe(
                    namespace,
                    [i.observation for i in part],
                    actor=actor,
                    # the operator's own tool, run with database access
                    role=Role.ADMIN,
                    dedup=False,
                )
                report.observed += len(outcomes)
                for o in outcomes:
                    report.outcomes[o.outcome] = report.outcomes.get(o.outcome, 0) + 1
                progress(len(part))
        return report


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

    from hindsight.api.deps import check_namespace
    from hindsight.api.errors import field_path
    from hindsight.api.schemas import MemoryIn
    from hindsight.errors import InvalidInput

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
    return ImportItem(namespace, m.observation())
