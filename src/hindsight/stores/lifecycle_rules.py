"""SQL for the lifecycle's rules (expire, delete, archive, cool), one batch at a time.

Every rule is a condition on a memory (with its access row `a`) against an injected clock
`%(now)s`, so tests move time instead of waiting. Each batch is one statement that picks at
most `batch` rows after a keyset cursor, locks them with SKIP LOCKED and re-checks the
condition, so two schedulers (or a scheduler and a client) never move a memory twice.
The history trigger records each move with the reason set in `hindsight.reason`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from hindsight.db.pool import Connection
from hindsight.stores.attribution import attribute, clear
from hindsight.stores.filters import LIVE_BY_STATUS

_SECONDS = "* interval '1 second'"

# last access or observation; never recalled: since created
IDLE_SINCE = "greatest(m.last_observed, coalesce(a.last_accessed, m.last_observed))"
ACCESSED_SINCE = "coalesce(a.last_accessed, m.created_at)"


def value_sql(alpha: str = "%(alpha)s", tau: str = "%(tau_s)s") -> str:
    """A memory's value without a query: confidence × importance × access boost × recency."""
    return (
        f"(m.confidence::float8 * m.importance"
        f" * (1 + {alpha} * ln(1 + coalesce(a.access_count, 0)))"
        f" * exp(-greatest(extract(epoch FROM %(now)s - {IDLE_SINCE}), 0) / {tau}))"
    )


@dataclass(frozen=True)
class Scope:
    """The memories one retention applies to: the namespace's (no kind), or those of one
    tag or memory type (`kind`, `name`), with its thresholds (seconds; importance)."""

    cold_s: float
    archive_s: float
    archive_imp: float  # 1: any importance
    del_imp: float  # 0: never
    del_s: float
    kind: str | None = None  # tag | memory_type
    name: str = ""


def scope_params(scopes: list[Scope]) -> dict[str, Any]:
    """The query parameters of `scopes` (scope j's as `s{j}_<name>`), and the scopes."""
    out: dict[str, Any] = {"scopes": scopes}
    for j, s in enumerate(scopes):
        out |= {
            f"s{j}_cold_s": s.cold_s,
            f"s{j}_archive_s": s.archive_s,
            f"s{j}_archive_imp": s.archive_imp,
            f"s{j}_del_imp": s.del_imp,
            f"s{j}_del_s": s.del_s,
            f"s{j}_name": s.name,
        }
    return out


def _matches(j: int, s: Scope) -> str:
    if s.kind == "tag":
        return f"m.tags @> ARRAY[%(s{j}_name)s]::text[]"
    return f"m.memory_type = %(s{j}_name)s"


def _in_scope(scopes: list[Scope], j: int) -> str:
    """Scope j's memories: a tag's are those with it and no tag listed before; a memory
    type's, those of it with no listed tag; the namespace's, the rest."""
    tags = [(i, s) for i, s in enumerate(scopes) if s.kind == "tag"]
    scope = scopes[j]
    if scope.kind == "tag":
        before = [_matches(i, s) for i, s in tags if i < j]
    elif scope.kind == "memory_type":
        before = [_matches(i, s) for i, s in tags]
    else:
        before = [_matches(i, s) for i, s in enumerate(scopes) if s.kind is not None]
    own = [] if scope.kind is None else [_matches(j, scope)]
    return " AND ".join(["true", *own, *(f"NOT {c}" for c in before)])


def _why(scope: Scope) -> str:
    return f" ({scope.kind} {scope.name})" if scope.kind else ""


@dataclass(frozen=True)
class Rule:
    """One lifecycle rule: which memories, what happens to them, and why."""

    name: str
    condition: str  # SQL over m (long_term_memory) and a (memory_access)
    action: str  # cold | archived | delete | expire
    reason: str


def rules(p: dict[str, Any], *, low_confidence_due: bool) -> list[Rule]:
    """The policy's rules in the order they apply; `p` holds their thresholds (seconds),
    per scope (`scope_params`): each rule of a tag's or a memory type's retention is a rule
    of its own, over its memories only."""
    scopes: list[Scope] = p["scopes"]
    out = [
        Rule(
            "expired",
            "m.expires_at <= %(now)s",
            "expire",
            "expires_at passed",
        ),
    ]
    for j, s in enumerate(scopes):
        if s.del_imp > 0:
            out.append(
                Rule(
                    "deleted",
                    f"NOT m.permanent AND {_in_scope(scopes, j)} "
                    f"AND m.importance < %(s{j}_del_imp)s "
                    f"AND {ACCESSED_SINCE} < %(now)s - %(s{j}_del_s)s {_SECONDS}",
                    "delete",
                    f"importance under {s.del_imp:g} and not accessed for "
                    f"{s.del_s / 86400:g} days{_why(s)}",
                )
            )
    for j, s in enumerate(scopes):
        # an important memory idle this long only cools: it stays recallable
        unimportant, why = "", ""
        if s.archive_imp < 1:
            unimportant = f"AND m.importance < %(s{j}_archive_imp)s "
            why = f" and importance under {s.archive_imp:g}"
        out.append(
            Rule(
                "archived",
                f"NOT m.permanent AND {LIVE_BY_STATUS} AND {_in_scope(scopes, j)} {unimportant}"
                f"AND {IDLE_SINCE} < %(now)s - %(s{j}_archive_s)s {_SECONDS}",
                "archived",
                f"no access or observation for {s.archive_s / 86400:g} days{why}{_why(s)}",
            )
        )
    if low_confidence_due and p["low_conf"] > 0:
        out.append(
            Rule(
                "low_confidence",
                f"NOT m.permanent AND {LIVE_BY_STATUS} AND m.confidence < %(low_conf)s "
                f"AND coalesce(a.access_count, 0) = 0 "
                f"AND m.created_at < %(now)s - %(low_conf_s)s {_SECONDS}",
                "archived",
                f"confidence under {p['low_conf']:g} and never recalled",
            )
        )
    for j, s in enumerate(scopes):
        out.append(
            Rule(
                "cooled",
                f"NOT m.permanent AND m.status = 'active' AND {_in_scope(scopes, j)} "
                f"AND {IDLE_SINCE} < %(now)s - %(s{j}_cold_s)s {_SECONDS}",
                "cold",
                f"no access or observation for {s.cold_s / 86400:g} days{_why(s)}",
            )
        )
    return out


def _exclusive(all_rules: list[Rule], i: int) -> str:
    """Rule i's condition for memories no earlier rule takes (a memory moves once)."""
    earlier = [f"NOT coalesce(({r.condition}), false)" for r in all_rules[:i]]
    return " AND ".join([f"({all_rules[i].condition})", *earlier])


# `page`: the heap page the row is on, for `page_rounds`
_PICK = """
SELECT m.id, m.mem_key AS key, m.status, m.importance, m.confidence::float8 AS confidence,
       (m.ctid::text::point)[0]::bigint AS page
FROM long_term_memory m
LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id
WHERE m.namespace = %(ns)s AND m.id > %(after)s AND {condition}
ORDER BY m.id LIMIT %(batch)s
"""


async def candidates(
    conn: Connection, all_rules: list[Rule], i: int, params: dict[str, Any], after: uuid.UUID
) -> list[dict[str, Any]]:
    """The next batch rule i would move (a dry run reads these and changes nothing)."""
    cur = await conn.execute(
        _PICK.format(condition=_exclusive(all_rules, i)), {**params, "after": after}
    )
    return await cur.fetchall()


def page_rounds(rows: list[dict[str, Any]]) -> list[list[uuid.UUID]]:
    """The ids of candidates `rows` in rounds that take at most one row of a heap page
    each, so that cooling them can be a HOT update every time: a page keeps room for one
    new version of a row (fillfactor 80, migration 0020), and a round's old versions are
    pruned once its transaction is over, before the next round reads the page. Rows that
    share no page (most, but for the ones a bulk load or a busy hour wrote together) go in
    one round."""
    rounds: list[list[uuid.UUID]] = []
    taken: dict[int, int] = {}
    for row in rows:
        n = taken.get(row["page"], 0)
        taken[row["page"]] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(row["id"])
    return rounds


async def apply(
    conn: Connection,
    all_rules: list[Rule],
    i: int,
    params: dict[str, Any],
    ids: list[uuid.UUID],
    *,
    actor: str,
) -> list[dict[str, Any]]:
    """Move those of `ids` (candidates of rule i) that still qualify and are not locked by
    another writer; the rows moved."""
    rule = all_rules[i]
    picked = (
        "SELECT m.id, m.mem_key AS key, m.status, m.importance, "
        "m.confidence::float8 AS confidence "
        "FROM long_term_memory m LEFT JOIN memory_access a "
        "ON a.namespace = m.namespace AND a.memory_id = m.id "
        f"WHERE m.id = ANY(%(ids)s) AND m.namespace = %(ns)s AND {_exclusive(all_rules, i)} "
        "ORDER BY m.id FOR UPDATE OF m SKIP LOCKED"
    )
    values = {**params, "ids": ids, "actor": actor}
    await attribute(
        conn, actor=actor, reason=rule.reason, change="expired" if rule.action == "expire" else ""
    )
    if rule.action in ("delete", "expire"):
        sql = (
            f"WITH picked AS ({picked}) DELETE FROM long_term_memory m USING picked "
            "WHERE m.namespace = %(ns)s AND m.id = picked.id RETURNING picked.*"
        )
    else:
        sql = (
            f"WITH picked AS ({picked}) UPDATE long_term_memory m "
            f"SET status = %(new_status)s, changed_by = %(actor)s, updated_at = now() "
            "FROM picked WHERE m.namespace = %(ns)s AND m.id = picked.id "
            "RETURNING picked.*"
        )
        values["new_status"] = rule.action
    cur = await conn.execute(sql, values)
    moved = await cur.fetchall()
    await clear(conn)
    return moved
