"""Queries made only of common words, in one namespace of N memories: what recall finds for
them and what they cost (issue 33; benchmarks/README item 41).

    python -m benchmarks.common_words --keep DIR [--corpora english,madeup,zipf] \
        [--size 100000] [--queries 1000] [--label NAME]

Each corpus is loaded as the matrix loads it (kept in DIR under the matrix's database names,
so `benchmarks.matrix --keep DIR` and `benchmarks.recall_ab --keep DIR` share the loads), and
measured on a copy (CREATE DATABASE ... TEMPLATE) migrated by the code this runs: run it
with `PYTHONPATH=<other checkout>/src` to measure another tree's recall on the same data
(the older tree first, if the kept database was loaded by it: a copy cannot go down).

Of `--queries` queries from the corpus, those whose every term is in more memories than the
postings budget allows reading are asked in process (`recall.rank`, k = 10, one at a time,
each path warmed by the same queries first), by the large-namespace path and by exact
search of both arms. Printed: how many there are, the share of the exact fused top 10 the
answers find (mean, and the least of any query), the keyword arm's alone (of its exact top
10 by BM25), and the time per query (p50, p90, max) beside the same for every query. Kept
per `--label` in results/common_words.json; the report, results/common_words.md, puts every
label's rows side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr
from tests.support.servers import create_database, drop_database

from benchmarks.corpora import CORPORA
from benchmarks.matrix import (
    Cell,
    analyze,
    cell_database,
    keep_specificities,
    load_import,
    namespace_of,
)
from benchmarks.stack import stores
from hindsight import core
from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.retrieval.keywords import query_terms
from hindsight.services.recall import RecallRequest
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter

RESULTS = Path(__file__).resolve().parent / "results"
NS = namespace_of(0, 1)


async def common_only(settings: Settings, url: str, queries: list[str]) -> list[str]:
    """The queries none of whose terms is rare enough for the postings budget."""
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    picked = []
    try:
        async with hs.pool.connection() as conn:
            for q in queries:
                terms, _ = query_terms(q)
                cur = await conn.execute(
                    "SELECT min(df) AS df FROM (SELECT sum(df) AS df FROM keyword_stats "
                    "WHERE namespace = %s AND term = ANY(%s) AND term <> 0 GROUP BY term) s "
                    "WHERE df > 0",
                    (NS, terms),
                )
                row = await cur.fetchone()
                if row and row["df"] is not None and row["df"] > settings.keyword_postings_budget:
                    picked.append(q)
    finally:
        await hs.aclose()
    return picked


async def answers(
    settings: Settings, url: str, queries: list[str]
) -> tuple[list[list[Any]], list[float]]:
    """Each query's top 10 ids, and its time in ms (after one untimed pass)."""
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        for q in queries:
            await hs.recall.rank(NS, RecallRequest(q, 10, MemoryFilter()))
        top, ms = [], []
        for q in queries:
            started = time.perf_counter()
            ranked = await hs.recall.rank(NS, RecallRequest(q, 10, MemoryFilter()))
            ms.append((time.perf_counter() - started) * 1000)
            top.append([h.row["id"] for h in ranked.results])
        return top, ms
    finally:
        await hs.aclose()


async def keyword_arm_share(settings: Settings, url: str, queries: list[str]) -> float:
    """The keyword arm alone: the share of its exact top 10 (by BM25) it finds."""
    pool = await open_pool(settings, url, search=True)
    shares = []
    try:
        async with pool.connection() as conn:
            for q in queries:
                terms, counts = query_terms(q)
                found = [
                    {
                        r["id"]
                        for r in await search_store.arm_candidates(
                            conn,
                            search_store.Search(
                                NS,
                                None,
                                terms,
                                counts,
                                MemoryFilter(),
                                10,
                                exact_max,
                                settings.keyword_postings_budget,
                            ),
                            "keyword",
                        )
                    }
                    for exact_max in (10**12, 0)
                ]
                if found[0]:
                    shares.append(len(found[0] & found[1]) / len(found[0]))
    finally:
        await pool.close()
    return round(statistics.fmean(shares), 3)


def spread(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "max": round(ordered[-1], 2),
    }


def run_corpus(s: Any, name: str, args: argparse.Namespace) -> dict[str, Any]:
    corpus = CORPORA[name]
    cell = Cell(name, "import", 1, args.size)
    settings = Settings(api_key=SecretStr("x" * 20), data_dir=s.root)
    with cell_database(s, cell, True) as (kept, fresh):
        if fresh:
            print(f"[{name}] loading {args.size:,} ...", flush=True)
            asyncio.run(load_import(kept, cell, corpus, settings))
            analyze(kept)
    copy = f"common_words_{uuid.uuid4().hex[:8]}"
    template = urlsplit(kept).path.lstrip("/")
    url = create_database(s.server_url, copy, migrate_it=False, template=template)
    try:
        asyncio.run(core.migrate_for(settings, url))
        asyncio.run(keep_specificities(url, settings))
        queries = corpus.queries(args.queries)
        common = asyncio.run(common_only(settings, url, queries))
        exact = settings.model_copy(update={"exact_search_max_rows": 10**12})
        truth, exact_ms = asyncio.run(answers(exact, url, common))
        got, ms = asyncio.run(answers(settings, url, common))
        _, every_ms = asyncio.run(answers(settings, url, queries))
        arm_share = asyncio.run(keyword_arm_share(settings, url, common))
    finally:
        drop_database(s.server_url, copy)
    shares = [len(set(a) & set(e)) / len(e) for a, e in zip(got, truth, strict=True) if e]
    out = {
        "queries": len(queries),
        "common": len(common),
        "share": round(statistics.fmean(shares), 3),
        "least": round(min(shares), 2),
        "keyword_arm_share": arm_share,
        "ms": spread(ms),
        "exact_ms": spread(exact_ms),
        "every_ms": spread(every_ms),
        "load_average": round(os.getloadavg()[0], 1),
    }
    print(f"[{name}] {out}", flush=True)
    return out


def report(kept: dict[str, dict[str, dict[str, Any]]], argv: list[str]) -> str:
    lines = [
        "# Queries made only of common words",
        "",
        f"`python -m benchmarks.common_words {shlex.join(argv)}` (the last run; each label's",
        "rows are from its own run). In process, one query at a time, k = 10; ms p50 / p90 /",
        "max. Share: of the exact fused top 10 (both arms searched exactly), what the",
        "answers find, over the common-word queries (mean, and the least of any); the keyword",
        "arm alone: of its exact top 10 by BM25, what it finds (k = 10).",
        "",
        "| corpus | label | common-word queries | share (least) | keyword arm alone "
        "| their ms | every query's ms | exact search's ms | load avg |",
        "| --- | --- | ---: | ---: | ---: | --- | --- | --- | ---: |",
    ]

    def three(t: dict[str, float]) -> str:
        return f"{t['p50']} / {t['p90']} / {t['max']}"

    def by_corpus_and_size(key: str) -> tuple[str, int]:
        corpus, size = key.split(" ")
        return corpus, int(size.replace(",", ""))

    for key in sorted(kept, key=by_corpus_and_size):
        for label, r in kept[key].items():
            lines.append(
                f"| {key} | {label} | {r['common']} of {r['queries']} | {r['share']} "
                f"({r['least']}) | {r['keyword_arm_share']} | {three(r['ms'])} "
                f"| {three(r['every_ms'])} "
                f"| {three(r['exact_ms'])} | {r['load_average']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--corpora", default="english,madeup,zipf")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--label", default="this tree")
    args = parser.parse_args()
    path = RESULTS / "common_words.json"
    kept: dict[str, dict[str, dict[str, Any]]] = (
        json.loads(path.read_text()) if path.exists() else {}
    )
    with stores(args.keep) as s:
        for name in args.corpora.split(","):
            result = run_corpus(s, name, args)
            kept.setdefault(f"{name} {args.size:,}", {})[args.label] = result
            path.write_text(json.dumps(kept, indent=1) + "\n")
    (RESULTS / "common_words.md").write_text(report(kept, sys.argv[1:]))
    print(report(kept, sys.argv[1:]))


if __name__ == "__main__":
    main()
