"""Citus: where each table goes on a cluster (`hindsight db distribute`), and what the
cluster looks like now (`hindsight doctor`).

Every namespace-scoped table is distributed by `namespace` in one co-location group, so
that a namespace's rows of every table sit on one worker and each statement Hindsight runs
on a namespace is routed to that worker. Small tables every node reads are reference
tables (a full copy on each node). The plan is data, so the tests and the doctor check the
same placement that distributing makes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from hindsight.db.urls import psycopg_url
from hindsight.errors import ConfigurationError

# Several shards per worker, so that a cluster grows to this many workers by moving shards
# (citus_rebalance_start) instead of re-sharding.
SHARD_COUNT = 64


@dataclass(frozen=True)
class Placement:
    table: str
    kind: str  # "reference" | "distributed"
    column: str | None = None
    colocate_with: str | None = None  # "none": a co-location group of its own


def _by_namespace(table: str) -> Placement:
    return Placement(table, "distributed", "namespace", "long_term_memory")


PLAN: tuple[Placement, ...] = (
    Placement("hindsight_meta", "reference"),
    Placement("api_keys", "reference"),
    # The job queue is claimed across namespaces (FOR UPDATE SKIP LOCKED), which Citus runs
    # on a reference table but not across the shards of a distributed one. Jobs are few.
    Placement("consolidation_jobs", "reference"),
    # `hindsight import`'s bookkeeping: a row per import and, while one runs, per line
    Placement("bulk_imports", "reference"),
    Placement("bulk_import_lines", "reference"),
    # the record of each erasure (no values): its column is `erased_namespace`, so erasing
    # a namespace never deletes it
    Placement("namespace_erasures", "reference"),
    Placement("long_term_memory", "distributed", "namespace", "default"),
    _by_namespace("memory_keywords"),
    _by_namespace("memory_facets"),
    _by_namespace("memory_access"),
    _by_namespace("memory_history"),
    _by_namespace("keyword_stats"),
    _by_namespace("recall_log"),
    _by_namespace("working_sessions"),
    # after working_sessions: its foreign key (namespace, session_id) is co-located
    _by_namespace("working_memory"),
    _by_namespace("namespace_policy"),
    _by_namespace("namespace_lifecycle"),
    _by_namespace("session_demotions"),
    _by_namespace("recall_feedback"),
    # keyed by content and shared by every namespace: sharded by its own hash
    Placement("embedding_cache", "distributed", "content_hash", "none"),
)
# Tables of older revisions, placed when a database at one of them has them:
# memory_facets' forerunner exists at 0036-0038.
OLDER: tuple[Placement, ...] = (_by_namespace("memory_confidence"),)
# stays a plain table on the coordinator, where migrations run
LOCAL = frozenset({"alembic_version"})


def distributed_table(bind: Any, table: str = "long_term_memory") -> bool:
    """Whether `table` is a Citus distributed table in the database of `bind`, a SQLAlchemy
    connection (what a migration holds: `op.get_bind()`). A migration that creates a table
    its triggers write places it itself on a cluster (0035)."""
    import sqlalchemy as sa

    if bind.execute(sa.text("SELECT to_regclass('pg_dist_partition')")).scalar() is None:
        return False
    found = bind.execute(
        sa.text(
            "SELECT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = to_regclass(:t))"
        ),
        {"t": table},
    )
    return bool(found.scalar())


# Set for every session on the coordinator's database. SET LOCAL in a transaction reaches
# the workers only with propagate_set_commands: the history triggers read who changed a
# memory (hindsight.actor) from there on the shard, and recall's hnsw.* settings must reach
# the shard's index scan. Triggers on distributed tables need enable_unsafe_triggers when
# they are created: by a migration after distributing. Neither is one Citus warns gives wrong
# results (citus.allow_nested_distributed_execution is, and is not needed: each trigger
# writes only to shards co-located with its own).
DATABASE_SETTINGS = {
    "citus.propagate_set_commands": "local",
    "citus.enable_unsafe_triggers": "on",
}


@dataclass(frozen=True)
class Cluster:
    """What the database's Citus looks like: versions per node, and each table's placement."""

    version: str | None  # citus extension version on the coordinator (None: no Citus)
    workers: list[str]
    placed: dict[str, Placement]
    extensions: dict[str, dict[str, str]]  # node -> extension -> version
    settings: dict[str, str | None]

    @property
    def distributed(self) -> bool:
        return "long_term_memory" in self.placed


def inspect(conn: psycopg.Connection[Any]) -> Cluster:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'citus'").fetchone()
    if row is None:
        return Cluster(None, [], {}, {}, {})
    workers = [
        f"{h}:{p}"
        for h, p in conn.execute(
            "SELECT node_name, node_port FROM citus_get_active_worker_nodes() ORDER BY 1, 2"
        )
    ]
    colocation = {}
    placed = {}
    for table, method, column, group in conn.execute(
        "SELECT logicalrelid::regclass::text, partmethod, "
        "column_to_column_name(logicalrelid, partkey), colocationid FROM pg_dist_partition"
    ):
        colocation[table] = group
        kind = "reference" if method == "n" else "distributed"
        placed[table] = Placement(table, kind, column if kind == "distributed" else None)
    # co-location said as the plan says it: with long_term_memory's group, or a group alone
    anchor = colocation.get("long_term_memory")
    for table, p in list(placed.items()):
        if p.kind == "distributed" and table != "long_term_memory":
            alone = sum(1 for g in colocation.values() if g == colocation[table]) == 1
            co = "long_term_memory" if colocation[table] == anchor else "none" if alone else "?"
            placed[table] = Placement(table, p.kind, p.column, co)
        elif table == "long_term_memory":
            placed[table] = Placement(table, p.kind, p.column, "default")
    extensions: dict[str, dict[str, str]] = {}
    for node, ok, result in conn.execute(
        "SELECT n.nodename || ':' || n.nodeport, r.success, r.result "
        "FROM run_command_on_all_nodes($$SELECT string_agg(extname || '=' || extversion, ',' "
        "ORDER BY extname) FROM pg_extension WHERE extname IN ('citus', 'vector')$$) r "
        "JOIN pg_dist_node n USING (nodeid)"
    ):
        extensions[node] = (
            dict(part.split("=", 1) for part in result.split(",")) if ok and result else {}
        )
    settings = {
        name: conn.execute("SELECT current_setting(%s, true)", (name,)).fetchone()[0]  # type: ignore[index]
        for name in DATABASE_SETTINGS
    }
    return Cluster(row[0], workers, placed, extensions, settings)


@dataclass(frozen=True)
class Problem:
    """Something wrong with a distributed database, and what to do about it."""

    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.what}: {self.fix}"


def problems(cluster: Cluster, tables: set[str]) -> list[Problem]:
    """What is wrong with a distributed database, each with what to do about it."""
    if cluster.version is None:
        return [Problem("Citus is not installed in this database", "CREATE EXTENSION citus")]
    found = []
    for p in (*PLAN, *OLDER):
        if p.table not in tables:
            continue
        got = cluster.placed.get(p.table)
        if got is None:
            found.append(Problem(f"{p.table} is not distributed", "hindsight db distribute"))
        elif got != p:
            found.append(
                Problem(
                    f"{p.table} is {_said(got)}, not {_said(p)}",
                    f"SELECT undistribute_table('{p.table}'); then hindsight db distribute",
                )
            )
    unknown = tables - {p.table for p in (*PLAN, *OLDER)} - LOCAL
    found += [
        Problem(
            f"{t} has no placement in Hindsight's plan",
            "a table Hindsight did not make: move it to another schema or database",
        )
        for t in sorted(unknown)
    ]
    versions = {tuple(sorted(v.items())) for v in cluster.extensions.values()}
    if len(versions) > 1:
        listed = "; ".join(
            f"{node}: {', '.join(f'{k} {v}' for k, v in sorted(ext.items())) or 'none'}"
            for node, ext in sorted(cluster.extensions.items())
        )
        found.append(
            Problem(
                f"extension versions differ between nodes ({listed})",
                "install the same Citus and pgvector builds on every node, then run "
                "ALTER EXTENSION citus UPDATE and ALTER EXTENSION vector UPDATE on each",
            )
        )
    if not cluster.workers:
        found.append(Problem("the cluster has no workers", "SELECT citus_add_node('host', port)"))
    for name, value in DATABASE_SETTINGS.items():
        if cluster.settings.get(name) != value:
            found.append(
                Problem(
                    f"{name} is {cluster.settings.get(name) or 'not set'!r} for the database, "
                    f"not {value!r}",
                    "hindsight db distribute (it sets it for the database)",
                )
            )
    return found


def _said(p: Placement) -> str:
    if p.kind == "reference":
        return "a reference table"
    if p.colocate_with == "long_term_memory" or p.colocate_with == "default":
        return f"distributed by {p.column} with long_term_memory"
    if p.colocate_with == "none":
        return f"distributed by {p.column} alone"
    return f"distributed by {p.column} in another co-location group"


def _tables(conn: psycopg.Connection[Any]) -> set[str]:
    return {
        r[0]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
    }


def status(url: str) -> tuple[Cluster, list[Problem]]:
    with psycopg.connect(psycopg_url(url), autocommit=True) as conn:
        cluster = inspect(conn)
        return cluster, (problems(cluster, _tables(conn)) if cluster.distributed else [])


def distribute(url: str, *, shard_count: int = SHARD_COUNT) -> list[str]:
    """Place every table of the plan that exists and is not placed yet (idempotent: a second
    run, or one after an upgrade added a table, places only what is new). What it did, a
    line per table."""
    with psycopg.connect(psycopg_url(url), autocommit=True) as conn:
        cluster = inspect(conn)
        if cluster.version is None:
            raise ConfigurationError(
                "Citus is not installed in this database: on the coordinator and on every "
                "worker run CREATE EXTENSION citus; then add the workers on the coordinator "
                "(SELECT citus_add_node('host', port)) and run this again"
            )
        if not cluster.workers:
            raise ConfigurationError(
                "this Citus coordinator has no workers: add them "
                "(SELECT citus_add_node('host', port)) and run this again"
            )
        tables = _tables(conn)
        if "long_term_memory" not in tables:
            raise ConfigurationError(
                "the schema is missing: run `hindsight db upgrade` first, then this"
            )
        unknown = tables - {p.table for p in (*PLAN, *OLDER)} - LOCAL
        if unknown:
            raise ConfigurationError(
                f"no placement for the tables {', '.join(sorted(unknown))}: this version of "
                "Hindsight does not know them"
            )
        done = []
        with conn.transaction():
            count = sql.Literal(shard_count)
            conn.execute(sql.SQL("SET LOCAL citus.shard_count = {}").format(count))
            conn.execute("SET LOCAL citus.enable_unsafe_triggers = on")
            if _holds_rows(conn, sorted(tables - set(cluster.placed) - LOCAL)):
                # A database moved here with its rows (docs/citus.md): distributing copies
                # them into the shards, where the history and keyword-statistics triggers
                # would fire and write again what the copied tables hold already. Not in
                # replica mode, which the workers' transactions take too (SET LOCAL,
                # propagated).
                conn.execute("SET LOCAL citus.propagate_set_commands = 'local'")
                conn.execute("SET LOCAL session_replication_role = replica")
            for p in (*PLAN, *OLDER):
                if p.table not in tables:
                    continue  # an older revision: an upgrade adds it, a new run places it
                got = cluster.placed.get(p.table)
                if got is not None:
                    if got != p:
                        raise ConfigurationError(
                            f"{p.table} is placed otherwise than Hindsight's plan ({got}); "
                            "undistribute it (SELECT undistribute_table(...)) and run this again"
                        )
                    continue
                if p.kind == "reference":
                    conn.execute("SELECT create_reference_table(%s)", (p.table,))
                else:
                    conn.execute(
                        "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                        (p.table, p.column, p.colocate_with),
                    )
                done.append(f"{p.table}: {describe(p)}")
        name = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        for setting, value in DATABASE_SETTINGS.items():
            conn.execute(
                sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                    sql.Identifier(name), sql.SQL(setting), sql.Literal(value)
                )
            )
        return done


def _holds_rows(conn: psycopg.Connection[Any], tables: list[str]) -> bool:
    exists = sql.SQL("SELECT EXISTS (SELECT FROM {})")
    return any(conn.execute(exists.format(sql.Identifier(t))).fetchone() == (True,) for t in tables)


def describe(p: Placement) -> str:
    if p.kind == "reference":
        return "reference table (a copy on every node)"
    if p.colocate_with == "none":
        return f"distributed by {p.column}"
    return f"distributed by {p.column}, co-located with long_term_memory"
