"""Run a statement as the search pool runs it (a generic plan of a prepared statement) under
EXPLAIN ANALYZE, and walk the plan it really executed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncClientCursor
from psycopg.adapt import PyFormat, Transformer

from hindsight.db.pool import Connection


@dataclass(frozen=True)
class PlanNode:
    node_type: str
    relation: str | None
    index: str | None
    rows_read: float  # rows it returned, plus those its filters removed, over all its loops
    loops: float
    path: str  # the node types from the root down to it

    def __str__(self) -> str:
        on = f" on {self.relation}" if self.relation else ""
        using = f" using {self.index}" if self.index else ""
        return f"{self.node_type}{on}{using}: {self.rows_read:.0f} rows ({self.path})"


def _positional(sql: str) -> tuple[str, list[str]]:
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return re.sub(r"%\((\w+)\)[sb]", number, sql), names


async def explain_generic(
    conn: Connection, sql: str, params: dict[str, Any], *, warmups: int = 6
) -> dict[str, Any]:
    """EXPLAIN (ANALYZE) of `sql` as a prepared statement executed `warmups` times first, so
    that the plan cache has settled on the plan later executions use (the generic one where
    `plan_cache_mode` forces it). Each parameter has the type psycopg sends it as, not the
    one the server would infer from the statement: a Python float goes as float8, and a
    numeric column compared with it is cast to float8 for every row, so no index on the
    column serves the comparison (seen: a count through memory_confidence's index read all
    100k entries of the namespace where the inferred numeric read 111)."""
    text, names = _positional(sql)
    cursor = AsyncClientCursor(conn)
    args = ", ".join(cursor.mogrify("%s", (params[name],)) for name in names)
    sent = Transformer(conn)
    oids = [
        0 if params[name] is None else sent.get_dumper(params[name], PyFormat.AUTO).oid
        for name in names
    ]
    cur = await conn.execute(
        "SELECT coalesce(t.oid::regtype::text, 'unknown') AS type "
        "FROM unnest(%s::oid[]) WITH ORDINALITY AS u(oid, i) "
        "LEFT JOIN pg_type t ON t.oid = u.oid ORDER BY u.i",
        (oids,),
        prepare=False,
    )
    types = ", ".join(r["type"] for r in await cur.fetchall())
    # prepare=False: psycopg's own prepared statements on this connection are left alone
    await conn.execute(f"PREPARE shape_probe({types}) AS {text}", prepare=False)
    for _ in range(warmups):
        await conn.execute(f"EXECUTE shape_probe({args})", prepare=False)
    cur = await conn.execute(
        f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE shape_probe({args})", prepare=False
    )
    row = await cur.fetchone()
    assert row is not None
    plan = row["QUERY PLAN"]
    if isinstance(plan, str):
        plan = json.loads(plan)
    await conn.execute("DEALLOCATE shape_probe", prepare=False)
    return dict(plan[0]["Plan"])


def executed_nodes(plan: dict[str, Any], path: str = "") -> Iterator[PlanNode]:
    """Every node that ran at least once, with the rows it read."""
    here = f"{path}/{plan['Node Type']}" if path else plan["Node Type"]
    loops = float(plan.get("Actual Loops", 0))
    if loops > 0:
        removed = sum(
            float(plan.get(k, 0))
            for k in ("Rows Removed by Filter", "Rows Removed by Index Recheck")
        )
        yield PlanNode(
            node_type=plan["Node Type"],
            relation=plan.get("Relation Name"),
            index=plan.get("Index Name"),
            rows_read=(float(plan.get("Actual Rows", 0)) + removed) * loops,
            loops=loops,
            path=here,
        )
    for child in plan.get("Plans", []):
        yield from executed_nodes(child, here)
