"""Hindsight's performance, side by side with the raw SQL it runs and with mem0.

    python -m benchmarks.perf                               # 10k and 100k memories, and mem0
    python -m benchmarks.perf --sizes 10000,100000,1000000 --spread 1000
    python -m benchmarks.perf --sizes 10000 --no-mem0        # quick

For each corpus (N memories in one namespace, or spread over `--spread` namespaces) it
loads the memories with the bulk import path, starts the service as production runs it
(uvicorn, embedded PostgreSQL tuned as `hindsight serve` tunes it, Redis with AOF), and
measures over HTTP with keep-alive clients:
- recall p50/p95/p99 at concurrency 1 and 16, with and without filters;
- the same two statements run directly against PostgreSQL (the raw SQL), and the ratio;
- batch ingest into the loaded table against raw INSERTs of the same rows, single observe
  (new key and reinforcement) latency, and the bulk import rate against COPY + index build;
- working-memory append and recent/context read latency;
- recall@10 against exact search of each arm and of the answers, with and without filters;
- the service's peak RSS;
and mem0 (mem0ai, pgvector store, infer=False, the same built-in embeddings, in-process)
add and search at the same corpus size. Embedding time is not what is measured: both use
the built-in embedder. Writes benchmarks/results/perf.md, perf.json and perf.png.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.servers import create_database, database_url, drop_database

from benchmarks.corpus import Corpus
from benchmarks.stack import Service, Stores, server_timing, service, stores
from hindsight import core
from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import query_terms, weighted_query_terms
from hindsight.retrieval.searched import combined, searched
from hindsight.services.bulk_import import BulkImporter, ImportItem
from hindsight.services.observing import Observation
from hindsight.services.recall import RecallRequest
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter
from hindsight.text.conversation import Turn

RESULTS = Path(__file__).resolve().parent / "results"
FILTERS: dict[str, dict[str, Any]] = {
    "none": {},
    "memory_types": {"memory_types": ["preference"]},
    "tags": {"tags": ["work"]},
    "min_confidence": {"min_confidence": 0.6},
}


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def summary(samples_s: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples_s]
    return {
        "n": len(ms),
        "p50": round(pct(ms, 50), 2),
        "p95": round(pct(ms, 95), 2),
        "p99": round(pct(ms, 99), 2),
        "mean": round(statistics.fmean(ms), 2),
    }


def corpus_items(n: int, spread: int, seed: int = 7) -> Iterator[ImportItem]:
    rng = random.Random(seed)
    for i, m in enumerate(Corpus(seed=seed).memories(n)):
        ns = "bench" if spread == 1 else f"ns{i % spread}"
        yield ImportItem(
            ns,
            Observation(
                key=str(m["key"]),
                value=str(m["value"]),
                memory_type=str(m["memory_type"]),
                tags=tuple(m["tags"]),  # type: ignore[arg-type]
                importance=float(m["importance"]),  # type: ignore[arg-type]
                confidence=round(rng.uniform(0.3, 0.9), 2),
            ),
        )


def namespaces(spread: int) -> list[str]:
    return ["bench"] if spread == 1 else [f"ns{i}" for i in range(spread)]


# --- HTTP load ---------------------------------------------------------------------------


def timed_calls(
    svc: Service,
    calls: list[Callable[[Any], Any]],
    concurrency: int,
    spans: list[dict[str, float]] | None = None,
) -> tuple[list[float], float]:
    """Latencies of `calls` spread over `concurrency` keep-alive clients (`LightClient`:
    the standard library's, so the client's own cost stays out of the numbers), and the
    throughput (calls/s). With `spans`, each response's Server-Timing goes there."""
    samples: list[float] = []
    lock = threading.Lock()
    chunks = [calls[i::concurrency] for i in range(concurrency)]

    def worker(mine: list[Callable[[Any], Any]]) -> None:
        local, timings = [], []
        with svc.light_client() as client:
            for call in mine:
                start = time.perf_counter()
                response = call(client)
                local.append(time.perf_counter() - start)
                if response.status_code >= 300:
                    raise RuntimeError(f"{response.status_code}: {response.text[:200]}")
                timings.append(server_timing(response.headers.get("server-timing")))
        with lock:
            samples.extend(local)
            if spans is not None:
                spans.extend(timings)

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(worker, chunks))
    return samples, len(calls) / (time.perf_counter() - start)


def recall_calls(
    queries: list[tuple[str, str]], body: dict[str, Any]
) -> list[Callable[[Any], Any]]:
    return [
        (
            lambda c, ns=ns, q=q: c.post(
                f"/v1/namespaces/{ns}/recall", json={"query": q, "k": 10, **body}
            )
        )
        for ns, q in queries
    ]


# --- in-process measurements -------------------------------------------------------------


def search_of(
    namespace: str, query: str, settings: Settings, flt: MemoryFilter
) -> search_store.Search:
    """Recall's statements' inputs, as the service builds them (built-in embedder)."""
    from pgvector import HalfVector

    terms, counts = query_terms(query)
    return search_store.Search(
        namespace,
        HalfVector(BuiltinEmbedder().embed_one(query)),
        terms,
        counts,
        flt,
        settings.recall_candidates,
        settings.exact_search_max_rows,
        settings.keyword_postings_budget,
    )


async def raw_recall(
    url: str, queries: list[tuple[str, str]], settings: Settings, flt: MemoryFilter
) -> list[float]:
    """The service's two recall statements, run directly (concurrently, as it runs them)."""
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 2}), url, search=True)
    searches = [search_of(ns, q, settings, flt) for ns, q in queries]

    async def arm(search: search_store.Search, which: str) -> None:
        async with pool.connection() as conn:
            await search_store.arm_candidates(conn, search, which)

    samples = []
    for search in searches:
        start = time.perf_counter()
        await asyncio.gather(arm(search, "vector"), arm(search, "keyword"))
        samples.append(time.perf_counter() - start)
    await pool.close()
    return samples


async def hnsw_quality(
    url: str,
    queries: list[tuple[str, str]],
    base: Settings,
    body: dict[str, Any],
    contexts: list[tuple[Turn, ...]] | None = None,
) -> dict[str, float]:
    """Mean recall@10 of the large-namespace path against exact search: for each arm on its
    own (the vector arm is the HNSW index; the keyword arm reads posting lists, and
    ANDs them when every term is common), and for the ranked answers a user sees.
    `contexts`: each query's earlier turns, searched as the service searches a
    conversation (its turns weighed, the vector their embeddings' weighted mean)."""
    flt = filter_of(body)
    embedder = BuiltinEmbedder()
    scores: dict[str, list[float]] = {"vector": [], "keyword": [], "answers": []}
    turns = contexts or [()] * len(queries)

    def overlap(got: list[Any], exact: list[Any], into: str) -> None:
        if exact:
            scores[into].append(len(set(got) & set(exact)) / len(exact))

    from pgvector import HalfVector

    pool = await open_pool(base, url, search=True)
    async with pool.connection() as conn:
        for (ns, q), context in zip(queries, turns, strict=True):
            search = searched(q, context, base.recall_conversation)
            terms, counts = weighted_query_terms(search.parts)
            vectors = [embedder.embed_one(text) for text, _ in search.parts]
            weights = [w for _, w in search.parts]
            vector = HalfVector(vectors[0] if len(vectors) == 1 else combined(vectors, weights))
            by_mode = {
                exact_max: search_store.Search(
                    ns,
                    vector,
                    terms,
                    counts,
                    flt,
                    10,
                    exact_max,
                    base.keyword_postings_budget,
                    keyword_of_memory=search.conversation,
                )
                for exact_max in (10**12, 0)
            }
            for arm in ("vector", "keyword"):
                exact, approx = [
                    [r["id"] for r in await search_store.arm_candidates(conn, search, arm)]
                    for search in by_mode.values()
                ]
                overlap(approx, exact, arm)
    await pool.close()
    answers: dict[str, list[list[Any]]] = {}
    for mode, exact_max in (("exact", 10**12), ("hnsw", 0)):
        settings = base.model_copy(update={"exact_search_max_rows": exact_max})
        hs = await core.start(settings, database_url=url, redis_url=None, background=False)
        try:
            answers[mode] = [
                [
                    h.row["id"]
                    for h in (
                        await hs.recall.rank(ns, RecallRequest(q, 10, flt, context=context))
                    ).results
                ]
                for (ns, q), context in zip(queries, turns, strict=True)
            ]
        finally:
            await hs.aclose()
    for approx, exact in zip(answers["hnsw"], answers["exact"], strict=True):
        overlap(approx, exact, "answers")
    return {k: round(statistics.fmean(v), 3) if v else float("nan") for k, v in scores.items()}


def filter_of(body: dict[str, Any]) -> MemoryFilter:
    return MemoryFilter(
        memory_types=tuple(body.get("memory_types", ())),
        tags=tuple(body.get("tags", ())),
        min_confidence=body.get("min_confidence"),
    )


async def load(
    url: str, n: int, spread: int, settings: Settings, *, raw: bool = True
) -> dict[str, float]:
    """Bulk import, timed; and for comparison (`raw`), raw COPY + index build of the same
    rows into a scratch copy of the table (up to 100k rows)."""
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
        start = time.perf_counter()
        await importer.run(
            corpus_items(n, spread),
            total=n,
            import_id=f"benchmark-{uuid.uuid4()}",
            rebuild_indexes=True,
        )
        import_rate = n / (time.perf_counter() - start)
        out = {"import_rate": round(import_rate)}
        if raw and n <= 100_000:
            out["raw_copy_build_rate"] = round(await raw_copy_build(hs, n, spread))
        await settle(hs)
        return out
    finally:
        await hs.aclose()


async def settle(hs: core.Hindsight) -> None:
    """Let the load's aftermath finish before anything is timed, as it would have long
    before a live service's next request: autovacuum's first pass over the new rows and a
    checkpoint writing out the pages the load dirtied (otherwise commits queue behind it)."""
    async with hs.pool.connection() as conn:
        await conn.execute("VACUUM (ANALYZE) long_term_memory")
        await conn.execute("CHECKPOINT")


async def raw_copy_build(hs: core.Hindsight, n: int, spread: int) -> float:
    """COPY of precomputed rows into an index-less copy of the table, then the same two
    HNSW builds: the physical limit the import is compared with. Embedding time included
    on both sides (the import embeds too), so the comparison is like for like."""
    from psycopg.types.json import Jsonb

    from hindsight.db.schema import SEARCH_INDEXES
    from hindsight.ids import uuid7
    from hindsight.retrieval.keywords import document_vector
    from hindsight.text import memory_text

    embedder = BuiltinEmbedder()
    async with hs.pool.connection() as conn:
        await conn.execute("DROP TABLE IF EXISTS raw_copy")
        await conn.execute("CREATE TABLE raw_copy (LIKE long_term_memory INCLUDING DEFAULTS)")
        start = time.perf_counter()
        async with conn.cursor().copy(
            "COPY raw_copy (id, namespace, mem_key, mem_value, memory_type, embedding, "
            "keywords, keyword_terms, confidence, tags, metadata) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(
                [
                    "uuid",
                    "text",
                    "text",
                    "text",
                    "text",
                    "halfvec",
                    "sparsevec",
                    "int4[]",
                    "numeric",
                    "text[]",
                    "jsonb",
                ]
            )
            from decimal import Decimal

            from pgvector import HalfVector

            for item in corpus_items(n, spread, seed=11):
                o = item.observation
                text = memory_text(o.key, o.value)
                keywords, terms = document_vector(text)
                await copy.write_row(
                    (
                        uuid7(),
                        item.namespace,
                        o.key,
                        o.value,
                        o.memory_type,
                        HalfVector(embedder.embed_one(text)),
                        keywords,
                        terms,
                        Decimal("0.5"),
                        list(o.tags),
                        Jsonb({}),
                    )
                )
        await conn.execute("SET maintenance_work_mem = '1GB'")
        await conn.execute("SET max_parallel_maintenance_workers = 2")
        for ddl in SEARCH_INDEXES.values():  # the posting lists too, on the copy's own terms
            for table in ("long_term_memory", "memory_keywords"):
                ddl = ddl.replace(f"ON {table}", "ON raw_copy").replace(
                    f"ix_{table}", "ix_raw_copy"
                )
            await conn.execute(ddl)
        rate = n / (time.perf_counter() - start)
        await conn.execute("DROP TABLE raw_copy")
    return rate


async def raw_insert_rate(url: str, settings: Settings, rows: int, batch: int) -> float:
    """Plain INSERTs of precomputed rows, `batch` per statement, into the loaded, indexed
    table (its triggers firing as for any write): what the batch call is compared with."""
    import dataclasses

    from psycopg.types.json import Jsonb

    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        items = list(corpus_items(rows, 1, seed=23))
        observations = [i.observation for i in items]
        claims = await hs.observer.claims(
            observations, [settings.initial_confidence] * len(observations)
        )
        run = uuid.uuid4().hex[:8]  # a kept corpus is written to again by later runs
        claims = [dataclasses.replace(c, key=f"raw.{run}." + c.key) for c in claims]
        sql = (
            "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type, "
            "embedding, keywords, keyword_terms, confidence, importance, tags, metadata) "
            "SELECT x.id, 'bench', x.k, x.v, x.t, x.e, x.s, x.terms::int[], x.c, x.i, "
            "x.tags::text[], x.m FROM unnest(%s::uuid[], %s::text[], %s::text[], %s::text[], "
            "%s::halfvec[], %s::sparsevec[], %s::text[], %s::numeric[], %s::float8[], "
            "%s::text[], %s::jsonb[]) AS x(id, k, v, t, e, s, terms, c, i, tags, m)"
        )

        def literal(values: list[Any]) -> str:
            return "{" + ",".join(f'"{v}"' if isinstance(v, str) else str(v) for v in values) + "}"

        start = time.perf_counter()
        for i in range(0, len(claims), batch):
            part = claims[i : i + batch]
            async with hs.pool.connection() as conn:
                await conn.execute(
                    sql,
                    (
                        [c.id for c in part],
                        [c.key for c in part],
                        [c.value for c in part],
                        [c.memory_type for c in part],
                        [c.embedding for c in part],
                        [c.keywords for c in part],
                        [literal(c.keyword_terms) for c in part],
                        [c.confidence for c in part],
                        [c.importance for c in part],
                        [literal(c.tags) for c in part],
                        [Jsonb(c.metadata) for c in part],
                    ),
                )
        return rows / (time.perf_counter() - start)
    finally:
        await hs.aclose()


# --- one corpus --------------------------------------------------------------------------


@dataclass
class Config:
    n: int
    spread: int

    @property
    def name(self) -> str:
        return f"{self.n:,}" + (f" in {self.spread:,} namespaces" if self.spread > 1 else "")


@dataclass
class Result:
    config: Config
    numbers: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def loaded(
    s: Stores, cfg: Config, settings: Settings, *, keep: bool
) -> Iterator[tuple[str, dict[str, float]]]:
    """A database holding the corpus, and its load numbers. Kept corpora are loaded once
    and reused by later runs with the same data dir, as the last run left them; the load
    numbers are those of the run that loaded it."""
    if not keep:
        with s.database() as url:
            print(f"[{cfg.name}] loading ...", flush=True)
            yield url, asyncio.run(load(url, cfg.n, cfg.spread, settings))
        return
    name = f"corpus_{cfg.n}_{cfg.spread}"
    record = s.root / f"{name}.json"
    if not record.exists():  # never loaded here, or a load that did not finish
        drop_database(s.server_url, name)
        url = create_database(s.server_url, name)
        print(f"[{cfg.name}] loading (kept in {s.root}) ...", flush=True)
        record.write_text(json.dumps(asyncio.run(load(url, cfg.n, cfg.spread, settings))))
    yield database_url(s.server_url, name), json.loads(record.read_text())


def run_config(s: Stores, cfg: Config, args: argparse.Namespace) -> Result:
    result = Result(cfg)
    base = Settings(api_key="x" * 20, data_dir=s.root)
    rng = random.Random(99)
    q_corpus = Corpus(seed=99)
    nss = namespaces(cfg.spread)
    queries = [(rng.choice(nss), q_corpus.query()) for _ in range(args.queries)]
    keep = args.keep is not None and cfg.n > args.write_max
    with loaded(s, cfg, base, keep=keep) as (url, load_numbers):
        result.numbers["load"] = load_numbers
        print(f"[{cfg.name}] {load_numbers}", flush=True)
        with service(url, s.redis_url, workers=args.workers) as svc:
            for call in recall_calls(queries[:50], {}):  # warm caches and statements
                with svc.client() as c:
                    call(c)
            recall: dict[str, Any] = {}
            for fname, body in FILTERS.items():
                # Once untimed first: otherwise, on a corpus larger than shared_buffers, only
                # the first of the three passes below would find the pages cold.
                timed_calls(svc, recall_calls(queries, body), 16)
                one, _ = timed_calls(svc, recall_calls(queries, body), 1)
                many, qps = timed_calls(svc, recall_calls(queries * 2, body), 16)
                raw = asyncio.run(raw_recall(url, queries, base, filter_of(body)))
                recall[fname] = {
                    "c1": summary(one),
                    "c16": summary(many),
                    "c16_qps": round(qps),
                    "raw": summary(raw),
                }
                recall[fname]["ratio_p50"] = round(
                    recall[fname]["c1"]["p50"] / recall[fname]["raw"]["p50"], 2
                )
                print(f"[{cfg.name}] recall {fname}: {recall[fname]}", flush=True)
            result.numbers["recall"] = recall
            if cfg.spread == 1 and cfg.n <= args.write_max:
                result.numbers["writes"] = writes(svc, url, base, args)
                print(f"[{cfg.name}] writes {result.numbers['writes']}", flush=True)
            if cfg.spread == 1:
                # exact search over a million rows takes a second a query: fewer there
                few = args.quality_queries if cfg.n <= 100_000 else args.quality_queries // 3
                quality = {
                    f: asyncio.run(hnsw_quality(url, queries[:few], base, b))
                    for f, b in FILTERS.items()
                }
                quality_queries = few
                result.numbers["quality"] = quality
                result.numbers["quality_queries"] = quality_queries
                print(f"[{cfg.name}] recall@10 against exact search {quality}", flush=True)
            result.numbers["peak_rss_mb"] = round(svc.peak_rss_mb(), 1)
    return result


def writes(svc: Service, url: str, base: Settings, args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(seed=31)
    fresh = [dict(m, key="new." + str(m["key"])) for m in corpus.memories(2000)]
    out: dict[str, Any] = {}
    with svc.client() as client:
        start = time.perf_counter()
        for i in range(0, len(fresh), 500):
            r = client.post(
                "/v1/namespaces/bench/memories:batch", json={"memories": fresh[i : i + 500]}
            )
            r.raise_for_status()
        out["batch_ingest_rate"] = round(len(fresh) / (time.perf_counter() - start))
    out["raw_insert_rate"] = round(asyncio.run(raw_insert_rate(url, base, 2000, 500)))
    out["ingest_vs_raw"] = round(out["batch_ingest_rate"] / out["raw_insert_rate"], 2)
    singles = [dict(m, key="single." + str(m["key"])) for m in corpus.memories(200)]
    new, _ = timed_calls(
        svc, [(lambda c, m=m: c.post("/v1/namespaces/bench/memories", json=m)) for m in singles], 1
    )
    again, _ = timed_calls(
        svc, [(lambda c, m=m: c.post("/v1/namespaces/bench/memories", json=m)) for m in singles], 1
    )
    out["observe_new"] = summary(new)
    out["observe_reinforce"] = summary(again)
    steps = [corpus.sentence() for _ in range(400)]
    append, _ = timed_calls(
        svc,
        [
            (
                lambda c, i=i, t=t: c.post(
                    f"/v1/namespaces/bench/sessions/s{i % 20}/steps", json={"content": t}
                )
            )
            for i, t in enumerate(steps)
        ],
        1,
    )
    recent, _ = timed_calls(
        svc,
        [
            (
                lambda c, i=i: c.get(
                    f"/v1/namespaces/bench/sessions/s{i % 20}/steps", params={"recent": 10}
                )
            )
            for i in range(400)
        ],
        1,
    )
    context, _ = timed_calls(
        svc,
        [
            (
                lambda c, i=i: c.get(
                    f"/v1/namespaces/bench/sessions/s{i % 20}/context", params={"recent": 5}
                )
            )
            for i in range(400)
        ],
        1,
    )
    out["wm_append"] = summary(append)
    out["wm_recent"] = summary(recent)
    out["wm_context"] = summary(context)
    return out


# --- mem0 --------------------------------------------------------------------------------


def run_mem0(s: Stores, n: int, queries: int) -> dict[str, Any]:
    """mem0 with its pgvector store on the same PostgreSQL, infer=False, and the same
    built-in embeddings computed in-process (so neither side pays for an embedding call)."""
    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import Memory
    from mem0.embeddings.base import EmbeddingBase

    class Builtin(EmbeddingBase):  # type: ignore[misc]
        def __init__(self) -> None:
            self.embedder = BuiltinEmbedder(384)

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return [float(x) for x in self.embedder.embed_one(text)]

    out: dict[str, Any] = {}
    with s.database(migrate_it=False) as url, tempfile.TemporaryDirectory() as tmp:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "pgvector",
                    "config": {
                        "connection_string": url,
                        "collection_name": "bench",
                        "embedding_model_dims": 384,
                        "hnsw": True,
                    },
                },
                "embedder": {
                    "provider": "openai",
                    "config": {"api_key": "unused", "embedding_dims": 384},
                },
                "llm": {"provider": "openai", "config": {"api_key": "unused"}},
                "history_db_path": str(Path(tmp) / "history.db"),
            }
        )
        memory.embedding_model = Builtin()
        adds = []
        for m in Corpus(seed=7).memories(n):
            start = time.perf_counter()
            memory.add(
                [{"role": "user", "content": f"{m['key']}: {m['value']}"}],
                user_id="bench",
                infer=False,
            )
            adds.append(time.perf_counter() - start)
        out["add"] = summary(adds)
        out["add_rate"] = round(n / sum(adds))
        q_corpus = Corpus(seed=99)
        qs = [q_corpus.query() for _ in range(queries)]
        for q in qs[:20]:
            memory.search(q, top_k=10, filters={"user_id": "bench"})
        searches = []
        for q in qs:
            start = time.perf_counter()
            memory.search(q, top_k=10, filters={"user_id": "bench"})
            searches.append(time.perf_counter() - start)
        out["search"] = summary(searches)
    return out


# --- report ------------------------------------------------------------------------------


TARGETS = """| target | bar |
| --- | --- |
| recall p50 / p99 at 100k | ≤ 5 ms / ≤ 20 ms |
| recall p50 at 1M | ≤ 15 ms |
| service / raw SQL (p50) | ≤ 1.5, never > 2.5 |
| batch ingest vs raw insert | ≥ 0.8 |
| working memory append, read p50 | ≤ 2 ms |
| HNSW recall@10 vs exact | ≥ 0.95 |
| vs mem0 search | ≥ 20× |
| server peak RSS | ≤ 250 MB |"""


def p50_p99(s: dict[str, float] | None) -> str:
    return f"{s['p50']} / {s['p99']}" if s else "—"


def report(results: list[Result], mem0: dict[int, dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        "# Performance",
        "",
        f"2 cores, PostgreSQL 18 + pgvector 0.8 (embedded, tuned), built-in embedder "
        f"(384-d), service with {args.workers} worker(s), keep-alive HTTP clients. "
        "Latencies in ms.",
        "",
        TARGETS,
        "",
        "## Recall",
        "",
        "| corpus | filter | c=1 p50 | p95 | p99 | raw SQL p50 | service/raw | "
        "c=16 p50 | p99 | c=16 recalls/s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for fname, x in r.numbers["recall"].items():
            lines.append(
                f"| {r.config.name} | {fname} | {x['c1']['p50']} | {x['c1']['p95']} | "
                f"{x['c1']['p99']} | {x['raw']['p50']} | {x['ratio_p50']} | "
                f"{x['c16']['p50']} | {x['c16']['p99']} | {x['c16_qps']} |"
            )
    lines += [
        "",
        "## Loading and writing",
        "",
        "| corpus | bulk import /s | raw COPY + index build /s | batch ingest /s | "
        "raw INSERT /s | ingest/raw | observe new p50 / p99 | observe reinforce p50 / p99 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        load, w = r.numbers["load"], r.numbers.get("writes", {})
        lines.append(
            f"| {r.config.name} | {load['import_rate']} | {load.get('raw_copy_build_rate', '—')} "
            f"| {w.get('batch_ingest_rate', '—')} | {w.get('raw_insert_rate', '—')} | "
            f"{w.get('ingest_vs_raw', '—')} | {p50_p99(w.get('observe_new'))} | "
            f"{p50_p99(w.get('observe_reinforce'))} |"
        )
    lines += [
        "",
        "## Working memory and server memory",
        "",
        "| corpus | append p50 / p99 | recent p50 / p99 | context p50 / p99 | peak RSS MB |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        w = r.numbers.get("writes", {})
        lines.append(
            f"| {r.config.name} | {p50_p99(w.get('wm_append'))} | "
            f"{p50_p99(w.get('wm_recent'))} | {p50_p99(w.get('wm_context'))} | "
            f"{r.numbers['peak_rss_mb']} |"
        )
    lines += [
        "",
        "## Approximate search against exact search (recall@10)",
        "",
        "Vector arm: the HNSW index. Keyword arm: posting lists of the rarest terms (ANDed",
        "when every term is common). Answers: the ranked top 10 a user sees.",
        "Namespaces under `exact_search_max_rows` are always searched exactly.",
        "",
        "| corpus | filter | vector arm | keyword arm | answers |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in results:
        for fname, q in r.numbers.get("quality", {}).items():
            lines.append(
                f"| {r.config.name} | {fname} | {q['vector']} | {q['keyword']} | {q['answers']} |"
            )
    if mem0:
        lines += [
            "",
            "## Against mem0 (same PostgreSQL, same embeddings, mem0 in-process)",
            "",
            "| corpus | mem0 search p50 | Hindsight recall p50 (HTTP) | speed-up | "
            "mem0 add p50 | mem0 adds/s | Hindsight batch ingest /s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for n, m in mem0.items():
            ours = next((r for r in results if r.config.n == n and r.config.spread == 1), None)
            p50 = ours.numbers["recall"]["none"]["c1"]["p50"] if ours else float("nan")
            ingest = ours.numbers.get("writes", {}).get("batch_ingest_rate", "—") if ours else "—"
            lines.append(
                f"| {n:,} | {m['search']['p50']} | {p50} | "
                f"{m['search']['p50'] / p50:.1f}× | {m['add']['p50']} | "
                f"{m['add_rate']} | {ingest} |"
            )
    return "\n".join(lines) + "\n"


def plot(results: list[Result], mem0: dict[int, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    single = sorted((r for r in results if r.config.spread == 1), key=lambda r: r.config.n)
    xs = [r.config.n for r in single]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (("p50", "recall p50"), ("p99", "recall p99")):
        ax.plot(xs, [r.numbers["recall"]["none"]["c1"][key] for r in single], "o-", label=label)
    ax.plot(
        xs, [r.numbers["recall"]["none"]["raw"]["p50"] for r in single], "s--", label="raw SQL p50"
    )
    spread = [r for r in results if r.config.spread > 1]
    if spread:
        ax.plot(
            [r.config.n for r in spread],
            [r.numbers["recall"]["none"]["c1"]["p50"] for r in spread],
            "^",
            label=f"recall p50, {spread[0].config.spread} namespaces",
        )
    if mem0:
        ax.plot(
            sorted(mem0),
            [mem0[n]["search"]["p50"] for n in sorted(mem0)],
            "x-",
            label="mem0 search p50",
        )
    ax.set_xscale("log")
    ax.set_xlabel("memories")
    ax.set_ylabel("ms (concurrency 1)")
    ax.set_title("Hindsight recall latency against corpus size")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument(
        "--spread", type=int, default=0, help="also load the largest size over this many namespaces"
    )
    parser.add_argument(
        "--spread-only", action="store_true", help="measure only the spread corpus (with --merge)"
    )
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--quality-queries", type=int, default=150)
    parser.add_argument("--workers", type=int, default=1, help="as HINDSIGHT_WORKERS")
    parser.add_argument(
        "--write-max", type=int, default=100_000, help="measure writes on corpora up to this size"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the stores in this directory, and with them the corpora larger than "
        "--write-max (loading a million memories takes about half an hour): later runs "
        "with the same directory reuse them",
    )
    parser.add_argument("--no-mem0", action="store_true")
    parser.add_argument("--mem0-sizes", default="10000,100000")
    parser.add_argument(
        "--from-json", action="store_true", help="only rewrite perf.md and perf.png from perf.json"
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="add to the results in perf.json (a corpus or mem0 size measured again replaces "
        "its old numbers); with --sizes '' only mem0 runs",
    )
    args = parser.parse_args()
    if args.from_json:
        print(rewrite_from_json(args))
        return
    # `kill` stops the run like Ctrl-C, so the embedded servers it started stop too
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sizes = [int(x) for x in args.sizes.split(",") if x]
    configs = [] if args.spread_only else [Config(n, 1) for n in sizes]
    if args.spread > 1 and sizes:
        configs.append(Config(max(sizes), args.spread))
    results, mem0, argv = load_results() if args.merge else ([], {}, [])
    argv = [*argv, "+", *sys.argv[1:]] if argv else sys.argv[1:]
    with stores(args.keep) as s:
        for cfg in configs:
            result = run_config(s, cfg, args)
            results = [r for r in results if r.config != cfg] + [result]
            results.sort(key=lambda r: (r.config.spread, r.config.n))
            write_results(results, mem0, args, argv)  # a long run keeps what it has measured
        if not args.no_mem0:
            for n in (int(x) for x in args.mem0_sizes.split(",") if x):
                print(f"[mem0 {n:,}] ...", flush=True)
                mem0[n] = run_mem0(s, n, min(args.queries, 200))
                print(f"[mem0 {n:,}] {mem0[n]}", flush=True)
                write_results(results, mem0, args, argv)
    print(write_results(results, mem0, args, argv))


def load_results() -> tuple[list[Result], dict[int, dict[str, Any]], list[str]]:
    saved = json.loads((RESULTS / "perf.json").read_text())
    results = []
    for entry in saved["results"]:
        numbers = {k: v for k, v in entry.items() if k not in ("corpus", "n", "spread")}
        results.append(Result(Config(entry["n"], entry["spread"]), numbers))
    mem0 = {int(n): m for n, m in saved["mem0"].items()}
    return results, mem0, saved["argv"]


def rewrite_from_json(args: argparse.Namespace) -> str:
    results, mem0, argv = load_results()
    args.workers = json.loads((RESULTS / "perf.json").read_text()).get("workers", args.workers)
    return write_results(results, mem0, args, argv)


def write_results(
    results: list[Result],
    mem0: dict[int, dict[str, Any]],
    args: argparse.Namespace,
    argv: list[str],
) -> str:
    RESULTS.mkdir(exist_ok=True)
    text = report(results, mem0, args)
    (RESULTS / "perf.md").write_text(text)
    (RESULTS / "perf.json").write_text(
        json.dumps(
            {
                "results": [
                    {"corpus": r.config.name, "n": r.config.n, "spread": r.config.spread}
                    | r.numbers
                    for r in results
                ],
                "mem0": mem0,
                "argv": argv,
                "workers": args.workers,
            },
            indent=2,
        )
    )
    plot(results, mem0, RESULTS / "perf.png")
    return text


if __name__ == "__main__":
    main()
