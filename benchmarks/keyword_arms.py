"""The keyword arm against other ways to find the BM25 top k, side by side (issue 33, item 2).

    python -m benchmarks.keyword_arms --keep DIR
    python -m benchmarks.keyword_arms --keep DIR --cells madeup/import/1/100000 \\
        --variants today,budget1000,impact1000x100,hybrid3000x200x400

On matrix corpora (loaded as `benchmarks.matrix --keep` loads them, or reused from there),
each variant of the keyword arm's statement runs on the same queries, interleaved query by
query (the order alternating), twice; its time at the client and its share of the exact
BM25 top 10 (over every memory of the namespace holding a query term; tie-safe: a returned
memory counts when its exact score reaches the 10th exact score). Variants:

- `today`: the service's statement (the postings of the terms that weigh most for their
  postings, up to HINDSIGHT_KEYWORD_POSTINGS_BUDGET, each scored from memory_keywords'
  narrow row; when even the rarest term has more, the memories holding the rarest few
  together, item 41);
- `rarest`: the same, the terms taken rarest first whatever their weight (the order before
  item 46; it differs for a conversation's turn-weighted terms, and for a question only
  when a word is said twice or the first person adds the half-weighted `user`);
- `budgetN`: the same with a budget of N postings;
- `enoughN`: the budget as today, but a commoner term's postings only while the rarer
  terms' hold fewer than N;
- `impactMxC`: impact-ordered postings, term at a time. A prototype table built here from
  the stored keyword vectors (one row per memory and term, carrying the term's BM25 weight
  in that memory, ordered by it in a btree read index-only): each query term's M heaviest
  postings, summed per memory by the query's IDF weights, the best C scored exactly from
  their rows;
- `hybridBxMxC`: the same table, but the rarest terms' postings up to B read whole (as
  `rarest` reads them, index-only instead of a heap row each) and the other terms' M heaviest.
- `cover`: today's arm, exact, but each budgeted posting scored from a covering index alone:
  a prototype table of one row per memory and term carrying a copy of the memory's keyword
  vector (and its expiry), `(namespace, term) INCLUDE (id, expires_at, keywords)`;
- `wide`: today's arm as it was before migration 0035, each posting scored from the
  memory's own wide row (~1.2 kB with its embedding), through posting lists built on
  long_term_memory for the comparison;
- `vector`: recall's other arm, the HNSW walk, for scale (its share of the keyword top 10
  is not reported);
- `counted`, `vector-counted`: the keyword and the vector arm deciding whether a
  min_confidence narrows as migration 0036 did, by counting its index entries up to one
  past the limit, where today's read the counts per confidence bucket (0037).

With a filter (`--min-confidence`, `--selective`) the exact top 10 is that of the memories
the filter admits, and every variant applies it. `--turns N` asks each query as the latest
user turn after N earlier turns (`benchmarks.recall_ab`'s conversations), its terms weighed
by their turns as recall weighs them; the arm's candidates and the exact top 10 are by the
BM25 score (a conversation's final keyword score, the share of each memory's own mass, is
computed from them and not timed here).

The prototype tables are not maintained by writes; they exist only in the benchmark's
database, and the report gives the disk each takes beside the memory table's. Writes
results/keyword_arms.md (`--out`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from benchmarks import matrix, perf, recall_ab
from benchmarks.corpora import CORPORA
from benchmarks.service_profile import load_if_new
from benchmarks.stack import stores
from hindsight.config import Settings
from hindsight.db.pool import Connection, open_pool
from hindsight.retrieval.keywords import weighted_query_terms
from hindsight.retrieval.searched import searched
from hindsight.stores import narrowing, search as search_store
from hindsight.stores.filters import FILTER_COLUMNS_SQL, MemoryFilter, filter_sql
from hindsight.stores.narrowing import UNNARROWED
from hindsight.text.conversation import Turn
from hindsight.text.tokenize import KEYWORD_DIMENSIONS

RESULTS = Path(__file__).resolve().parent / "results"

PROTOTYPE = [
    """CREATE TABLE IF NOT EXISTS keyword_impacts_prototype AS
       SELECT m.namespace, (e[1]::int - 1) AS term, e[2]::real AS impact, m.id
       FROM long_term_memory m,
            regexp_matches(split_part(m.keywords::text, '/', 1), '(\\d+):([-0-9.e+]+)', 'g') e
       WHERE m.live""",
    """CREATE INDEX IF NOT EXISTS keyword_impacts_prototype_order
       ON keyword_impacts_prototype (namespace, term, impact DESC) INCLUDE (id)""",
    "VACUUM ANALYZE keyword_impacts_prototype",
]

# every posting with a copy of its memory's keyword vector (and what the default filters
# read), so the budgeted rare terms' postings are scored from the index alone
COVER = [
    """CREATE TABLE IF NOT EXISTS keyword_cover_prototype AS
       SELECT m.namespace, t AS term, m.id, m.expires_at, m.keywords
       FROM long_term_memory m, unnest(m.keyword_terms) t
       WHERE m.live""",
    """CREATE INDEX IF NOT EXISTS keyword_cover_prototype_postings
       ON keyword_cover_prototype (namespace, term) INCLUDE (id, expires_at, keywords)""",
    "VACUUM ANALYZE keyword_cover_prototype",
]

# today's arm with its postings branch reading a prototype instead of the memory's row
_POSTINGS_BRANCH = "{postings}"


def _postings_from(branch: str) -> str:
    assert _POSTINGS_BRANCH in search_store._SPARSE_ARM, "the keyword arm changed"
    return search_store._SPARSE_ARM.replace(_POSTINGS_BRANCH, branch)


# a memory holding several rare terms has a row for each: grouped, scored once
COVER_ARM = _postings_from(
    """    (SELECT m.id FROM (
         SELECT m.id, m.keywords <#> (SELECT v FROM qvec) AS d FROM keyword_cover_prototype m
         WHERE m.namespace = %(ns)s AND m.term = ANY((SELECT terms FROM rare)::int[])
           AND (m.expires_at IS NULL OR m.expires_at > now()) AND {index_gate}) m
     GROUP BY m.id ORDER BY min(m.d) LIMIT %(n)s)"""
)

# the arm before migration 0035: each posting scored from the memory's own wide row, through
# posting lists on long_term_memory (built here for the comparison)
WIDE = [
    """CREATE INDEX IF NOT EXISTS keyword_wide_prototype_terms
       ON long_term_memory USING gin (keyword_terms) WITH (fastupdate = off)""",
    "VACUUM ANALYZE long_term_memory",
]

WIDE_ARM = _postings_from(
    """    (SELECT m.id FROM (
         SELECT m.id, m.namespace, m.keywords, {filter_columns} FROM long_term_memory m
         WHERE m.keyword_terms && (SELECT terms FROM rare) OFFSET 0) m
     WHERE m.namespace = %(ns)s{filters} AND {index_gate}
     ORDER BY (m.keywords <#> (SELECT v FROM qvec)) + 0 LIMIT %(n)s)""".replace(
        "{filter_columns}", FILTER_COLUMNS_SQL
    )
)

# the best C by summed impacts, scored exactly from their rows
_RESCORED = """
arm AS (
    SELECT c.id FROM cand c CROSS JOIN LATERAL (
        SELECT m.keywords <#> (SELECT v FROM qvec) AS d FROM long_term_memory m
        WHERE m.namespace = %(ns)s AND m.id = c.id AND m.live OFFSET 0) x
    ORDER BY x.d LIMIT %(n)s
)
"""

IMPACT_ARM = (
    """
cand AS (
    SELECT p.id, sum(q.w * p.impact) AS s
    FROM qweights q CROSS JOIN LATERAL (
        SELECT k.id, k.impact FROM keyword_impacts_prototype k
        WHERE k.namespace = %(ns)s AND k.term = q.term
        ORDER BY k.impact DESC LIMIT {M}) p
    GROUP BY p.id ORDER BY s DESC LIMIT {C}
),"""
    + _RESCORED
)

HYBRID_ARM = (
    """
lims AS (
    SELECT q.term, q.w,
           CASE WHEN sum(s.df) OVER (ORDER BY s.df, s.term) <= %(budget)s
                THEN s.df::int ELSE {M} END AS lim
    FROM qweights q JOIN stats s ON s.term = q.term
),
cand AS (
    SELECT p.id, sum(l.w * p.impact) AS s
    FROM lims l CROSS JOIN LATERAL (
        SELECT k.id, k.impact FROM keyword_impacts_prototype k
        WHERE k.namespace = %(ns)s AND k.term = l.term
        ORDER BY k.impact DESC LIMIT l.lim) p
    GROUP BY p.id ORDER BY s DESC LIMIT {C}
),"""
    + _RESCORED
)

# the query's BM25 weights, as the service computes them, and the exact top 10
_QUERY_VECTOR = (
    search_store._QUERY_TERMS.replace("%(kdims)s", str(KEYWORD_DIMENSIONS)).rstrip().rstrip(",")
    + "\nSELECT (SELECT v FROM qvec)::text AS v, (SELECT norm FROM qvec) AS norm"
)
# over the memory's own row, which every filter can read
_EXACT = """
SELECT -(m.keywords <#> %(v)s::sparsevec) AS s FROM long_term_memory m
WHERE m.namespace = %(ns)s AND m.keyword_terms && %(t)s::int[]{filters}
ORDER BY m.keywords <#> %(v)s::sparsevec LIMIT 10
"""


# how migration 0036 decided whether a min_confidence narrows: its index entries counted,
# up to one past the limit, on every recall (0037 reads the counts per confidence bucket;
# the entries are memory_facets' since 0038)
_CONFIDENCE = narrowing.confidence_facet(0.0, {})
_CONFIDENCE_COUNTED = _CONFIDENCE.counted()
_COUNTED_0036 = f"""
        WHEN (SELECT count(*) FROM ({_CONFIDENCE.admitted}
                  LIMIT %(exact_max)s + 1) c) <= %(exact_max)s THEN 'confidence'"""


# the keyword arm's choice of terms (item 46), and the one before it
_BY_WEIGHT = """        SELECT q.term, sum(s.df) OVER (ORDER BY q.w / s.df DESC, q.term) AS postings
        FROM qweights q JOIN stats s ON s.term = q.term
        WHERE q.term <> 0 AND s.df <= %(budget)s"""
_RAREST = """        SELECT term, sum(df) OVER (ORDER BY df, term) AS postings
        FROM stats WHERE term <> 0 AND df > 0"""


def statement(variant: str, search: search_store.Search) -> tuple[str, dict[str, Any]]:
    if variant in ("counted", "vector-counted"):
        sql, params = search.statement("vector" if variant == "vector-counted" else "keyword")
        if _CONFIDENCE_COUNTED not in sql:
            raise SystemExit(f"--variants: {variant} needs a min_confidence filter")
        return sql.replace(_CONFIDENCE_COUNTED, _COUNTED_0036), params
    sql, params = search.statement("keyword")
    if variant == "today":
        return sql, params
    if variant == "vector":
        return search.statement("vector")
    if variant == "rarest":
        assert _BY_WEIGHT in sql
        return sql.replace(_BY_WEIGHT, _RAREST), params
    if variant.startswith("budget"):
        return sql, {**params, "budget": int(variant.removeprefix("budget"))}
    if variant.startswith("enough"):
        # rarest first, as it was measured (item 35)
        old = "    WHERE postings <= %(budget)s\n"
        assert old in sql and _BY_WEIGHT in sql
        new = "    WHERE postings <= %(budget)s AND postings - df < %(enough)s\n"
        rarest = _RAREST.replace("SELECT term, sum(df) OVER", "SELECT term, df, sum(df) OVER")
        sql = sql.replace(old, new).replace(_BY_WEIGHT, rarest)
        return sql, {**params, "enough": int(variant.removeprefix("enough"))}
    if variant == "cover":
        arm = COVER_ARM
    elif variant == "wide":
        arm = WIDE_ARM
    elif variant.startswith("impact"):
        m, c = variant.removeprefix("impact").split("x")
        arm = IMPACT_ARM.replace("{M}", m).replace("{C}", c)
    elif variant.startswith("hybrid"):
        b, m, c = variant.removeprefix("hybrid").split("x")
        arm = HYBRID_ARM.replace("{M}", m).replace("{C}", c)
        params = {**params, "budget": int(b)}
    else:
        raise SystemExit(f"--variants: unknown {variant!r}")
    template = search_store._statement(search_store._QUERY_TERMS, arm, search_store._SCORED)
    # the request's filters on `wide`, which reads every column they may name
    filters = filter_sql(search.filter, params, "m") if variant == "wide" else ""
    narrowed = search_store._narrowed(template, UNNARROWED)
    return search_store.filled(narrowed, filters, UNNARROWED.index_gate), params


async def exact(conn: Connection, search: search_store.Search) -> tuple[float, int, float] | None:
    """The query's IDF mass, how many memories the exact top 10 holds, and its 10th score."""
    _, params = search.statement("keyword")
    cur = await conn.execute(_QUERY_VECTOR, params)
    row = await cur.fetchone()
    if row is None or row["v"] is None:
        return None
    await conn.execute("SET enable_sort = on")  # the search pool's connections sort nothing
    terms = "{" + ",".join(map(str, search.terms)) + "}"
    given: dict[str, Any] = {"v": row["v"], "ns": search.namespace, "t": terms}
    filters = filter_sql(search.filter, given, "m")
    cur = await conn.execute(_EXACT.replace("{filters}", filters), given)  # type: ignore[arg-type]
    scores = [r["s"] for r in await cur.fetchall()]
    await conn.execute("SET enable_sort = off")
    return (row["norm"], len(scores), scores[-1]) if scores else None


def conversation_search(search: search_store.Search, body: dict[str, Any]) -> search_store.Search:
    """The search with the terms of the conversation the body makes, weighed by turn."""
    if not body.get("context"):
        return search
    turns = tuple(Turn(t["role"], t["content"]) for t in body["context"])
    terms, counts = weighted_query_terms(searched(body["query"], turns, True).parts)
    return dataclasses.replace(search, terms=terms, term_counts=counts)


async def compare(
    url: str,
    corpus: str,
    namespace: str,
    queries: list[str],
    variants: list[str],
    settings: Settings,
    flt: MemoryFilter,
    turns: int = 0,
) -> dict[str, dict[str, float]]:
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 1}), url, search=True)
    times: dict[str, list[float]] = {v: [] for v in variants}
    found: dict[str, list[float]] = {v: [] for v in variants}
    async with pool.connection() as conn:
        if any(v.startswith(("impact", "hybrid")) for v in variants):
            for sql in PROTOTYPE:
                await conn.execute(sql)  # type: ignore[arg-type]
        if "cover" in variants:
            for sql in COVER:
                await conn.execute(sql)  # type: ignore[arg-type]
        if "wide" in variants:
            for sql in WIDE:
                await conn.execute(sql)  # type: ignore[arg-type]
        searches = [
            conversation_search(perf.search_of(namespace, body["query"], settings, flt), body)
            for body in recall_ab.conversations(CORPORA[corpus], queries, turns)
        ]
        truth = [await exact(conn, s) for s in searches]
        for turn in range(2):
            for i, search in enumerate(searches):
                order = variants if (i + turn) % 2 == 0 else variants[::-1]
                for variant in order:
                    sql, params = statement(variant, search)
                    start = time.perf_counter()
                    cur = await conn.execute(sql, params, binary=True)  # type: ignore[arg-type]
                    rows = await cur.fetchall()
                    times[variant].append((time.perf_counter() - start) * 1000)
                    known = truth[i]
                    if turn or known is None or variant.startswith("vector"):
                        continue
                    norm, count, tenth = known
                    best = sorted((r["keyword"] for r in rows), reverse=True)[:10]
                    hits = sum(1 for k in best if k * norm >= tenth - 1e-6)
                    found[variant].append(min(hits, count) / count)
    await pool.close()
    return {
        v: {
            "p50": round(statistics.median(times[v]), 2),
            "p90": round(perf.pct(times[v], 90), 2),
            "p99": round(perf.pct(times[v], 99), 2),
            "top10": round(statistics.fmean(found[v]), 3) if found[v] else None,
        }
        for v in variants
    }


async def only_common(url: str, queries: list[str], settings: Settings) -> list[str]:
    """The queries whose every term has more postings than the budget."""
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 1}), url, search=True)
    kept = []
    async with pool.connection() as conn:
        for q in queries:
            search = perf.search_of("bench", q, settings, MemoryFilter())
            cur = await conn.execute(
                "SELECT min(df) AS df FROM (SELECT sum(df) AS df FROM keyword_stats "
                "WHERE namespace = 'bench' AND term = ANY(%s) GROUP BY term) d",
                (search.terms,),
            )
            row = await cur.fetchone()
            if row and row["df"] is not None and row["df"] > settings.keyword_postings_budget:
                kept.append(q)
    await pool.close()
    return kept


async def disk(url: str, settings: Settings) -> dict[str, int]:
    """Megabytes on disk (heap, TOAST and indexes) of the memory tables and each prototype."""
    pool = await open_pool(settings.model_copy(update={"db_pool_min": 1}), url)
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT relname, pg_total_relation_size(oid) / 1048576 AS mb FROM pg_class "
            "WHERE relkind = 'r' AND (relname IN ('long_term_memory', 'memory_keywords') "
            "OR relname LIKE 'keyword\\_%%\\_prototype') ORDER BY relname"
        )
        sizes = {r["relname"]: int(r["mb"]) for r in await cur.fetchall()}
    await pool.close()
    return sizes


SELECTIVE_CONFIDENCE = 0.9


@contextlib.contextmanager
def confident(url: str, prefix: str) -> Iterator[None]:
    """The namespace's memories under `prefix` at SELECTIVE_CONFIDENCE, the others' confidence
    kept, and every one put back after (the corpora load every memory at one confidence)."""
    with psycopg.connect(url, autocommit=True) as conn:
        before = conn.execute(
            "SELECT DISTINCT confidence FROM long_term_memory WHERE namespace = 'bench'"
        ).fetchall()
        if len(before) != 1:
            raise SystemExit("--selective: the namespace's memories differ in confidence already")
        conn.execute(
            "UPDATE long_term_memory SET confidence = %s "
            "WHERE namespace = 'bench' AND starts_with(mem_key, %s)",
            (SELECTIVE_CONFIDENCE, prefix),
        )
        conn.execute("VACUUM ANALYZE long_term_memory")
        for copy in ("memory_confidence", "memory_facets"):  # migrations 0036, 0038
            if conn.execute("SELECT to_regclass(%s)", (copy,)).fetchone() != (None,):
                conn.execute(f"VACUUM ANALYZE {copy}")
        try:
            yield
        finally:
            conn.execute(
                "UPDATE long_term_memory SET confidence = %s "
                "WHERE namespace = 'bench' AND confidence <> %s",
                (before[0][0], before[0][0]),
            )
            conn.execute("VACUUM ANALYZE long_term_memory")


def report(results: dict[str, dict[str, Any]], argv: list[str]) -> str:
    lines = [
        "# The keyword arm beside other ways to read its postings",
        "",
        f"`python -m benchmarks.keyword_arms {' '.join(argv)}` on a 2-core machine shared with",
        "other work (load average per corpus below): the keyword arm's statement alone, warm,",
        "variants interleaved query by query, two passes; ms at the client, and the share of",
        "the exact BM25 top 10 in the variant's best 10 (tie-safe).",
    ]
    for cell, result in results.items():
        lines += [
            "",
            f"## {cell} ({result['queries']} queries, load average {result['load']})",
            "",
            "| variant | p50 | p90 | p99 | exact top 10 found |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for variant, m in result["variants"].items():
            top10 = "—" if m["top10"] is None else m["top10"]
            lines.append(f"| {variant} | {m['p50']} | {m['p90']} | {m['p99']} | {top10} |")
        sizes = ", ".join(f"{name} {mb} MB" for name, mb in result["disk"].items())
        lines += ["", f"On disk (heap, TOAST and indexes): {sizes}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", type=Path, required=True, help="matrix corpora live here")
    parser.add_argument("--cells", default="madeup/import/1/100000,english/import/1/100000")
    parser.add_argument(
        "--variants",
        default="today,budget1000,impact300x100,impact1000x100,hybrid3000x200x400",
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "keyword_arms.md")
    parser.add_argument(
        "--min-confidence",
        type=float,
        help="recall's min_confidence filter, on `today` and `wide` (a filter memory_keywords "
        "does not hold: `today` then reads the memory's row too)",
    )
    parser.add_argument(
        "--selective",
        metavar="PREFIX",
        help="a min_confidence filter that admits few: the memories whose key starts with "
        f"PREFIX are given confidence {SELECTIVE_CONFIDENCE} for the run (put back after) and "
        "--min-confidence is that (the matrix's keys are z.N or e.N: z.12 admits 1.1%% of "
        "100k, z.123 0.11%%)",
    )
    parser.add_argument(
        "--turns",
        type=int,
        default=0,
        help="ask each query after this many earlier turns of a conversation",
    )
    parser.add_argument(
        "--only-common",
        action="store_true",
        help="only queries whose rarest term has more postings than the budget",
    )
    args = parser.parse_args()
    if args.only_common and args.turns:
        parser.error("--only-common picks questions by their own terms: not with --turns")
    variants = args.variants.split(",")
    results: dict[str, dict[str, Any]] = {}
    with stores(args.keep) as s:
        settings = Settings(api_key="x" * 20, data_dir=s.root)
        for spec in args.cells.split(","):
            corpus, path, spread, n = spec.split("/")
            if spread != "1":
                parser.error("--cells: one namespace only")
            cell = matrix.Cell(corpus, path, 1, int(n))
            url = load_if_new(s, cell, settings)
            # queries the matrix does not time, so no kept specificity favours one variant
            queries = CORPORA[corpus].queries(5000 + args.queries)[5000:]
            if args.only_common:
                queries = asyncio.run(only_common(url, queries, settings))
            if args.selective:
                flt = MemoryFilter(min_confidence=SELECTIVE_CONFIDENCE)
                with confident(url, args.selective):
                    measured = asyncio.run(
                        compare(url, corpus, "bench", queries, variants, settings, flt, args.turns)
                    )
            else:
                flt = MemoryFilter(min_confidence=args.min_confidence)
                measured = asyncio.run(
                    compare(url, corpus, "bench", queries, variants, settings, flt, args.turns)
                )
            results[cell.name] = {
                "queries": len(queries),
                "load": round(os.getloadavg()[0], 1),
                "variants": measured,
                "disk": asyncio.run(disk(url, settings)),
            }
            print(cell.name, results[cell.name], flush=True)
    text = report(results, sys.argv[1:])
    RESULTS.mkdir(exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
