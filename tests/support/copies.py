"""The copies triggers keep of long_term_memory's columns, against it: memory_keywords (the
keyword arm's postings, migration 0035) and memory_facets (the indexes of min_confidence,
min_importance and observed_*, 0038) must each hold exactly one row per memory, equal to the
memory's copied columns."""

from __future__ import annotations

from typing import Any

import psycopg

COPIED = {
    "memory_keywords": (
        "namespace, id, memory_type, tags, live, expires_at, keyword_terms, keywords::text"
    ),
    "memory_facets": "namespace, id, live, confidence, importance, last_observed",
}


def copy_drift(
    url: str, namespace: str | None = None, table: str = "memory_keywords"
) -> list[tuple[Any, ...]]:
    """Rows in one table and not the other: ('memory', ...) a memory without its copy as it
    is, ('copy', ...) a copy without its memory as it is. [] when they agree."""
    where = "WHERE namespace = %(ns)s" if namespace is not None else ""
    columns = COPIED[table]
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f"""
            (SELECT 'memory' AS side, * FROM (
                SELECT {columns} FROM long_term_memory {where}
                EXCEPT ALL SELECT {columns} FROM {table} {where}) d)
            UNION ALL
            (SELECT 'copy', * FROM (
                SELECT {columns} FROM {table} {where}
                EXCEPT ALL SELECT {columns} FROM long_term_memory {where}) d)
            """,
            {"ns": namespace},
        ).fetchall()
    return [tuple(r) for r in rows]


def copies_drift(url: str, namespace: str | None = None) -> list[tuple[Any, ...]]:
    """Both copies' drift: memory_keywords' and memory_facets', [] when both agree."""
    return [*copy_drift(url, namespace), *copy_drift(url, namespace, "memory_facets")]


def copies(url: str, namespace: str, table: str = "memory_keywords") -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM {table} WHERE namespace = %s", (namespace,)
        ).fetchone()
    assert row is not None
    return int(row[0])
