"""The label counts recall's filters decide by (keyword_stats, negative terms: memory types,
tags, confidence and importance buckets), against a count of the memories themselves."""

from __future__ import annotations

import psycopg


def label_drift(url: str, namespace: str) -> list[tuple[str, int, int]]:
    """Each label of the namespace's memories whose count in keyword_stats differs from a
    count of its live memories: (label, counted, kept)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            """
            WITH labels AS (
                SELECT l, hindsight_label_term(l) AS term, count(*) FILTER (WHERE m.live) AS n
                FROM long_term_memory m,
                     unnest(array_prepend('type:' || m.memory_type,
                                          ARRAY(SELECT 'tag:' || t FROM unnest(m.tags) t))) l
                WHERE m.namespace = %(ns)s GROUP BY l
                UNION ALL
                -- every confidence bucket of 0.05, the empty ones too (1.0 is the last's),
                -- under its term below every label's
                SELECT 'confidence:' || b, -1073741825 - b, (
                    SELECT count(*) FROM long_term_memory m
                    WHERE m.namespace = %(ns)s AND m.live
                      AND least(floor(m.confidence * 20), 20) = b)
                FROM generate_series(0, 20) b
                UNION ALL
                -- and every importance bucket, 21 terms further down: the values from
                -- its edge (as float8, the importance's type) to the next
                SELECT 'importance:' || b, -1073741846 - b, (
                    SELECT count(*) FROM long_term_memory m
                    WHERE m.namespace = %(ns)s AND m.live
                      AND m.importance >= b::float8 / 20
                      AND (b = 20 OR m.importance < (b + 1)::float8 / 20))
                FROM generate_series(0, 20) b
            )
            SELECT l, n, (SELECT coalesce(sum(df), 0) FROM keyword_stats s
                          WHERE s.namespace = %(ns)s AND s.term = labels.term)
            FROM labels
            """,
            {"ns": namespace},
        ).fetchall()
    return [(label, int(n), int(kept)) for label, n, kept in rows if n != kept]
