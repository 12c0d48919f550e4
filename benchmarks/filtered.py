"""Recall with a filter on one large namespace: before and after filters were narrowed.

    python -m benchmarks.filtered                                  # 100k, 150 queries a class
    python -m benchmarks.filtered --n 100000 --keep /var/tmp/hsf --queries 100

Loads N English sentences (`corpora.English`, a workload the recall statements were not
tuned on) through `hindsight import` into one namespace, each with labels of skewed
frequency: one of 60 tags by Zipf weight (a second one for 30% of them), a memory type
(fact 50% ... summary 1%), a confidence and an importance each between 0.3 and 0.9, and
for 80% an occurred_at somewhere in five years; the summaries were last observed in 2021,
the rest at the import. Then, for each class of filter, picks
memories the filter admits and asks for each by 3-7 of its own words, with that filter.

Each query runs recall's two statements at once, as the service runs them, in two ways,
interleaved query by query: the HNSW walk with the filter checked on the rows it meets
(the statements before narrowing, `stores.search.ARMS`) and the narrowed ones. Reported:
p50 and p99 ms, the share of the namespace the filter admits, how often the memory asked
for was among the candidates, and the vector arm's share of the exact top 10 of what the
filter admits (a sequential scan). Writes results/filtered.md and filtered.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from benchmarks import matrix
from benchmarks.corpora import English
from benchmarks.perf import search_of, summary
from benchmarks.stack import stores
from hindsight import core
from hindsight.config import Settings
from hindsight.db.pool import Connection, open_pool
from hindsight.services.bulk_import import BulkImporter, parse_line
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter, filter_sql
from hindsight.stores.narrowing import UNNARROWED

RESULTS = Path(__file__).resolve().parent / "results"
NAMESPACE = "bench"
TAGS = [f"tag{i}" for i in range(60)]
TYPES = {
    "fact": 50,
    "preference": 20,
    "experience": 15,
    "event": 8,
    "reflection": 4,
    "relation": 2,
    "summary": 1,
}
START = datetime(2020, 1, 1, tzinfo=UTC)
YEARS = 5
OBSERVED_YEAR = datetime(2021, 1, 1, tzinfo=UTC)


def labelled(n: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(23)
    # its own generator, so that the other labels are those the corpus always had
    importance = random.Random(29)
    tag_weights = [1 / (i + 1) for i in range(len(TAGS))]
    for memory in English().memories(n):
        tags = rng.choices(TAGS, weights=tag_weights)
        if rng.random() < 0.3:
            tags = sorted(set(tags + rng.choices(TAGS, weights=tag_weights)))
        out = {
            **memory,
            "namespace": NAMESPACE,
            "tags": tags,
            "memory_type": rng.choices(list(TYPES), weights=list(TYPES.values()))[0],
            "confidence": round(rng.uniform(0.3, 0.9), 3),
            "importance": round(importance.uniform(0.3, 0.9), 3),
        }
        if rng.random() < 0.8:
            out["occurred_at"] = (START + timedelta(days=rng.uniform(0, 365 * YEARS))).isoformat()
        yield out


async def load(url: str, n: int, settings: Settings) -> float:
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        items = [parse_line(json.dumps(m), None, i) for i, m in enumerate(labelled(n))]
        start = time.perf_counter()
        await BulkImporter(settings, hs.pool, hs.embedder, hs.observer).run(
            items, total=len(items), import_id=f"filtered-{uuid.uuid4()}"
        )
        rate = n / (time.perf_counter() - start)
    finally:
        await hs.aclose()
    # The summaries were last observed in 2021, as if reinforced then and not since: the
    # rest were all observed at the import. Not at the import itself, which sets it; and
    # not every memory, which would re-enter most rows into the HNSW graphs (the update is
    # HOT only where the page has room).
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE long_term_memory SET last_observed = %s + (hashtext(mem_key) & 255)"
            " * interval '1 day' WHERE namespace = %s AND memory_type = 'summary'",
            (OBSERVED_YEAR, NAMESPACE),
        )
    return rate


def _month(t: datetime) -> tuple[datetime, datetime]:
    start = t.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, (start + timedelta(days=32)).replace(day=1)


def _year(t: datetime) -> tuple[datetime, datetime]:
    start = t.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, start.replace(year=start.year + 1)


@dataclass(frozen=True)
class FilterClass:
    """A kind of filter: which memories to ask for, and the filter each is asked with."""

    name: str
    picks: str  # SQL condition on the memories asked for
    narrowed: bool  # whether narrowing applies to it at all

    def filter_for(self, row: dict[str, Any]) -> MemoryFilter:
        occurred = row["occurred_at"]
        if self.name == "tag 2% and its year":
            after, before = _year(occurred)
            return MemoryFilter(tags=("tag9",), occurred_after=after, occurred_before=before)
        if self.name == "occurred: its month":
            after, before = _month(occurred)
            return MemoryFilter(occurred_after=after, occurred_before=before)
        if self.name == "occurred: its year":
            after, before = _year(occurred)
            return MemoryFilter(occurred_after=after, occurred_before=before)
        if self.name.startswith("observed in 2021"):
            return MemoryFilter(
                observed_after=OBSERVED_YEAR, observed_before=OBSERVED_YEAR.replace(year=2022)
            )
        if self.name.startswith("min_confidence "):
            return MemoryFilter(min_confidence=float(self.name.split()[1]))
        if self.name.startswith("min_importance "):
            return MemoryFilter(min_importance=float(self.name.split()[1]))
        if self.name.startswith("tag "):
            return MemoryFilter(tags=(self.picks.split("'")[1],))
        if self.name.startswith("type "):
            return MemoryFilter(memory_types=(row["memory_type"],))
        return MemoryFilter()


CLASSES = [
    FilterClass("none", "true", False),
    FilterClass("tag ~0.4%", "'tag59' = ANY(tags)", True),
    FilterClass("tag ~2%", "'tag9' = ANY(tags)", True),
    FilterClass("tag ~25%", "'tag0' = ANY(tags)", True),
    FilterClass("type summary (1%)", "memory_type = 'summary'", True),
    FilterClass("type event (8%)", "memory_type = 'event'", True),
    FilterClass("occurred: its month", "occurred_at IS NOT NULL", True),
    FilterClass("occurred: its year", "occurred_at IS NOT NULL", True),
    FilterClass("tag 2% and its year", "'tag9' = ANY(tags) AND occurred_at IS NOT NULL", True),
    # counted through memory_confidence since migration 0036, memory_facets since 0038
    FilterClass("min_confidence 0.88", "confidence >= 0.88", True),
    FilterClass("min_confidence 0.895", "confidence >= 0.895", True),
    # counted through memory_facets since migration 0038
    FilterClass("min_importance 0.88", "importance >= 0.88", True),
    FilterClass("min_importance 0.895", "importance >= 0.895", True),
    # counted through memory_facets since migration 0038 (the summaries, see load())
    FilterClass("observed in 2021 (1%)", "memory_type = 'summary'", True),
]


def targets(url: str, cls: FilterClass, count: int) -> list[dict[str, Any]]:
    with psycopg.connect(url, row_factory=psycopg.rows.dict_row) as conn:
        conn.execute("SELECT setseed(0.42)")
        return conn.execute(
            f"SELECT id, mem_value, memory_type, occurred_at FROM long_term_memory "
            f"WHERE namespace = %s AND live AND {cls.picks} ORDER BY random() LIMIT %s",
            (NAMESPACE, count),
        ).fetchall()


def words_of(value: str, rng: random.Random) -> str:
    words = [w.strip(".,;:()'\"`") for w in value.split()]
    words = [w for w in words if len(w) > 3] or words
    return " ".join(rng.sample(words, min(len(words), rng.randint(3, 7))))


def statement(search: search_store.Search, arm: str, narrowed: bool) -> tuple[str, dict[str, Any]]:
    sql, params = search.statement(arm)
    if not narrowed:  # as before narrowing: the filter checked on what the walk meets
        filters = filter_sql(search.filter, params, "m")
        sql = search_store.filled(search_store.ARMS[arm], filters, UNNARROWED.index_gate)
    return sql, params


async def both_arms(
    conns: tuple[Connection, Connection], search: search_store.Search, narrowed: bool
) -> tuple[float, list[dict[str, Any]], list[dict[str, Any]]]:
    async def arm(conn: Connection, which: str) -> list[dict[str, Any]]:
        sql, params = statement(search, which, narrowed)
        cur = await conn.execute(sql, params, binary=True)
        return await cur.fetchall()

    start = time.perf_counter()
    by_vector, by_keyword = await asyncio.gather(arm(conns[0], "vector"), arm(conns[1], "keyword"))
    return time.perf_counter() - start, by_vector, by_keyword


async def exact_top10(conn: Connection, search: search_store.Search) -> list[uuid.UUID]:
    params: dict[str, Any] = {"ns": search.namespace, "q": search.query_vector}
    where = filter_sql(search.filter, params, "m")
    async with conn.transaction():
        await conn.execute("SET LOCAL enable_indexscan = off")
        await conn.execute("SET LOCAL enable_bitmapscan = off")
        cur = await conn.execute(
            f"SELECT m.id FROM long_term_memory m WHERE m.namespace = %(ns)s{where} "
            "ORDER BY m.embedding <=> %(q)s LIMIT 10",
            params,
        )
        return [r["id"] for r in await cur.fetchall()]


async def admitted_share(conn: Connection, f: MemoryFilter, total: int) -> float:
    params: dict[str, Any] = {"ns": NAMESPACE}
    cur = await conn.execute(
        f"SELECT count(*) AS n FROM long_term_memory m WHERE m.namespace = %(ns)s"
        f"{filter_sql(f, params, 'm')}",
        params,
    )
    row = await cur.fetchone()
    return (row["n"] if row else 0) / total


async def measure_class(
    url: str, settings: Settings, cls: FilterClass, count: int, total: int
) -> dict[str, Any]:
    rng = random.Random(zlib.crc32(cls.name.encode()))  # the same queries every run
    picked = targets(url, cls, count)
    searches = [
        (
            row["id"],
            search_of(NAMESPACE, words_of(row["mem_value"], rng), settings, cls.filter_for(row)),
        )
        for row in picked
    ]
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 2}), url, search=True)
    general = await open_pool(settings.model_copy(update={"db_pool_min": 1}), url)
    times: dict[bool, list[float]] = {False: [], True: []}
    found: dict[bool, int] = {False: 0, True: 0}
    quality: dict[bool, list[float]] = {False: [], True: []}
    shares = []
    try:
        async with pool.connection() as a, pool.connection() as b, general.connection() as g:
            for _, search in searches[:20]:  # connections, prepared statements, pages
                for narrowed in (False, True):
                    await both_arms((a, b), search, narrowed)
            for i, (target, search) in enumerate(searches):
                exact = set(await exact_top10(g, search))
                shares.append(await admitted_share(g, search.filter, total))
                for narrowed in (i % 2 == 0, i % 2 == 1):
                    elapsed, by_vector, by_keyword = await both_arms((a, b), search, narrowed)
                    times[narrowed].append(elapsed)
                    ids = {r["id"] for r in by_vector} | {r["id"] for r in by_keyword}
                    found[narrowed] += target in ids
                    if exact:
                        top = {r["id"] for r in by_vector[:10]}
                        quality[narrowed].append(len(top & exact) / len(exact))
    finally:
        await pool.close()
        await general.close()
    return {
        "admitted": round(statistics.median(shares), 4),
        "queries": len(searches),
        **{
            ("narrowed" if narrowed else "walk"): {
                **summary(times[narrowed]),
                "found": round(found[narrowed] / len(searches), 3),
                "vector_top10": round(statistics.mean(quality[narrowed]), 3)
                if quality[narrowed]
                else None,
            }
            for narrowed in (False, True)
        },
    }


def report(results: dict[str, Any], argv: str) -> str:
    lines = [
        "# Recall with a filter on one large namespace",
        "",
        f"`python -m benchmarks.filtered {argv}` on a 2-core machine: {results['n']:,} English "
        "sentences in one namespace (imported, then ANALYZE), built-in embedder. Both arms' "
        "statements at once, as the service runs them; the HNSW walk with the filter "
        "(before) and the narrowed statements (now) interleaved query by query. ms; "
        '"found": the memory asked for (by 3-7 of its words) was among the candidates; '
        '"top 10": the vector arm\'s share of the exact top 10 of what the filter admits.',
        "",
        "| filter | admits (median) | before p50 | p99 | found | top 10 | now p50 | p99 | found "
        "| top 10 | narrowed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, r in results["classes"].items():
        w, n = r["walk"], r["narrowed"]
        lines.append(
            f"| {name} | {r['admitted']:.2%} | {w['p50']} | {w['p99']} | {w['found']} | "
            f"{w['vector_top10']} | {n['p50']} | {n['p99']} | {n['found']} | "
            f"{n['vector_top10']} | {'yes' if r['narrowable'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=150, help="per filter class")
    parser.add_argument("--keep", type=Path, help="keep the loaded corpus here, reuse it")
    parser.add_argument("--classes", help="comma-separated class names (default: all)")
    args = parser.parse_args()
    chosen = [c for c in CLASSES if not args.classes or c.name in args.classes.split(",")]
    with stores(args.keep) as s:
        settings = Settings(api_key="x" * 20, data_dir=s.root)
        # "filtered3": the corpus with importances and the summaries observed in 2021 (a
        # kept "filtered" or "filtered2" one has neither or the second)
        cell = matrix.Cell("filtered3", "import", 1, args.n)
        with matrix.cell_database(s, cell, args.keep is not None) as (url, fresh):
            if fresh:
                print(f"loading {args.n:,} ...", flush=True)
                rate = asyncio.run(load(url, args.n, settings))
                print(f"{rate:.0f} memories/s", flush=True)
            matrix.analyze(url)
            results: dict[str, Any] = {"n": args.n, "classes": {}}
            for cls in chosen:
                r = asyncio.run(measure_class(url, settings, cls, args.queries, args.n))
                r["narrowable"] = cls.narrowed
                results["classes"][cls.name] = r
                print(f"{cls.name}: {r}", flush=True)
    argv = " ".join(f"--{k} {v}" for k, v in vars(args).items() if v is not None and k != "keep")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "filtered.json").write_text(json.dumps(results, indent=2) + "\n")
    text = report(results, argv)
    (RESULTS / "filtered.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
