"""memory_keywords against long_term_memory: the copy the keyword arm reads (migration 0035)
must hold exactly one row per memory, equal to the memory's copied columns."""

from __future__ import annotations

from typing import Any

import psycopg

_COPIED = "namespace, id, memory_type, tags, live, expires_at, keyword_terms, keywords::text"


def keyword_copy_drift(url: str, namespace: str | None = None) -> list[tuple[Any, ...]]:
    """Rows in one table and not the other: ('memory', ...) a memory without its copy as it
    is, ('copy', ...) a copy without its memory as it is. [] when they agree."""
    where = "WHERE namespace = %(ns)s" if namespace is not None else ""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f"""
            (SELECT 'memory' AS side, * FROM (
                SELECT {_COPIED} FROM long_term_memory {where}
                EXCEPT ALL SELECT {_COPIED} FROM memory_keywords {where}) d)
            UNION ALL
            (SELECT 'copy', * FROM (
                SELECT {_COPIED} FROM memory_keywords {where}
                EXCEPT ALL SELECT {_COPIED} FROM long_term_memory {where}) d)
            """,
            {"ns": namespace},
        ).fetchall()
    return [tuple(r) for r in rows]


def copies(url: str, namespace: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memory_keywords WHERE namespace = %s", (namespace,)
        ).fetchone()
    assert row is not None
    return int(row[0])
