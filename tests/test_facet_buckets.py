"""The counts per bucket recall decides a min_confidence or min_importance by (migrations
0037, 0038), at the edges where decimal and binary disagree: whatever a bound, the buckets it
reaches hold at least what it admits, and the buckets it is sure of at most. Otherwise
recall would narrow a bound that admits more than its limit (reading them all), or walk
the HNSW graph for one that admits few (missing some of them).

And memory_facets keeps the importance exactly, whatever the session's extra_float_digits:
the trigger carries rows as jsonb, whose float text follows that setting."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from hindsight.stores.filters import MemoryFilter
from hindsight.stores.narrowing import _facets
from tests.support.copies import copy_drift
from tests.support.labels import label_drift

INSERT = (
    "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type,"
    " embedding, keywords, keyword_terms, confidence, importance) VALUES (%s, %s, %s, 'v',"
    " 'fact', %s::halfvec, '{}/268435456'::sparsevec, '{}', %s, %s)"
)
VECTOR = "[" + ",".join(["0.05"] * 384) + "]"
# a hair either side of bucket edges, the edges themselves, and what float arithmetic
# makes of them (0.1 * 3 is 0.30000000000000004; 0.7 * 0.5 is 0.35 exactly)
IMPORTANCES = [
    0.0,
    0.05,
    0.1 * 3,
    0.3,
    0.29999999999999993,
    0.35,
    0.7 * 0.5,
    0.4,
    0.42,
    0.44999999999999996,
    0.45,
    0.5,
    0.5000000000000001,
    0.9499999999999998,
    0.95,
    0.9999999999999999,
    1.0,
]
CONFIDENCES = [0.0, 0.05, 0.3, 0.3001, 0.2999, 0.45, 0.5, 0.5001, 0.9499, 0.95, 0.9999, 1.0]
BOUNDS = sorted({*IMPORTANCES, *CONFIDENCES, 0.31, 0.51, 0.999, 1e-9})


@pytest.fixture
def filled(migrated: str, ns: str) -> str:
    with psycopg.connect(migrated, autocommit=True) as conn:
        for i, importance in enumerate(IMPORTANCES):
            conn.execute(INSERT, (uuid.uuid4(), ns, f"i{i}", VECTOR, 0.5, importance))
        for i, confidence in enumerate(CONFIDENCES):
            conn.execute(INSERT, (uuid.uuid4(), ns, f"c{i}", VECTOR, confidence, 0.5))
    return ns


def bucket_bounds(url: str, ns: str, f: MemoryFilter) -> tuple[int, int, int]:
    """(at_least, admitted, at_most) for the filter's one minimum."""
    params: dict[str, object] = {"ns": ns}
    (facet,) = _facets(f, params)
    cte = facet.buckets_cte().strip().rstrip(",")
    column = facet.way
    with psycopg.connect(url) as conn:
        row = conn.execute(
            f"WITH {cte} SELECT at_least, "
            f"(SELECT count(*) FROM long_term_memory m WHERE m.namespace = %(ns)s AND m.live"
            f" AND {facet.condition.replace('c.', 'm.')}), at_most FROM {column}_buckets",
            params,
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


@pytest.mark.parametrize("facet", ["importance", "confidence"])
def test_the_buckets_bracket_what_every_bound_admits(
    migrated: str, filled: str, facet: str
) -> None:
    assert label_drift(migrated, filled) == []
    wrong = []
    for bound in BOUNDS:
        f = MemoryFilter(**{f"min_{facet}": bound})  # type: ignore[arg-type]
        at_least, admitted, at_most = bucket_bounds(migrated, filled, f)
        if not at_least <= admitted <= at_most:
            wrong.append((bound, at_least, admitted, at_most))
    assert wrong == []


def test_a_bound_at_a_bucket_edge_is_sure_of_its_whole_bucket(migrated: str, filled: str) -> None:
    """0.3 and 0.95 start their buckets: the counts alone say what they admit, and recall
    reads no index entries to decide (tests/test_plan_shape.py counts the entries read)."""
    for bound in (0.3, 0.95, 0.05):
        at_least, admitted, at_most = bucket_bounds(
            migrated, filled, MemoryFilter(min_importance=bound)
        )
        assert at_least == admitted == at_most, bound


def test_the_copy_keeps_the_importance_exactly_at_any_extra_float_digits(
    migrated: str, ns: str
) -> None:
    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute("SET extra_float_digits = 0")  # 15 significant digits
        for i, importance in enumerate(IMPORTANCES):
            conn.execute(INSERT, (uuid.uuid4(), ns, f"k{i}", VECTOR, 0.5, importance))
        conn.execute(
            "UPDATE long_term_memory SET importance = importance * 0.7 WHERE namespace = %s",
            (ns,),
        )
    assert copy_drift(migrated, ns, "memory_facets") == []
    assert label_drift(migrated, ns) == []
