"""Recall's statements, planned as the search pool plans them, must read rows in proportion
to the answer, never to the table.

A timing test cannot show this: the planner picks plans from estimates that change with the
corpus, the load path, whether ANALYZE has run and the server's cost settings, and the plan
that worked on one workload hash-joined a whole table on another (271 ms instead of 4). So
these tests run every arm's statement as a cached generic plan, under PostgreSQL's default
costs and the embedded server's, on a namespace far larger than the answer, before and after
ANALYZE, and fail on any node that read more rows than a bound that does not grow with it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from benchmarks.corpus import Corpus
from pgvector import HalfVector

from hindsight import core
from hindsight.db.pool import open_pool
from hindsight.db.schema import KEYWORD_TERMS_INDEX
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import query_terms, twin_term_groups
from hindsight.services.bulk_import import BulkImporter, parse_line
from hindsight.stores import search as search_store
from hindsight.stores.filters import MemoryFilter
from tests.conftest import make_settings
from tests.support.plans import PlanNode, executed_nodes, explain_generic
from tests.support.servers import separate_database

BIG = 8_000  # memories in the large namespace
# Beside them, a few memories that filters single out: a type and a tag nothing else has,
# occurred long before the rest were written. Through HNSW alone, a filter admitting them
# walked the graph until it had its k (all 8,048 index rows), and still missed some.
FEW = 40
LONG_AGO = datetime(2001, 3, 1, tzinfo=UTC)
EXACT_MAX = 500  # namespaces above this go through the indexes
BUDGET = 400  # keyword postings read at most
PER_ARM = 20
# What one recall may read: its candidates, the postings budget, the query's keyword
# statistics, a small namespace searched exactly. A quarter of the big namespace is far
# above all of them and far below what a full-table join or scan reads.
BOUND = BIG // 4
# the tables recall and the near-duplicate check read (the keyword arm's postings: 0035;
# the indexes of min_confidence, min_importance and observed_*: 0038)
SEARCHED = ("long_term_memory", "memory_keywords", "memory_facets")


@pytest.fixture(scope="module")
def big_db(pg_url: str) -> Iterator[str]:
    """One namespace of BIG memories (a Zipf vocabulary, loaded the way `hindsight import`
    loads), a small one beside it, and statistics not yet gathered."""
    with separate_database(pg_url) as url:
        corpus = Corpus(seed=11)
        lines = [json.dumps({**m, "namespace": "big"}) for m in corpus.memories(BIG)]
        lines += [json.dumps({**m, "namespace": "tiny"}) for m in corpus.memories(50, "t")]
        lines += [
            json.dumps(
                {
                    **m,
                    "namespace": "big",
                    "memory_type": "event",
                    "tags": ["trip"] if i % 2 else ["trip", "work"],
                    "occurred_at": (LONG_AGO + timedelta(days=i)).isoformat(),
                    # a confidence and an importance nothing else has (the rest are at
                    # the initial 0.5, and the built-in estimate's 0.5 or 0.1)
                    "confidence": 0.95,
                    "importance": 0.95,
                }
            )
            for i, m in enumerate(corpus.memories(FEW, "few"))
        ]

        async def load() -> None:
            settings = make_settings()
            hs = await core.start(settings, database_url=url, redis_url=None, background=False)
            try:
                items = [parse_line(line, None, i) for i, line in enumerate(lines)]
                importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
                await importer.run(items, total=len(items), import_id="plan-shape")
                # the events were last observed when they occurred, as if reinforced then,
                # and the rest are as important as the built-in estimate makes most (the
                # corpus spreads them over 0-1)
                async with hs.pool.connection() as conn:
                    await conn.execute(
                        "UPDATE long_term_memory SET last_observed = occurred_at "
                        "WHERE namespace = 'big' AND memory_type = 'event'"
                    )
                    await conn.execute(
                        "UPDATE long_term_memory SET importance = 0.5 "
                        "WHERE namespace = 'big' AND memory_type <> 'event'"
                    )
            finally:
                await hs.aclose()

        asyncio.run(load())
        yield url


def searches(namespace: str) -> Iterator[tuple[str, search_store.Search]]:
    corpus = Corpus(seed=12)
    embedder = BuiltinEmbedder()
    queries = [corpus.query() for _ in range(3)]
    # common words only: the keyword arm reads the memories holding its rarest ones together
    queries.append("user prefers the project team meeting")
    filters = [
        MemoryFilter(),
        MemoryFilter(memory_types=("fact", "preference")),
        MemoryFilter(tags_any=("work", "home")),
        # each admits FEW memories of the big namespace, or none
        MemoryFilter(memory_types=("event",)),
        MemoryFilter(tags=("trip",)),
        MemoryFilter(tags=("work", "trip")),
        MemoryFilter(tags_any=("trip", "no-such-tag")),
        MemoryFilter(memory_types=("summary",)),
        MemoryFilter(occurred_after=LONG_AGO, occurred_before=LONG_AGO + timedelta(days=60)),
        MemoryFilter(occurred_before=LONG_AGO + timedelta(days=20), tags=("work",)),
        MemoryFilter(created_before=LONG_AGO),
        MemoryFilter(min_confidence=0.9),
        MemoryFilter(min_confidence=0.9, tags=("work",)),
        MemoryFilter(min_confidence=0.99),
        MemoryFilter(min_importance=0.9),
        MemoryFilter(observed_before=LONG_AGO + timedelta(days=60)),
        MemoryFilter(observed_after=LONG_AGO, observed_before=LONG_AGO + timedelta(days=9)),
        MemoryFilter(observed_before=LONG_AGO + timedelta(days=60), tags=("work",)),
        MemoryFilter(
            min_confidence=0.51,
            min_importance=0.51,
            observed_before=LONG_AGO + timedelta(days=20),
            tags_any=("work", "home"),
        ),
        # admits most memories: the indexes still answer
        MemoryFilter(min_confidence=0.3),
        MemoryFilter(min_importance=0.3),
        MemoryFilter(observed_after=LONG_AGO),
        MemoryFilter(min_confidence=0.3, min_importance=0.3, observed_after=LONG_AGO),
        MemoryFilter(created_after=LONG_AGO, tags_any=("work",)),
    ]
    for query in queries:
        terms, counts = query_terms(query)
        vector = HalfVector(embedder.embed_one(query))
        for f in filters:
            yield (
                query,
                search_store.Search(
                    namespace, vector, terms, counts, f, PER_ARM, EXACT_MAX, BUDGET
                ),
            )
        # a conversation: keyword scores as shares of each candidate's own BM25 mass
        conversation = search_store.Search(
            namespace,
            vector,
            terms,
            counts,
            filters[0],
            PER_ARM,
            EXACT_MAX,
            BUDGET,
            keyword_of_memory=True,
        )
        yield query, conversation


async def overreading_nodes(url: str, namespace: str, costs: str) -> list[str]:
    settings = make_settings(db_pool_min=1, db_pool_max=1)
    pool = await open_pool(settings, url, search=True)
    found: list[str] = []
    try:
        async with pool.connection() as conn:
            await conn.execute(costs)
            for query, search in searches(namespace):
                for arm in ("vector", "keyword"):
                    sql, params = search.statement(arm)
                    plan = await explain_generic(conn, sql, params)
                    nodes = list(executed_nodes(plan))
                    bad: list[PlanNode] = [n for n in nodes if n.rows_read > BOUND]
                    bad += [
                        n for n in nodes if n.node_type == "Seq Scan" and n.relation in SEARCHED
                    ]
                    found += [f"{arm} {query!r} {search.filter.as_json()}: {n}" for n in bad]
    finally:
        await pool.close()
    return found


def set_statistics(url: str, analyzed: bool) -> None:
    """The table as ANALYZE leaves it, or as if ANALYZE never ran (whatever ran before)."""
    with psycopg.connect(url, autocommit=True) as conn:
        # An all-visible table makes index-only scans cheap, so a plan that reads every key
        # of the namespace from the unique index looks cheap too: CI met it after an
        # autovacuum, local runs did not. Vacuum first, so every run meets it.
        for table in SEARCHED:
            conn.execute(f"VACUUM {table}")
        if analyzed:
            conn.execute("ANALYZE")
        else:  # as if it never ran (an earlier test here did, and so did the vacuum)
            for table in SEARCHED:
                conn.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", (table,))
                conn.execute(
                    "UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = %s::regclass",
                    (table,),
                )


# PostgreSQL's own default costs (what a server in Docker or a managed service has), and
# the embedded server's tuned ones (tuning() in runtime/embedded_postgres.py).
COSTS = {
    "default-costs": "SET random_page_cost = 4",
    "embedded-costs": "SET random_page_cost = 1.1",
    # Deployers raise work_mem; hash joins then look cheap to the planner.
    "large-work-mem": "SET work_mem = '1GB'",
}


@pytest.mark.parametrize("costs", list(COSTS))
@pytest.mark.parametrize("analyzed", [False, True], ids=["before-analyze", "after-analyze"])
def test_no_recall_statement_reads_rows_in_proportion_to_the_table(
    big_db: str, costs: str, analyzed: bool
) -> None:
    set_statistics(big_db, analyzed)
    for namespace in ("big", "tiny"):
        bad = asyncio.run(overreading_nodes(big_db, namespace, COSTS[costs]))
        assert not bad, "\n".join(bad[:10])


def test_common_words_are_read_from_the_postings_anded(big_db: str) -> None:
    """A query whose every word is too common for the postings budget reads the memories
    that hold its rarest words together, through the posting lists, at most the budget of
    them: no graph, and nothing in proportion to the namespace."""
    query = "user prefers the project team meeting"
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))

    async def run() -> list[PlanNode]:
        pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=1), big_db, search=True)
        try:
            async with pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT min(df) AS df FROM (SELECT sum(df) AS df FROM keyword_stats "
                    "WHERE namespace = 'big' AND term = ANY(%s) GROUP BY term) s WHERE df > 0",
                    (terms,),
                )
                row = await cur.fetchone()
                assert row is not None and row["df"] > BUDGET  # every word is common
                search = search_store.Search(
                    "big", vector, terms, counts, MemoryFilter(), PER_ARM, EXACT_MAX, BUDGET
                )
                sql, params = search.statement("keyword")
                return list(executed_nodes(await explain_generic(conn, sql, params)))
        finally:
            await pool.close()

    nodes = asyncio.run(run())
    anded = [n for n in nodes if n.relation == "memory_keywords" and n.rows_read]
    assert anded and all(n.rows_read <= BUDGET for n in anded), [str(n) for n in nodes]
    assert any(n.index == KEYWORD_TERMS_INDEX for n in nodes), [str(n) for n in nodes]
    assert not [n for n in nodes if n.index == "ix_long_term_memory_keywords"]


def test_a_small_namespaces_keyword_arm_scans_the_narrow_copies(big_db: str) -> None:
    """A namespace searched exactly scores every memory's keyword vector: read from
    memory_keywords (~0.1 kB a row) when the filters are the copy's, not from the memories'
    own rows (~1.2 kB, six to a page); a filter on a column the copy lacks reads the
    memories' rows, and both score the same."""
    query = "project meeting notes"
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))

    async def run(f: MemoryFilter) -> tuple[list[PlanNode], list[Any]]:
        pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=1), big_db, search=True)
        try:
            search = search_store.Search("tiny", vector, terms, counts, f, PER_ARM, EXACT_MAX, 0)
            async with pool.connection() as conn:
                sql, params = search.statement("keyword")
                nodes = list(executed_nodes(await explain_generic(conn, sql, params)))
                rows = await search_store.arm_candidates(conn, search, "keyword")
        finally:
            await pool.close()
        # the scores, not the ids: memories that tie at the cut-off may come in either order
        return nodes, sorted(r["keyword"] for r in rows)

    nodes, copied = asyncio.run(run(MemoryFilter()))
    memories = ("memory_keywords", "long_term_memory")
    scanned = {n.relation for n in nodes if n.relation in memories and n.rows_read > PER_ARM}
    assert scanned == {"memory_keywords"}, [str(n) for n in nodes]
    # min_confidence 0 admits every memory, from a column only the memory's row holds
    nodes, own = asyncio.run(run(MemoryFilter(min_confidence=0.0)))
    assert any(n.relation == "long_term_memory" and n.rows_read > PER_ARM for n in nodes)
    assert copied and copied == pytest.approx(own)


def test_every_filter_reaches_the_keyword_arms_postings(big_db: str) -> None:
    """The keyword arm's postings come from a subquery that selects only the columns the
    arm and the filters read (stores.filters.FILTER_COLUMNS); a filter on any other column
    would fail every recall that sets it."""
    long_ago, later = datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)
    every = MemoryFilter(
        memory_types=("fact",),
        tags=("work",),
        tags_any=("work", "home"),
        min_confidence=0.1,
        created_after=long_ago,
        created_before=later,
        observed_after=long_ago,
        observed_before=later,
        occurred_after=long_ago,
        occurred_before=later,
        key="user.city",
        key_prefix="user.",
    )
    query = "user prefers breakfast at the weekend"
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))

    async def run() -> None:
        pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=1), big_db, search=True)
        try:
            async with pool.connection() as conn:
                for f in (every, MemoryFilter(status="quarantined"), MemoryFilter(status=None)):
                    search = search_store.Search(
                        "big", vector, terms, counts, f, PER_ARM, EXACT_MAX, BUDGET
                    )
                    for arm in ("vector", "keyword"):
                        await search_store.arm_candidates(conn, search, arm)
        finally:
            await pool.close()

    asyncio.run(run())


async def overreading_near_duplicate_nodes(url: str, namespace: str, costs: str) -> list[str]:
    """The write path's near-duplicate check, as observe runs it (sorting off)."""
    settings = make_settings(db_pool_min=1, db_pool_max=1)
    pool = await open_pool(settings, url)
    embedder = BuiltinEmbedder()
    corpus = Corpus(seed=13)
    values = [corpus.query() for _ in range(5)]
    sql, params = search_store.near_duplicates_statement(
        namespace,
        [f"new.{i}" for i in range(len(values))],
        ["fact"] * len(values),
        [HalfVector(embedder.embed_one(v)) for v in values],
        [twin_term_groups(v) for v in values],
        0.9,
        EXACT_MAX,
    )
    found: list[str] = []
    try:
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(costs)
            await search_store.near_duplicate_settings(conn, on=True)
            nodes = list(executed_nodes(await explain_generic(conn, sql, params)))
            found = [str(n) for n in nodes if n.rows_read > BOUND]
            found += [str(n) for n in nodes if n.node_type == "Seq Scan" and n.relation in SEARCHED]
    finally:
        await pool.close()
    return found


@pytest.mark.parametrize("costs", list(COSTS))
@pytest.mark.parametrize("analyzed", [False, True], ids=["before-analyze", "after-analyze"])
def test_a_write_to_a_small_or_new_namespace_does_not_walk_the_big_ones_graph(
    big_db: str, costs: str, analyzed: bool
) -> None:
    """Each new key is checked for a near-identical memory before it is stored; through
    HNSW alone, a namespace with no or few memories had the graph walked for rows it does
    not have (400 ms a batch of 10, beside 10,000 memories)."""
    set_statistics(big_db, analyzed)
    for namespace in ("tiny", "never-written", "big"):
        bad = asyncio.run(overreading_near_duplicate_nodes(big_db, namespace, COSTS[costs]))
        assert not bad, "\n".join(bad[:10])


def twin_check_nodes(url: str, namespace: str) -> tuple[int, list[PlanNode]]:
    """The near-duplicate check's executed nodes for claims under new keys: each of the
    namespace's first three values again (a twin in words exists), then five claims of
    words nobody used, then three that join the first half of one stored value to the
    second half of another (every word is the namespace's, no memory holds them all); with
    how many of the first kind there were."""
    set_statistics(url, analyzed=True)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT mem_value, memory_type FROM long_term_memory "
            "WHERE namespace = %s AND live ORDER BY id LIMIT 9",
            (namespace,),
        ).fetchall()
    stored = rows[:3]
    embedder = BuiltinEmbedder()
    claims = [(value, kind) for value, kind in stored]
    claims += [(f"zqxv{i} blorfing wexlt{i} quimbly", "fact") for i in range(5)]
    for (one, kind), (other, _) in zip(rows[3::2], rows[4::2], strict=False):
        head, tail = one.split(), other.split()
        claims.append((" ".join(head[: len(head) // 2] + tail[len(tail) // 2 :]), kind))
    sql, params = search_store.near_duplicates_statement(
        namespace,
        [f"new.{i}" for i in range(len(claims))],
        [kind for _, kind in claims],
        [HalfVector(embedder.embed_one(f"new.{i}: {v}")) for i, (v, _) in enumerate(claims)],
        [twin_term_groups(v) for v, _ in claims],
        0.5,
        EXACT_MAX,
    )

    async def plan() -> list[PlanNode]:
        pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=1), url)
        try:
            async with pool.connection() as conn, conn.transaction():
                await search_store.near_duplicate_settings(conn, on=True)
                return list(executed_nodes(await explain_generic(conn, sql, params)))
        finally:
            await pool.close()

    return len(stored), asyncio.run(plan())


def test_a_large_namespaces_graph_is_walked_only_for_claims_with_a_twin_in_words(
    big_db: str,
) -> None:
    """A twin must say the same in the same words, so a new key in a large namespace walks
    the embedding's graph only when the posting lists of keyword_terms (on memory_keywords)
    hold a memory with one of its word groups whole: a claim of words nobody used costs a
    few postings read, not a walk of the graph."""
    stored, nodes = twin_check_nodes(big_db, "big")
    postings = [n for n in nodes if n.index == KEYWORD_TERMS_INDEX]
    walks = [n for n in nodes if n.index == "ix_long_term_memory_embedding"]
    assert postings, "\n".join(map(str, nodes))
    assert sum(n.rows_read for n in postings) <= BOUND
    # the graph is walked once per claim with a twin in words, not for the made-up ones
    assert [n.loops for n in walks] == [stored], "\n".join(map(str, nodes))
    assert not [n for n in nodes if n.rows_read > BOUND], "\n".join(map(str, nodes))


def test_a_small_namespace_is_scanned_only_for_claims_whose_words_it_holds(big_db: str) -> None:
    """A small namespace is searched exactly, every memory of the claim's type read and
    compared: a third of an observe's database time at 3,000 memories. Only a claim of
    which some memory holds a whole word group can have a twin: the narrow copies of the
    keyword columns say which, and a claim with a word no memory of the namespace holds in
    each of its groups is settled by the document frequencies without reading either."""
    stored, nodes = twin_check_nodes(big_db, "tiny")
    scans = [n for n in nodes if n.relation == "long_term_memory" and n.rows_read > 1]
    assert scans, "\n".join(map(str, nodes))
    # the namespace's memories are read once per claim with a twin in words
    assert [n.loops for n in scans] == [stored], "\n".join(map(str, nodes))
    # their copies once per claim of known words: the twins' and the halves joined
    copies = [n for n in nodes if n.relation == "memory_keywords"]
    assert [n.loops for n in copies] == [2 * stored], "\n".join(map(str, nodes))


# Filters that admit at most EXACT_MAX memories of the big namespace, and a condition that
# says which memories they admit
NARROW = {
    "tags=trip": (MemoryFilter(tags=("trip",)), "'trip' = ANY(tags)"),
    "types=event,tags=work": (
        MemoryFilter(memory_types=("event",), tags=("work",)),
        "memory_type = 'event' AND 'work' = ANY(tags)",
    ),
    "min_confidence=0.9": (MemoryFilter(min_confidence=0.9), "confidence >= 0.9"),
    "min_confidence=0.9,tags=work": (
        MemoryFilter(min_confidence=0.9, tags=("work",)),
        "confidence >= 0.9 AND 'work' = ANY(tags)",
    ),
    # in the bucket (0.5-0.55) that holds the other 8,000: counted through the index
    "min_confidence=0.51": (MemoryFilter(min_confidence=0.51), "confidence >= 0.51"),
    "min_importance=0.9": (MemoryFilter(min_importance=0.9), "importance >= 0.9"),
    "min_importance=0.51,tags=work": (
        MemoryFilter(min_importance=0.51, tags=("work",)),
        "importance >= 0.51 AND 'work' = ANY(tags)",
    ),
    "observed in 2001": (
        MemoryFilter(observed_after=LONG_AGO, observed_before=LONG_AGO + timedelta(days=30)),
        "last_observed >= '2001-03-01Z' AND last_observed < '2001-03-31Z'",
    ),
    "occurred in 2001": (
        MemoryFilter(occurred_after=LONG_AGO, occurred_before=LONG_AGO + timedelta(days=30)),
        "occurred_at >= '2001-03-01Z' AND occurred_at < '2001-03-31Z'",
    ),
}


@pytest.mark.parametrize("name", list(NARROW))
def test_a_filter_admitting_few_memories_is_searched_exactly(big_db: str, name: str) -> None:
    """The arms return the best of what the filter admits, as an exact search ranks them:
    not the approximation of an HNSW walk through the other 8,000."""
    f, admitted = NARROW[name]
    query = Corpus(seed=14).query()
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))
    search = search_store.Search("big", vector, terms, counts, f, PER_ARM, EXACT_MAX, BUDGET)
    # what recall may return: a superseded claim of a key the corpus repeats is not live
    live_and_admitted = f"namespace = 'big' AND live AND {admitted}"

    async def run() -> tuple[list[Any], ...]:
        pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=1), big_db, search=True)
        try:
            async with pool.connection() as conn:
                by_vector = await search_store.arm_candidates(conn, search, "vector")
                by_keyword = await search_store.arm_candidates(conn, search, "keyword")
                # `+ 0`: a sequential scan, not the HNSW walk the planner may take for it
                exact = await conn.execute(
                    f"SELECT id FROM long_term_memory WHERE {live_and_admitted} "
                    "ORDER BY (embedding <=> %s) + 0 LIMIT %s",
                    (vector, PER_ARM),
                    prepare=False,
                )
                exact_ids = [r["id"] for r in await exact.fetchall()]
                cur = await conn.execute(
                    f"SELECT id FROM long_term_memory WHERE {live_and_admitted}",
                    prepare=False,
                )
                admitted_ids = [r["id"] for r in await cur.fetchall()]
                cur = await conn.execute(
                    f"SELECT id FROM long_term_memory WHERE {live_and_admitted} "
                    "AND keyword_terms && %s::int[]",
                    (terms,),
                    prepare=False,
                )
                matching = [r["id"] for r in await cur.fetchall()]
        finally:
            await pool.close()
        return by_vector, by_keyword, exact_ids, admitted_ids, matching

    by_vector, by_keyword, exact_ids, admitted_ids, matching = asyncio.run(run())
    assert 0 < len(admitted_ids) <= EXACT_MAX
    assert [r["id"] for r in by_vector] == exact_ids
    # the admitted memories that share a word with the query, best first (all of them, if
    # they are no more than an arm's candidates)
    assert matching, "the query shares no word with what the filter admits"
    found = {r["id"] for r in by_keyword}
    assert found <= set(matching)
    assert len(found) == min(len(matching), PER_ARM)
    scores = [r["keyword"] for r in by_keyword]
    assert scores == sorted(scores, reverse=True)


# A filter memory_facets counts, and its entries each arm reads for it: the counts per
# bucket decide a minimum when they can (migrations 0037, 0038), and the index entries are
# counted only when they cannot; a window is always counted, up to one past the limit.
FACET_READS = {
    # admits all 8,040: the buckets say so; the HNSW walk and the postings answer
    "min_confidence=0.3": (MemoryFilter(min_confidence=0.3), 0),
    "min_confidence=0.5": (MemoryFilter(min_confidence=0.5), 0),
    # inside a bucket that holds nothing, the 8,040 above it: the buckets say so too
    "min_confidence=0.45": (MemoryFilter(min_confidence=0.45), 0),
    # nothing reaches it: read, and nothing found
    "min_confidence=1.0": (MemoryFilter(min_confidence=1.0), 0),
    # admits the FEW at 0.95 and no bucket holds anything else: read once, to search them
    "min_confidence=0.9": (MemoryFilter(min_confidence=0.9), FEW),
    # its own bucket holds the 8,000 at 0.5: the index counts the FEW it admits, then
    # they are read to be searched
    "min_confidence=0.51": (MemoryFilter(min_confidence=0.51), 2 * FEW),
    # the same for the importance, whose built-in estimate is 0.5 or 0.1
    "min_importance=0.3": (MemoryFilter(min_importance=0.3), 0),
    "min_importance=0.9": (MemoryFilter(min_importance=0.9), FEW),
    "min_importance=0.51": (MemoryFilter(min_importance=0.51), 2 * FEW),
    # a window admitting the FEW: counted, then read
    "observed in 2001": (
        MemoryFilter(observed_after=LONG_AGO, observed_before=LONG_AGO + timedelta(days=60)),
        2 * FEW,
    ),
    # one admitting all: counted to one past the limit, and not read again
    "observed since 2001": (MemoryFilter(observed_after=LONG_AGO), EXACT_MAX + 1),
}


@pytest.mark.parametrize("name", list(FACET_READS))
def test_a_facet_filter_reads_its_index_only_as_far_as_it_must(big_db: str, name: str) -> None:
    query = Corpus(seed=14).query()
    terms, counts = query_terms(query)
    vector = HalfVector(BuiltinEmbedder().embed_one(query))
    f, expected = FACET_READS[name]
    search = search_store.Search("big", vector, terms, counts, f, PER_ARM, EXACT_MAX, BUDGET)

    async def run() -> dict[str, float]:
        pool = await open_pool(make_settings(db_pool_min=1, db_pool_max=1), big_db, search=True)
        reads = {}
        try:
            async with pool.connection() as conn:
                for arm in ("vector", "keyword"):
                    sql, params = search.statement(arm)
                    plan = await explain_generic(conn, sql, params)
                    reads[arm] = sum(
                        n.rows_read for n in executed_nodes(plan) if n.relation == "memory_facets"
                    )
        finally:
            await pool.close()
        return reads

    assert asyncio.run(run()) == {arm: expected for arm in ("vector", "keyword")}
