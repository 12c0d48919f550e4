"""Recall's filters, narrowed: a filter that admits few rows of a large namespace is searched
exactly among them instead of through the HNSW graphs.

Through HNSW, a filter is checked on the rows the walk meets, and pgvector's iterative scan
walks on until k of them pass, up to hnsw.max_scan_tuples. The fewer a filter admits, the
longer the walk, and the more of what it admits the walk never meets: on one namespace of
100k English sentences, a filter admitting 5% took the vector arm 13-690 ms and missed 3 of
20 memories asked for (benchmarks/README.md, items 29-30); min_confidence admitting 0.11%
of 100k, 63-67 ms (item 37).

So each arm first asks how many rows the filter admits, through the conditions an index can
enumerate (migration 0024), cheapest first:

- labels: the memory types (any of), the tags_any (any of), or one tag of tags,
  whichever admits fewest, counted exactly from keyword_stats (no rows read);
- min_confidence, then min_importance, from the live memories' counts per bucket of 0.05
  (keyword_stats, migrations 0037, 0038), and through memory_facets' index on each
  (0038) only when the buckets cannot tell; then the occurred_* window, the created_*
  window and the observed_* window, through theirs: up to one past the limit (at most that
  many index entries read).

The first that admits at most HINDSIGHT_EXACT_SEARCH_MAX_ROWS rows is read through its
index, the whole filter applied, and scored exactly: never more rows than the limit. When
none does, the filter admits so many that the HNSW walk meets k of them soon (k·N/limit
rows at most, on average). The confidence, importance and last observation are indexed in
memory_facets, a copy triggers keep, and not on the memory's row: reinforcements and the
lifecycle change them, and an index over them there would make each such change rewrite
the HNSW index (and every other index of the table).

Each arm counts for itself. The arms run at once on two connections, so the count costs
their wall time once (a window too broad to narrow: 10.8 -> 11.5 ms p50 at 100k); sharing
it would cost a round trip before both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hindsight.db.models import LIVE_STATUSES
from hindsight.stores.arrays import array_literal
from hindsight.stores.filters import (
    FILTER_COLUMNS_SQL,
    MemoryFilter,
    created_sql,
    observed_sql,
    occurred_sql,
)

# Each alternative's count is the sum of its labels' (an upper bound for any of several:
# a memory may hold two), read from the counts a trigger keeps (migration 0024).
_LABELS = """
label_alternatives AS (
    SELECT array_agg(%(ns)s || '/' || l.label) AS keys,
           sum((SELECT coalesce(sum(s.df), 0) FROM keyword_stats s
                WHERE s.namespace = %(ns)s AND s.term = hindsight_label_term(l.label))) AS n
    FROM unnest(%(labels)s::text[], %(label_alternatives)s::int[]) AS l(label, alternative)
    GROUP BY l.alternative
),
fewest AS (SELECT keys, n FROM label_alternatives ORDER BY n LIMIT 1),
"""

# A window is counted through its index, one past the limit at most
_COUNTED = """
        WHEN (SELECT count(*) FROM (
                  SELECT FROM long_term_memory m WHERE {condition}
                  LIMIT %(exact_max)s + 1) c) <= %(exact_max)s THEN '{way}'"""

# The branch each arm takes: `all` (a small namespace, scanned exactly), `index` (HNSW or
# posting lists), or the first condition that narrows the filter to few rows. CASE stops
# at the first that holds, so a later condition is never counted.
_NARROW = """
narrow AS (
    SELECT CASE
        WHEN (SELECT n FROM corpus) <= %(exact_max)s THEN 'all'{ways}
        ELSE 'index' END AS way
),
"""

# The rows the narrowing condition admits, through its index, and only the columns the arms
# and the filters read. OFFSET 0 keeps the rest of the filter, applied outside, from
# steering the scan onto another index; and the labels carry their namespace, so their
# condition leaves it out: given it, a generic plan ANDed the label postings with the
# namespace's whole primary key (8,040 entries for 20 memories).
_IDS = """(SELECT m.id FROM (
         SELECT m.id, m.namespace, m.{vector}, {filter_columns} FROM long_term_memory m
         WHERE {{same_shard}}{condition} OFFSET 0) m
     WHERE m.namespace = %(ns)s{{filters}} AND (SELECT way FROM narrow) = '{way}'{also}
     ORDER BY ({distance}) + 0 LIMIT %(n)s)"""

# The vector arm's branches hand on the memories' rows (stores.search._DENSE_ARM). One that
# ranks many rows (an exact scan, a narrowed set) ranks their ids and probes the best n by
# primary key: ranking the whole rows cost a narrowed arm 0.34-0.38 ms more at 100k (1.1%
# admitted; benchmarks/README item 40).
ROWS_OF = """(SELECT t.* FROM {ids} c
     CROSS JOIN LATERAL (
         SELECT t.* FROM long_term_memory t
         WHERE t.namespace = %(ns)s AND t.id = c.id OFFSET 0) t)"""

_DENSE_DISTANCE = "m.embedding <=> %(qvec)s::halfvec"
_SPARSE_DISTANCE = "m.keywords <#> (SELECT v FROM qvec)"
# the keyword arm scores only rows that share a term with the query
_SPARSE_ALSO = f" AND (SELECT v FROM qvec) IS NOT NULL AND {_SPARSE_DISTANCE} < 0"

# memory_facets' rows count (migration 0038); the memories themselves are then probed by
# primary key. Each bound is cast to its column's type: psycopg sends a float as float8, and
# a numeric column compared with a float8 is cast entry by entry, which its index cannot
# serve (the count read every entry of the namespace, 13 ms at 100k, where it reads those
# admitted).
_FACET_ADMITTED = """
                  SELECT c.id FROM memory_facets c
                  WHERE c.namespace = %(ns)s AND c.live AND {condition}"""


@dataclass(frozen=True)
class _Facet:
    """A filter read through memory_facets: its way's name, its condition on the copy
    (alias c), and for a minimum, the function giving the bucket terms it reaches."""

    way: str
    condition: str
    bucket_terms: str | None = None
    bound: str = ""
    # whether the bound is where its bucket starts, so that it admits all of that one too
    starts_bucket: str = ""

    @property
    def admitted(self) -> str:
        return _FACET_ADMITTED.format(condition=self.condition)

    def buckets_cte(self) -> str:
        """Whether a minimum admits few is read first from the live memories' counts per
        bucket of 0.05 (keyword_stats, migrations 0037, 0038): the buckets at and above the
        bound's hold at most what it admits, those above the bound's own bucket at least
        (all of it, when the bound is where the bucket starts, as 0.5 or 0.9 are). The
        index entries are counted only when the limit falls between the two: a bound
        admitting most memories of 100k read 5,001 entries on every recall to learn it does
        not narrow (~1 ms an arm, benchmarks/README item 37)."""
        return f"""
{self.way}_buckets AS (
    SELECT coalesce(sum(s.df), 0) AS at_most,
           coalesce(sum(s.df) FILTER (WHERE s.term <> b.terms[1] OR b.whole), 0) AS at_least
    FROM (SELECT {self.bucket_terms}(v.bound) AS terms, {self.starts_bucket} AS whole
          FROM (SELECT {self.bound} AS bound) v) b
    LEFT JOIN keyword_stats s ON s.namespace = %(ns)s AND s.term = ANY(b.terms)
),
"""

    def counted(self) -> str:
        count = f"""(SELECT count(*) FROM ({self.admitted}
                                    LIMIT %(exact_max)s + 1) c) <= %(exact_max)s"""
        if self.bucket_terms is None:
            return f"\n        WHEN {count} THEN '{self.way}'"
        return f"""
        WHEN (SELECT CASE WHEN at_most <= %(exact_max)s THEN true
                          WHEN at_least > %(exact_max)s THEN false
                          ELSE {count} END
              FROM {self.way}_buckets) THEN '{self.way}'"""

    @property
    def rows_condition(self) -> str:
        return (
            "m.namespace = %(ns)s AND m.live AND m.id = ANY(ARRAY("
            + " ".join(self.admitted.split())
            + "))"
        )


def _minimum(
    way: str, name: str, value: float, cast: str, starts_bucket: str, params: dict[str, Any]
) -> _Facet:
    """A min_<way> bound: the facet's column at or above it, decided by its buckets."""
    params[name] = value
    bound = f"%({name})s::{cast}"
    return _Facet(way, f"c.{way} >= {bound}", f"hindsight_{way}_terms", bound, starts_bucket)


def confidence_facet(bound: float, params: dict[str, Any]) -> _Facet:
    """A min_confidence (its bound added to `params`); numeric, so its edges are exact."""
    whole = "v.bound * 20 = floor(v.bound * 20)"
    return _minimum("confidence", "f_min_conf", bound, "numeric", whole, params)


def _facets(f: MemoryFilter, params: dict[str, Any]) -> list[_Facet]:
    """The filter's conditions that memory_facets can count and enumerate."""
    facets = []
    if f.min_confidence is not None:
        facets.append(confidence_facet(f.min_confidence, params))
    if f.min_importance is not None:
        # the edges are float8 k / 20, as the buckets compare them
        whole = "v.bound = hindsight_importance_bucket(v.bound)::float8 / 20"
        facets.append(
            _minimum("importance", "f_min_imp", f.min_importance, "double precision", whole, params)
        )
    observed = observed_sql(f, params, "c")
    if observed:
        facets.append(_Facet("observed", observed))
    return facets


_LABELS_CONDITION = (
    "m.live AND hindsight_labels(m.namespace, m.memory_type, m.tags) && (SELECT keys FROM fewest)"
)
_WINDOW_CONDITION = "m.namespace = %(ns)s AND m.live AND {window}"
_LABELS_COUNTED = "\n        WHEN (SELECT n FROM fewest) <= %(exact_max)s THEN 'labels'"


@dataclass(frozen=True)
class Narrowing:
    """What a filter lets the arms narrow by, as SQL: the CTEs that choose the branch, the
    gates of the two branches every arm has, and each arm's narrowed branches."""

    ctes: str
    exact_gate: str  # a small namespace: scanned exactly
    index_gate: str  # a large one the filter does not narrow: HNSW or the posting lists
    dense_branches: str
    sparse_branches: str


UNNARROWED = Narrowing(
    ctes="",
    exact_gate="(SELECT n FROM corpus) <= %(exact_max)s",
    index_gate="(SELECT n FROM corpus) > %(exact_max)s",
    dense_branches="",
    sparse_branches="",
)


def _label_alternatives(f: MemoryFilter) -> tuple[list[str], list[int]]:
    """The filter's label conditions, each a set of labels of which a memory must hold one:
    the memory types, the tags_any, and each tag of tags on its own. Flattened: the
    labels, and the alternative each belongs to."""
    alternatives = []
    if f.memory_types:
        alternatives.append([f"type:{t}" for t in f.memory_types])
    if f.tags_any:
        alternatives.append([f"tag:{t}" for t in f.tags_any])
    alternatives += [[f"tag:{t}"] for t in f.tags]
    labels = [label for alternative in alternatives for label in alternative]
    which = [i for i, alternative in enumerate(alternatives) for _ in alternative]
    return labels, which


def narrowing_of(f: MemoryFilter, params: dict[str, Any]) -> Narrowing:
    """How recall's arms narrow `f` (its values added to `params`). Only for recall's live
    memories: the indexes cover live rows."""
    if f.status != LIVE_STATUSES:
        return UNNARROWED
    labels, which = _label_alternatives(f)
    # (way, how it is counted in narrow's CASE, its condition on long_term_memory m)
    conditions: list[tuple[str, str, str]] = []
    if labels:
        params["labels"] = array_literal(labels)
        params["label_alternatives"] = array_literal(which)
        conditions.append(("labels", _LABELS_COUNTED, _LABELS_CONDITION))
    facets = _facets(f, params)
    # the minimums first: their buckets mostly decide them without counting an index;
    # an observed window is counted on its index, like the other windows, so after them
    minimums = [c for c in facets if c.bucket_terms is not None]
    observed = [c for c in facets if c.bucket_terms is None]
    conditions += [(c.way, c.counted(), c.rows_condition) for c in minimums]
    for way, window in (
        ("occurred", occurred_sql(f, params, "m")),
        ("created", created_sql(f, params, "m")),
    ):
        if window:
            condition = _WINDOW_CONDITION.format(window=window)
            conditions.append((way, _COUNTED.format(condition=condition, way=way), condition))
    conditions += [(c.way, c.counted(), c.rows_condition) for c in observed]
    if not conditions:
        return UNNARROWED
    ways = "".join(counted for _, counted, _ in conditions)

    def branches(vector: str, distance: str, also: str, rows: bool) -> str:
        ids = ROWS_OF.replace("{ids}", _IDS) if rows else _IDS
        return "".join(
            "\n    UNION ALL\n    "
            + ids.format(
                vector=vector,
                filter_columns=FILTER_COLUMNS_SQL,
                condition=condition,
                way=way,
                also=also,
                distance=distance,
            )
            for way, _, condition in conditions
        )

    return Narrowing(
        ctes=(_LABELS if labels else "")
        + "".join(c.buckets_cte() for c in minimums)
        + _NARROW.format(ways=ways),
        exact_gate="(SELECT way FROM narrow) = 'all'",
        index_gate="(SELECT way FROM narrow) = 'index'",
        dense_branches=branches("embedding", _DENSE_DISTANCE, "", rows=True),
        sparse_branches=branches("keywords", _SPARSE_DISTANCE, _SPARSE_ALSO, rows=False),
    )
