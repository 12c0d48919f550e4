"""SQL that searches long-term memories: recall's two arms, and the write path's check for a
near-identical memory. Both keep small namespaces off the HNSW graphs (see the comments)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pgvector import HalfVector
from psycopg import AsyncRawCursor

from hindsight.db.pool import Connection, shard_settings
from hindsight.stores.arrays import array_literal
from hindsight.stores.filters import (
    FILTER_COLUMNS,
    LIVE_BY_STATUS,
    MemoryFilter,
    filter_sql,
)
from hindsight.stores.memories import MEMORY_COLUMNS_JOINED, NewClaim
from hindsight.stores.narrowing import ROWS_OF, UNNARROWED, Narrowing, narrowing_of
from hindsight.text.tokenize import KEYWORD_DIMENSIONS

# Recall's two arms run as two statements at once, on two connections of the search pool
# (the database has a core for each): the wall time is the slower arm's, not their sum
# (measured at 100k memories: 3.1 ms against 4.7 ms as one statement). Each statement is
# self-contained and also scores its candidates for the other arm, so the results merge
# without another round trip.
#
# Document frequencies (exact: compacted rows plus fresh deltas) turn the query's terms into
# an IDF-weighted sparse vector inside the statement. Each arm has two branches behind
# one-time filters on the namespace's size: small namespaces are scanned exactly through the
# namespace index (an HNSW scan would wade through other namespaces' rows), large ones go
# through HNSW. The search pool's connections disable sorting (see db.pool): the HNSW branch
# can then only use the index, while `+ 0` keeps the exact branch off HNSW.
_QUERY_TERMS = """
WITH stats AS (
    SELECT s.term, sum(s.df)::float8 AS df FROM keyword_stats s
    WHERE s.namespace = %(ns)s AND s.term = ANY(%(terms0)s::int[])
    GROUP BY s.term
),
corpus AS (SELECT coalesce((SELECT df FROM stats WHERE term = 0), 0) AS n),
qweights AS (
    SELECT q.term, q.qtf * ln(1 + greatest((SELECT n FROM corpus) - s.df + 0.5, 0)
                                   / (s.df + 0.5)) AS w
    FROM unnest(%(terms)s::int[], %(qtf)s::float8[]) AS q(term, qtf)
    JOIN stats s ON s.term = q.term
    WHERE s.df > 0
),
qvec AS (
    SELECT CASE WHEN count(*) = 0 THEN NULL ELSE
             ('{' || string_agg((term + 1)::text || ':' || w::text, ',')
              || '}/%(kdims)s')::sparsevec
           END AS v,
           coalesce(sum(w), 0) AS norm
    FROM qweights
),
"""

# The vector arm hands on the memories' rows and its candidates are scored from them
# (_SCORED_ROWS). The HNSW walk has fetched each row already, so its branch passes them
# on as they come instead of having them probed again by primary key: at 1M memories in
# one namespace the arm alone 5.18 -> 4.56 and 4.56 -> 4.21 ms p50, at 100k 0.07-0.16 ms
# less; identical candidates and scores (benchmarks/README item 40). The exact branch
# ranks ids and probes the best (narrowing.ROWS_OF).
_DENSE_ARM = (
    """{narrow}
arm AS (
    """
    + ROWS_OF.replace(
        "{ids}",
        """(SELECT m.id FROM long_term_memory m
     WHERE m.namespace = %(ns)s{filters} AND {exact_gate}
     ORDER BY (m.embedding <=> %(qvec)s::halfvec) + 0 LIMIT %(n)s)""",
    )
    + """
    UNION ALL
    (SELECT m.* FROM long_term_memory m
     WHERE m.namespace = %(ns)s{filters} AND {index_gate}
     ORDER BY m.embedding <=> %(qvec)s::halfvec LIMIT %(n)s){dense_branches}
)
"""
)

# The keyword arm of a large namespace reads the posting lists (GIN on keyword_terms) of the
# query's terms that weigh most for the postings they cost (`rare`), up to a budget of
# postings, and scores those memories exactly, from
# memory_keywords: a narrow copy of each memory's keyword columns, ~0.1 kB a row where the
# memory's own is ~1.2 kB (migration 0035; measured at 100k, the arm alone 1.2-1.3x faster
# at p50, recall end to end 5-10%: English p50 / p99 11.5 / 24.6 -> 10.3 / 20.9 ms,
# benchmarks/README item 36). The best BM25 matches nearly always hold a rare term, and an
# HNSW graph over sparse vectors is a poor guide (measured at 100k memories: 0.54 of the
# exact top 10 at ef_search 40, against 0.98 from 3,000 postings). The postings are read
# from the GIN index alone (OFFSET 0 keeps the namespace and filter conditions out of the
# scan): given them, a generic plan ANDed the postings with the namespace index, reading
# every id of the namespace (measured: all 8,000 of a test namespace). The subquery selects
# only what the arm and the filters read: `SELECT *` cost ~0.3 µs more per posting (the
# keyword arm alone, 150 queries interleaved: English 100k 3.16 -> 2.81 ms p50, Zipf 1M
# 2.02 -> 1.81; both arms at once, English 100k, 5.14 -> 4.88).
#
# A small namespace's keyword vectors are all scored (the exact branch), from
# memory_keywords when the filters read only what it copies, as the postings are: the
# memories' own rows are ~1.2 kB, six to a page with the embedding (measured, one namespace
# of 5,000 English sentences: the branch 5.1 -> 1.5 ms, 992 heap pages -> the copy's;
# recall p50 -6%, benchmarks/README item 47).
#
# The terms are taken by the weight a posting read can add (query weight / df) until the
# budget is spent (a term that alone holds more is left out). When a question's terms weigh
# alike (no word said twice; the first person's `user` weighs half), those are its rarest; a
# conversation's weigh by their turns, and taken rarest first, a word an old turn said in
# passing used the budget the word the user asks about now needed (at 100k, 7-15 earlier
# turns: 0.85-0.93 -> 0.88-0.97 of the arm's exact top 10 found, benchmarks/README item 46).
#
# When even the rarest term is too common for the budget (4-5% of the matrix's queries at
# 100k, 14% at 1M), the best matches are the memories that hold several of the query's
# words, so the arm reads the memories holding its rarest terms together (`common`: the GIN
# posting lists ANDed), as few terms as make that set fit the budget were the words
# independent, and at most the budget of them (a bitmap heap scan stops there). Measured
# on those queries, the share of the exact fused top 10 the answers find, from the sparse
# HNSW graph that answered them before to this: 0.68-0.81 -> 0.78-0.94 at 100k, 0.38 ->
# 0.53 at 1M, at about twice their time (benchmarks/README item 41). Keeping the graph up
# to date was a quarter of what a written memory cost the database (migration 0040).
#
# The ANDed posting lists are read whole into a bitmap (GIN drives the AND by the rarest
# and skips through the others, but one seek a segment reads most of a list): at 1M about
# 60 ns a posting, where a posting the budget admits costs a row read and scored (~1 µs).
# So the terms ANDed may hold COMMON_POSTINGS times the budget in postings, and two of them
# unless the query has one (a capped sample of one common term's memories is 3,000 rows
# read for little); a query whose rarest words are commoner gets no candidates of this
# arm's own, and the vector arm's candidates still carry keyword scores.
COMMON_POSTINGS = 30
_SPARSE_ARM = """{narrow}
rare AS (
    SELECT array_agg(term) AS terms FROM (
        SELECT q.term, sum(s.df) OVER (ORDER BY q.w / s.df DESC, q.term) AS postings
        FROM qweights q JOIN stats s ON s.term = q.term
        WHERE q.term <> 0 AND s.df <= %(budget)s
    ) r
    WHERE postings <= %(budget)s
),
common AS (
    SELECT CASE WHEN count(*) >= least(2, (SELECT count(*) FROM stats WHERE term <> 0 AND df > 0))
                THEN array_agg(term) END AS terms FROM (
        SELECT term, ln(greatest((SELECT n FROM corpus), 1)) + sum(ln(least(df / greatest(
                   (SELECT n FROM corpus), 1), 1))) OVER (
                   ORDER BY df, term ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
               AS ln_held_before,
               sum(df) OVER (ORDER BY df, term) AS postings
        FROM stats WHERE term <> 0 AND df > 0
    ) c
    -- the estimate in logarithms: a product of many shares underflows float8
    WHERE (ln_held_before IS NULL OR ln_held_before > ln(greatest(%(budget)s, 1)::float8))
      AND postings <= %(budget)s * {common_postings}
),
arm AS (
    (SELECT m.id FROM {exact_rows} m
     WHERE m.namespace = %(ns)s{filters} AND {exact_gate}
       AND (SELECT v FROM qvec) IS NOT NULL AND m.keywords <#> (SELECT v FROM qvec) < 0
     ORDER BY (m.keywords <#> (SELECT v FROM qvec)) + 0 LIMIT %(n)s)
    UNION ALL
{postings}
    UNION ALL
{common}{sparse_branches}
)
"""

# The keyword arm's ids (and on Citus the vector arm's) are fetched one by one through the
# primary key. A plain join leaves the plan to estimates, and a generic plan does not know
# the LIMIT: with PostgreSQL's default
# random_page_cost it hash-joined 20 ids against all 30,000 rows of a namespace (86 ms for a
# 2.4 ms arm). A lateral subquery that cannot be pulled up (OFFSET 0) has only one plan: a
# nested loop of n index probes, whatever the table's size or statistics.
#
# The keyword score is the BM25 score as a share of the query's own (its IDF mass): how
# much of the question a memory answers. A conversation is no question; no memory covers
# a dialogue, and a long one made every share tiny, so its keyword arm counted for nothing
# beside the vector arm (MADial-Bench, built-in embedder: R@5 0.41 in Chinese against 0.57
# for the keyword arm alone). For a conversation (`keyword_of_memory`) the score is the
# share of the memory's own BM25 mass (its terms' IDFs by their weights) that the
# conversation holds: how much of the memory it talks about.
#
# Each candidate also carries its specificity: the mean IDF of its own terms, as a share of
# the IDF of a term only one memory holds (0..1; NULL for a memory without terms). The
# specificity and the mass both take one probe of the document frequencies per term of the
# memory (~15 a candidate, ~300 a statement), so they are computed together from one set of
# probes, and recall keeps them in memory_access (stores.specificity) and reads them back
# while they hold: the memory unchanged since, computed within the hour, its namespace
# within a quarter of that size (migrations 0023, 0041; measured at 100k: the specificity
# 1.2 ms of the two statements' 7.1; the mass, for a conversation of 8 turns, 1.6-1.8 ms of
# each arm's execution). `terms` is the pair (specificity, mass) and `terms_new` marks the
# pairs computed here, for the service to keep. Nothing is computed for a question when
# specificity is off (HINDSIGHT_SPECIFICITY_WEIGHT=0); the specificity is then NULL.
_SCORING = """
SELECT m.* FROM arm CROSS JOIN LATERAL (
    SELECT {columns},
           1 - (m.embedding <=> %(qvec)s::halfvec) AS similarity,
           CASE WHEN (SELECT norm FROM qvec) > 0 AND NOT %(keyword_of_memory)s
                THEN -(m.keywords <#> (SELECT v FROM qvec)) / (SELECT norm FROM qvec)
                WHEN (SELECT norm FROM qvec) > 0
                THEN coalesce(-(m.keywords <#> (SELECT v FROM qvec)) / nullif(t.terms[2], 0), 0)
                ELSE 0 END AS keyword,
           CASE WHEN %(specificity)s THEN t.terms[1] END AS specificity,
           t.terms,
           t.terms_new,
           (SELECT n FROM corpus)::bigint AS corpus_n
    FROM {candidates} m
    LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id
    CROSS JOIN LATERAL (
        SELECT CASE WHEN a.specificity_of = m.updated_at
                     AND a.specificity_at > now() - interval '1 hour'
                     AND a.specificity_n BETWEEN (SELECT n FROM corpus) * 0.8
                                             AND (SELECT n FROM corpus) * 1.25
                     -- kept before 0041 without the mass: a question has no use for it
                     AND (a.keyword_mass IS NOT NULL OR NOT %(keyword_of_memory)s)
                    THEN ARRAY[a.specificity, a.keyword_mass] END AS terms
    ) kept
    CROSS JOIN LATERAL (
        SELECT coalesce(kept.terms, CASE WHEN %(specificity)s OR %(keyword_of_memory)s THEN (
                   SELECT ARRAY[
                       avg(d.idf) / ln(1 + greatest((SELECT n FROM corpus) - 0.5, 0.5) / 1.5),
                       coalesce(-(m.keywords <#> ('{' || string_agg(
                           (d.term + 1)::text || ':' || d.idf::text, ',' ORDER BY d.term
                       ) FILTER (WHERE d.idf > 0) || '}/%(kdims)s')::sparsevec), 0)]
                   FROM (SELECT s.term,
                                ln(1 + greatest((SELECT n FROM corpus) - sum(s.df) + 0.5, 0)
                                       / (sum(s.df) + 0.5)) AS idf
                         FROM keyword_stats s
                         WHERE s.namespace = %(ns)s AND s.term = ANY(m.keyword_terms)
                         GROUP BY s.term) d) END) AS terms,
               kept.terms IS NULL AND (%(specificity)s OR %(keyword_of_memory)s) AS terms_new
        -- kept apart: pulled up, each use of `terms` would run the probes again
        OFFSET 0
    ) t
    {probe}OFFSET 0
) m
"""
# an arm of ids, each probed by primary key (the keyword arm's)
_SCORED = _SCORING.replace("{candidates}", "long_term_memory").replace(
    "{probe}", "WHERE m.namespace = %(ns)s AND m.id = arm.id "
)
# an arm of the memories' rows, scored as they come (the vector arm's)
_SCORED_ROWS = _SCORING.replace("{candidates}", "(SELECT arm.*)").replace("{probe}", "")


# On a Citus coordinator a statement is routed to one shard only when every reference to a
# distributed table in it names the namespace: a subquery kept apart from the namespace
# condition (OFFSET 0, above and in stores.narrowing) names it again there. Not on a
# single PostgreSQL, whose generic plans would then AND the posting lists with the
# namespace's index.
_SAME_SHARD = "m.namespace = %(ns)s AND "


# The postings branch, in one of two forms. When the filters read only what
# memory_keywords copies (recall's default: expiry and liveness; memory types and tags),
# each posting is scored and filtered from the copy alone.
_COPIED = ("memory_type", "tags", "live", "expires_at")
_COPY_POSTINGS = """    (SELECT m.id FROM (
         {rows}) m
     WHERE m.namespace = %(ns)s{filters} AND {index_gate}
     ORDER BY (m.keywords <#> (SELECT v FROM qvec)) + 0 LIMIT %(n)s)"""
# Otherwise the filters' columns come from the memory's own row, a primary-key probe each,
# so the postings are scored from the copy and ranked first, and the memories are probed
# best first until n pass: a filter that admits most memories costs about n probes, not
# one a posting. (Probing every posting took the arm alone at 100k from 4.4-6.9 to
# 10.9-16.1 ms p50 with min_confidence set, 1.6-2x the arm before the copy existed;
# benchmarks/README item 36.) The ranked subquery's order carries through the nested loop,
# so the LIMIT stops it early. A filter that admits few still probes every posting (at
# 100k, min_confidence admitting 1.1%: 2x the arm before the copy, item 37), so a
# min_confidence, min_importance or observed_* window admitting few is narrowed instead
# (stores.narrowing, migrations 0036, 0038); only one that admits too many comes here.
_PROBED_POSTINGS = f"""    (SELECT m.id FROM (
         SELECT c.id, c.d, {", ".join(f"l.{c}" for c in FILTER_COLUMNS)} FROM (
             SELECT m.id, m.keywords <#> (SELECT v FROM qvec) AS d FROM (
                 {{rows}}) m
             WHERE m.namespace = %(ns)s AND {{index_gate}}
             ORDER BY m.keywords <#> (SELECT v FROM qvec) OFFSET 0) c
         CROSS JOIN LATERAL (
             SELECT {", ".join(f"t.{c}" for c in FILTER_COLUMNS)} FROM long_term_memory t
             WHERE t.namespace = %(ns)s AND t.id = c.id OFFSET 0) l) m
     WHERE true{{filters}}
     ORDER BY m.d LIMIT %(n)s)"""
_READ = re.compile(r"\bm\.(\w+)")
# What the postings branch reads: of the rare terms, every memory holding one; of the
# common terms, the memories holding them all, at most the budget of them.
_HOLDS_RARE = "m.keyword_terms && (SELECT terms FROM rare)"
_HOLDS_COMMON = "m.keyword_terms @> (SELECT terms FROM common) AND (SELECT terms FROM rare) IS NULL"


def _rows(copied: bool, holds: str, *, capped: bool) -> str:
    """The postings' rows of memory_keywords, found through the GIN index (OFFSET 0 keeps
    the namespace's conditions out of the scan). `capped`: the first budget of this
    namespace's rows that pass the filters the copy answers; the namespace is applied
    before the cap, or other namespaces' memories holding the same words would crowd
    this one's out (the posting lists hold every namespace's)."""
    columns = "".join(f", m.{c}" for c in _COPIED) if copied else ""
    rows = (
        f"SELECT m.id, m.namespace, m.keywords{columns} FROM memory_keywords m "
        f"WHERE {{same_shard}}{holds} OFFSET 0"
    )
    if not capped:
        return rows
    early = "{filters}" if copied else ""
    return f"SELECT m.* FROM ({rows}) m WHERE m.namespace = %(ns)s{early} LIMIT %(budget)s"


# by whether the filters are the copy's: the rare terms' rows and the common terms'
_ROWS = {
    copied: (_rows(copied, _HOLDS_RARE, capped=False), _rows(copied, _HOLDS_COMMON, capped=True))
    for copied in (True, False)
}


def _postings(filters: str) -> str:
    """The postings branch for `filters` (as filter_sql renders them)."""
    return _COPY_POSTINGS if set(_READ.findall(filters)) <= set(_COPIED) else _PROBED_POSTINGS


def _statement(*parts: str) -> str:
    """An arm's statement with everything that never changes filled in (left: the filters
    and how they narrow the search, which are the request's)."""
    return (
        "".join(parts)
        .replace("{columns}", MEMORY_COLUMNS_JOINED)
        .replace("%(kdims)s", str(KEYWORD_DIMENSIONS))
        .replace("{common_postings}", str(COMMON_POSTINGS))
    )


def _narrowed(template: str, narrowing: Narrowing) -> str:
    return (
        template.replace("{narrow}", narrowing.ctes)
        .replace("{exact_gate}", narrowing.exact_gate)
        .replace("{index_gate}", narrowing.index_gate)
        .replace("{dense_branches}", narrowing.dense_branches)
        .replace("{sparse_branches}", narrowing.sparse_branches)
    )


_TEMPLATES = {
    "vector": _statement(_QUERY_TERMS, _DENSE_ARM, _SCORED_ROWS),
    "keyword": _statement(_QUERY_TERMS, _SPARSE_ARM, _SCORED),
    # On a Citus coordinator the vector arm's rows are probed again by primary key: scored
    # from the arm's rows alone, the lateral subquery names no distributed table, and Citus
    # planned the arm apart (7 subplans) instead of routing the statement to one shard.
    "vector sharded": _statement(_QUERY_TERMS, _DENSE_ARM, _SCORED),
}
# the statements of a recall whose filters narrow nothing, filled in once
ARMS = {arm: _narrowed(template, UNNARROWED) for arm, template in _TEMPLATES.items()}


@dataclass(frozen=True)
class Search:
    """One recall's query, as both arms need it."""

    namespace: str
    # None when the query could not be embedded: the keyword arm runs alone and every
    # similarity comes back NULL
    query_vector: HalfVector | None
    terms: list[int]
    term_counts: list[float]
    filter: MemoryFilter
    per_arm: int
    exact_max: int
    postings_budget: int
    specificity: bool = True  # score each candidate's specificity
    # the keyword score as a share of the memory's BM25 mass, not the query's (a
    # conversation, see _SCORED)
    keyword_of_memory: bool = False

    def statement(self, arm: str, *, sharded: bool = False) -> tuple[str, dict[str, Any]]:
        """The arm's statement and its parameters; `sharded`: for a Citus coordinator."""
        params: dict[str, Any] = {
            "ns": self.namespace,
            "terms": array_literal(self.terms),
            "terms0": array_literal([*self.terms, 0]),
            "qtf": array_literal(self.term_counts),
            "qvec": self.query_vector,
            "n": self.per_arm,
            "exact_max": self.exact_max,
            "budget": self.postings_budget,
            "specificity": self.specificity,
            "keyword_of_memory": self.keyword_of_memory,
        }
        filters = filter_sql(self.filter, params, "m")
        narrowing = narrowing_of(self.filter, params)
        which = "vector sharded" if sharded and arm == "vector" else arm
        sql = ARMS[which] if narrowing is UNNARROWED else _narrowed(_TEMPLATES[which], narrowing)
        same_shard = _SAME_SHARD if sharded else ""
        return filled(sql, filters, narrowing.index_gate, same_shard=same_shard), params


def filled(sql: str, filters: str, index_gate: str, *, same_shard: str = "") -> str:
    """An arm's statement with the request's filters (as filter_sql renders them) and what
    they decide: whether the keyword vectors are read from memory_keywords' copies (the
    exact branch, the postings branches) or the memories' own rows."""
    form = _postings(filters)
    copied = form is _COPY_POSTINGS
    postings = form.replace("{index_gate}", index_gate)
    rare, common = (postings.replace("{rows}", rows) for rows in _ROWS[copied])
    sql = sql.replace("{postings}", rare).replace("{common}", common)
    sql = sql.replace("{exact_rows}", "memory_keywords" if copied else "long_term_memory")
    return sql.replace("{filters}", filters).replace("{same_shard}", same_shard)


_NAMED = re.compile(r"%\((\w+)\)s")


@lru_cache(maxsize=256)
def numbered(sql: str) -> tuple[str, tuple[str, ...]]:
    """`sql` with its named placeholders numbered as PostgreSQL numbers them ($1, $2, ...),
    and the names in that order: what psycopg would make of it on every call. psycopg keeps
    its own conversion only of statements up to 4,096 bytes, and the keyword arm's is
    ~4,960 (the vector arm's too, with a filter), so each call re-parsed it: 34 µs of
    regular expressions a statement, 3% of a warm keyword arm's 2.3 ms (measured, 1,000
    `madeup` queries at 100k, interleaved). Converted once per distinct statement text
    (the arms' filters change it only by which filters are set), sent with a raw cursor."""
    names: dict[str, int] = {}

    def number(m: re.Match[str]) -> str:
        return f"${names.setdefault(m.group(1), len(names) + 1)}"

    return _NAMED.sub(number, sql), tuple(names)


async def arm_candidates(conn: Connection, search: Search, arm: str) -> list[dict[str, Any]]:
    """One arm's candidates ("vector" or "keyword"), each with its similarity (cosine) and
    keyword score (BM25 normalised by the query's IDF mass). Run on the search pool."""
    on_shards = shard_settings(conn)
    sql, params = search.statement(arm, sharded=on_shards is not None)
    query, names = numbered(sql)
    values = [params[name] for name in names]
    if on_shards is None:
        async with AsyncRawCursor(conn) as cur:
            await cur.execute(query, values, binary=True)
            return await cur.fetchall()
    # On Citus the search pool's settings reach the shard as SET LOCAL, in a transaction
    async with conn.transaction():
        await conn.execute(on_shards)
        async with AsyncRawCursor(conn) as cur:
            await cur.execute(query, values, binary=True)
            return await cur.fetchall()


# The claims' embeddings go as a binary halfvec[] (`%b`): psycopg sends a list as text
# otherwise, and 500 vectors of 384 dimensions took 133 ms to print as text in Python
# (0.4 ms as binary), before the server parsed them back.
#
# Like recall's arms, two branches behind a one-time filter on the namespace's size
# (keyword_stats' term 0 counts its memories): a small namespace is scanned exactly through
# the namespace index, a large one through HNSW. HNSW alone made every write to a new or
# small namespace walk the graph of everyone else's rows looking for its few (measured:
# 400 ms per batch of 10 into a new namespace beside 10,000 memories, against 50 ms).
#
# A twin is folded only if it also says the same in the same words (`text.twins`), so a
# claim is searched for only when some memory of its type holds every term of one of its
# word groups (`retrieval.keywords.twin_term_groups`); a claim with no such memory cannot
# be folded whatever the search finds. In a large namespace the posting lists of the GIN
# index on keyword_terms answer that, ANDed (of each group's GROUP_TERMS rarest terms),
# reading only the memories that hold them all (OFFSET 0 keeps the namespace's conditions
# out of the index scan, as in the keyword arm), and each is checked for the whole group.
# A small namespace's narrow copies (memory_keywords) are read through its primary key
# instead, each checked for the whole group (coalesce keeps the check off the GIN index,
# whose posting lists hold every namespace's memories): ~0.25 us a memory, where the exact
# scan it spares reads the memory's own row and compares embeddings (English sentences
# beside 3,000: the check 3.33 -> 2.10 ms p50, an observe's database CPU -19% to -25%;
# benchmarks/README item 43).
#
# In a namespace of any size, a word group that holds a word no live memory of the
# namespace holds (its document frequency is 0, and the frequencies count exactly the
# live memories' terms) cannot be held whole, so a claim with such a word in every group
# is searched for no further, from the document frequencies alone: neither the small
# namespace's copies nor the large one's posting lists are read. It pays where claims bring
# new words; English sentences into 3,000 of their kind rarely do (the check itself 2.61
# -> 2.55 ms p50, 3.08 -> 2.80 mean, when it spared the exact scan; benchmarks/README
# item 42).
_NEAR_DUPLICATES = f"""
WITH size AS (
    SELECT coalesce(sum(s.df), 0) AS n FROM keyword_stats s
    WHERE s.namespace = %(ns)s AND s.term = 0
),
x AS (
    SELECT x.* FROM unnest(%(keys)s::text[], %(types)s::text[], %(embeddings)b::halfvec[],
                           %(worded)s::bool[])
                    WITH ORDINALITY AS x(key, memory_type, embedding, worded, ord)
    -- A scalar subquery, not NOT EXISTS: the planner turns NOT EXISTS into an anti-join,
    -- and before ANALYZE it hashed every live key of the namespace to check ten (CI saw
    -- 8,000 rows read). A scalar subquery stays one unique-index probe per key.
    WHERE (SELECT true FROM long_term_memory k WHERE k.namespace = %(ns)s
           AND k.mem_key = x.key AND k.live LIMIT 1) IS NULL
      AND (NOT x.worded OR (
        SELECT true FROM unnest(%(group_of)s::int[], %(groups)s::text[]) AS g(ord, terms)
        CROSS JOIN LATERAL (
            SELECT array_agg(r.term) AS terms, min(r.df) AS least_df, g.terms::int[] AS whole
            FROM (
                SELECT t.term, (SELECT coalesce(sum(s.df), 0) FROM keyword_stats s
                                WHERE s.namespace = %(ns)s AND s.term = t.term) AS df
                FROM unnest(g.terms::int[]) AS t(term)
                ORDER BY 2 LIMIT %(group_terms)s) r
        ) rare
        WHERE g.ord = x.ord AND rare.least_df > 0
          AND CASE WHEN (SELECT n FROM size) <= %(exact_max)s THEN EXISTS (
            SELECT 1 FROM memory_keywords m
            WHERE m.namespace = %(ns)s AND m.live
              AND m.memory_type = x.memory_type
              AND (m.expires_at IS NULL OR m.expires_at > now())
              AND coalesce(m.keyword_terms, '{{}}') @> rare.whole) ELSE EXISTS (
            SELECT 1 FROM (
                SELECT m.namespace, m.live, m.memory_type, m.expires_at, m.keyword_terms
                FROM memory_keywords m
                WHERE {{same_shard}}m.keyword_terms @> rare.terms OFFSET 0
            ) m
            WHERE m.namespace = %(ns)s AND m.live
              AND m.memory_type = x.memory_type
              AND (m.expires_at IS NULL OR m.expires_at > now())
              AND m.keyword_terms @> rare.whole
            LIMIT 1) END
        LIMIT 1) IS NOT NULL)
)
SELECT x.ord::int - 1 AS position, d.id, d.mem_key AS key, d.mem_value AS value,
       d.similarity
FROM x CROSS JOIN LATERAL (
    (SELECT m.id, m.mem_key, m.mem_value, 1 - (m.embedding <=> x.embedding) AS similarity
     FROM long_term_memory m
     WHERE m.namespace = %(ns)s AND {LIVE_BY_STATUS}
       AND m.memory_type = x.memory_type
       AND (m.expires_at IS NULL OR m.expires_at > now())
       AND (SELECT n FROM size) <= %(exact_max)s
     ORDER BY (m.embedding <=> x.embedding) + 0
     LIMIT 1)
    UNION ALL
    (SELECT m.id, m.mem_key, m.mem_value, 1 - (m.embedding <=> x.embedding) AS similarity
     FROM long_term_memory m
     WHERE m.namespace = %(ns)s AND {LIVE_BY_STATUS}
       AND m.memory_type = x.memory_type
       AND (m.expires_at IS NULL OR m.expires_at > now())
       AND (SELECT n FROM size) > %(exact_max)s
     ORDER BY m.embedding <=> x.embedding
     LIMIT 1)
) d
WHERE d.similarity >= %(threshold)s
"""


# A group's rarest few terms (by the namespace's document frequencies) stand for it: a twin
# holding the group holds them, and ANDing the posting lists of common words cost more
# than the walk it saved. The check alone on 100k Zipf memories, 500 new claims, median
# of 5: every claim walking the graph 344 ms; the whole groups 256; the rarest 1 term 504
# (too many claims kept), 2 terms 95, 3 terms 80, 5 terms 90.
GROUP_TERMS = 3


def near_duplicates_statement(
    namespace: str,
    keys: list[str],
    types: list[str],
    embeddings: list[HalfVector],
    word_groups: list[list[list[int]] | None],
    threshold: float,
    exact_max: int,
    *,
    sharded: bool = False,
) -> tuple[str, dict[str, Any]]:
    """`word_groups`: each claim's `twin_term_groups` (None: it walks the graph regardless);
    `sharded`: for a Citus coordinator."""
    group_of: list[int] = []
    groups: list[str] = []
    for position, claim_groups in enumerate(word_groups, start=1):
        for terms in claim_groups or ():
            group_of.append(position)
            groups.append(array_literal(terms))
    sql = _NEAR_DUPLICATES.replace("{same_shard}", _SAME_SHARD if sharded else "")
    return sql, {
        "ns": namespace,
        "keys": keys,
        "types": types,
        "embeddings": embeddings,
        "worded": [g is not None for g in word_groups],
        "group_of": group_of,
        "groups": groups,
        "threshold": threshold,
        "exact_max": exact_max,
        "group_terms": GROUP_TERMS,
    }


async def near_duplicate_settings(conn: Connection, *, on: bool) -> None:
    """Sorting and sequential scans off (`on`) or back on, one statement each: they go out
    in the caller's pipeline, where a string of several statements is refused."""
    value = "off" if on else "on"
    sets = [f"SET LOCAL enable_sort = {value}", f"SET LOCAL enable_seqscan = {value}"]
    on_shards = shard_settings(conn)
    if on and on_shards is not None:
        sets += on_shards.split("; ")  # the write pool's HNSW settings, for the shard's search
    for statement in sets:
        await conn.execute(statement)  # type: ignore[arg-type]


async def _searched_with_settings(
    conn: Connection, sql: str, params: dict[str, Any]
) -> list[dict[str, Any]]:
    """`sql`'s rows, run with sorting and sequential scans off and restored after. The
    settings and the search go out in one pipeline: one round trip, not three (a single
    observe made fifteen, and each is a network's latency when the database is remote)."""
    async with conn.pipeline():
        await near_duplicate_settings(conn, on=True)
        cur = await conn.execute(sql, params)  # type: ignore[arg-type]
        await near_duplicate_settings(conn, on=False)
    return await cur.fetchall()


async def near_duplicates(
    conn: Connection,
    namespace: str,
    claims: list[NewClaim],
    word_groups: list[list[list[int]] | None],
    threshold: float,
    exact_max: int,
) -> dict[int, dict[str, Any]]:
    """For claims whose key is new: the closest active memory of the same type, when at
    least `threshold` similar. Keyed by the claim's position. In a large namespace, only
    for claims some memory of whose type holds one of their `word_groups` whole (the
    others have no twin in the same words). Runs with sorting and
    sequential scans disabled (restored after), as the search pool runs recall: a large
    namespace is then searched through HNSW and a small one through the namespace index,
    even by a generic plan that cannot tell them apart."""
    sql, params = near_duplicates_statement(
        namespace,
        [c.key for c in claims],
        [c.memory_type for c in claims],
        [c.embedding for c in claims],
        word_groups,
        threshold,
        exact_max,
        sharded=shard_settings(conn) is not None,
    )
    rows = await _searched_with_settings(conn, sql, params)
    if not rows:
        return {}
    # Lock the twins (in id order) and read them again: one deleted or changed since the
    # search is no twin any more; reinforcing it would bring back what was just deleted.
    cur = await conn.execute(
        "SELECT id, mem_key AS key, mem_value AS value FROM long_term_memory "
        "WHERE namespace = %s AND id = ANY(%s) AND status = 'active' ORDER BY id FOR UPDATE",
        (namespace, sorted({row["id"] for row in rows})),
    )
    live = {(r["id"], r["key"], r["value"]) for r in await cur.fetchall()}
    return {row["position"]: row for row in rows if (row["id"], row["key"], row["value"]) in live}


# A new key's contenders: live memories of the same type under the same subject path (the
# key's text up to its last separator), the closest first. Small namespaces are scanned
# exactly; a large one reads the HNSW index's nearest 40 and keeps those under the subject,
# so a contender far down the graph's order can be missed there (the check is a safety net,
# not a guarantee, and misses rather than flags).
_CONTENDERS = f"""
WITH size AS (
    SELECT coalesce(sum(s.df), 0) AS n FROM keyword_stats s
    WHERE s.namespace = %(ns)s AND s.term = 0
),
x AS (
    SELECT x.* FROM unnest(%(keys)s::text[], %(prefixes)s::text[], %(types)s::text[],
                           %(embeddings)b::halfvec[])
                    WITH ORDINALITY AS x(key, prefix, memory_type, embedding, ord)
    WHERE (SELECT true FROM long_term_memory k WHERE k.namespace = %(ns)s
           AND k.mem_key = x.key AND k.live LIMIT 1) IS NULL
)
SELECT x.ord::int - 1 AS position, d.*
FROM x CROSS JOIN LATERAL (
    (SELECT {{columns}}, 1 - (m.embedding <=> x.embedding) AS similarity
     FROM long_term_memory m
     WHERE m.namespace = %(ns)s AND {LIVE_BY_STATUS}
       AND m.memory_type = x.memory_type AND m.mem_key <> x.key
       AND starts_with(m.mem_key, x.prefix)
       AND (m.expires_at IS NULL OR m.expires_at > now())
       AND (SELECT n FROM size) <= %(exact_max)s
     ORDER BY (m.embedding <=> x.embedding) + 0
     LIMIT 3)
    UNION ALL
    (SELECT c.* FROM (
        SELECT {{columns}}, 1 - (m.embedding <=> x.embedding) AS similarity
        FROM long_term_memory m
        WHERE m.namespace = %(ns)s AND {LIVE_BY_STATUS}
          AND m.memory_type = x.memory_type
          AND (m.expires_at IS NULL OR m.expires_at > now())
          AND (SELECT n FROM size) > %(exact_max)s
        ORDER BY m.embedding <=> x.embedding
        LIMIT 40) c
     WHERE c.key <> x.key AND starts_with(c.key, x.prefix)
     ORDER BY c.similarity DESC LIMIT 3)
) d
WHERE d.similarity >= %(threshold)s
ORDER BY x.ord, d.similarity DESC
"""

_CONTENDER_COLUMNS = (
    "m.id, m.mem_key AS key, m.mem_value AS value, m.memory_type, m.source, "
    "m.source_capped, m.verified, m.permanent, m.confidence::float8 AS confidence, "
    "m.observation_count"
)


async def contenders(
    conn: Connection,
    namespace: str,
    claims: list[NewClaim],
    prefixes: list[str],
    threshold: float,
    exact_max: int,
) -> dict[int, list[dict[str, Any]]]:
    """For claims whose key is new: up to 3 live memories of the same type whose key starts
    with the claim's prefix (its subject path and separator), at least `threshold` similar,
    closest first; keyed by the claim's position. Not locked: the caller locks the one it
    acts on."""
    rows = await _searched_with_settings(
        conn,
        _CONTENDERS.replace("{columns}", _CONTENDER_COLUMNS),
        {
            "ns": namespace,
            "keys": [c.key for c in claims],
            "prefixes": prefixes,
            "types": [c.memory_type for c in claims],
            "embeddings": [c.embedding for c in claims],
            "threshold": threshold,
            "exact_max": exact_max,
        },
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["position"], []).append(row)
    return found
