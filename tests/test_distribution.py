"""The schema can be distributed by namespace (Citus): keys and foreign keys carry the
namespace, statements join within one namespace, and sql/citus/ names every table.

Citus itself is not installable here; its DDL is run against plain PostgreSQL with stand-in
functions of the same signatures, which checks its syntax and what it distributes how."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import psycopg
import pytest

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from tests.conftest import Api, make_settings
from tests.support.labels import label_drift
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer

ROOT = Path(__file__).resolve().parent.parent
CITUS_DDL = ROOT / "sql" / "citus" / "distribute.sql"

# How each table is placed; a new table must be placed here (and in sql/citus/) to pass.
BY_NAMESPACE = {
    "long_term_memory",
    "memory_access",
    "memory_history",
    "keyword_stats",
    "recall_log",
    "working_sessions",
    "working_memory",
    "namespace_policy",
    "namespace_lifecycle",
    "session_demotions",
    "recall_feedback",
}
REFERENCE = {
    "hindsight_meta",
    "api_keys",
    "consolidation_jobs",
    "bulk_imports",
    "bulk_import_lines",
    "namespace_erasures",
}
BY_OTHER_COLUMN = {"embedding_cache": "content_hash"}
LOCAL = {"alembic_version"}


def test_every_key_of_a_namespace_table_includes_namespace(migrated: str) -> None:
    with psycopg.connect(migrated) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        }
        placed = BY_NAMESPACE | REFERENCE | set(BY_OTHER_COLUMN) | LOCAL
        assert tables == placed, f"place these tables for Citus: {sorted(tables ^ placed)}"
        # primary keys, unique constraints and unique indexes (partial ones included)
        unique = conn.execute(
            "SELECT c.relname, i.relname, array_agg(a.attname ORDER BY k.ord) "
            "FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid "
            "JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord) "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
            "WHERE n.nspname = 'public' AND x.indisunique GROUP BY c.relname, i.relname"
        ).fetchall()
        foreign = conn.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text, "
            "ARRAY(SELECT attname FROM unnest(conkey) WITH ORDINALITY k(n, o) "
            "  JOIN pg_attribute ON attrelid = conrelid AND attnum = k.n ORDER BY o), "
            "ARRAY(SELECT attname FROM unnest(confkey) WITH ORDINALITY k(n, o) "
            "  JOIN pg_attribute ON attrelid = confrelid AND attnum = k.n ORDER BY o) "
            "FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace"
        ).fetchall()
    bad = []
    for table, index, columns in unique:
        column = "namespace" if table in BY_NAMESPACE else BY_OTHER_COLUMN.get(table)
        if column is not None and column not in columns:
            bad.append(f"{index} on {table}{tuple(columns)} lacks {column}")
    assert not bad, bad
    for source, target, columns, referred in foreign:
        if source in BY_NAMESPACE:
            assert target in BY_NAMESPACE | REFERENCE, (source, target)
            if target in BY_NAMESPACE:  # co-located: namespace matched with namespace
                assert "namespace" in columns, (source, target, columns)
                assert referred[columns.index("namespace")] == "namespace"
        else:
            assert target in REFERENCE | LOCAL, f"{source} -> {target} crosses shards"


_DISTRIBUTED = "|".join(sorted(BY_NAMESPACE))
# a namespace table read beside another relation: FROM/JOIN <table> <alias> ON/WHERE ...,
# or DELETE FROM <table> <alias> USING <other> <alias> WHERE ...
_READ = re.compile(
    rf"\b(?:FROM|JOIN)\s+({_DISTRIBUTED})\s+(?:AS\s+)?(\w+)\s+"
    r"(?:USING\s+\w+\s+\w+\s+)?(?:ON|WHERE)\s+(.{1,400}?)"
    r"(?=\bORDER BY\b|\bGROUP BY\b|\bLIMIT\b|\bRETURNING\b|\bJOIN\b|;|\"|$)",
    re.IGNORECASE | re.DOTALL,
)


def joins_without_namespace(text: str) -> list[str]:
    """Conditions that relate a namespace table to another relation without namespace."""
    text = re.sub(r'"\s*\n\s*f?"', "", text)  # join Python's adjacent string literals
    bad = []
    for match in _READ.finditer(text):
        table, alias, condition = match.groups()
        qualifiers = set(re.findall(r"\b(\w+)\.\w+", condition)) - {alias}
        if qualifiers and "namespace" not in condition:
            bad.append(f"{table} {alias}: {' '.join(condition.split())[:120]}")
    return bad


def test_no_statement_joins_across_namespaces(migrated: str) -> None:
    sources = [
        *(ROOT / "src" / "hindsight" / "stores").glob("*.py"),
        *(ROOT / "src" / "hindsight" / "services").glob("*.py"),
        *(ROOT / "sql").glob("*.sql"),
    ]
    bad = {str(p.relative_to(ROOT)): joins_without_namespace(p.read_text()) for p in sources}
    # and the statements the database runs itself: the trigger functions, as installed
    with psycopg.connect(migrated) as conn:
        for name, body in conn.execute(
            "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace "
            "AND prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql')"
        ):
            bad[f"function {name}"] = joins_without_namespace(body)
    assert len(bad) > 20
    assert not {p: b for p, b in bad.items() if b}


def test_the_check_finds_a_join_across_namespaces() -> None:
    # what recall's statement and the access counts looked like before revision 0017
    assert joins_without_namespace("FROM arm JOIN long_term_memory m ON m.id = arm.id\n")
    assert joins_without_namespace(
        '"(SELECT a.access_count FROM memory_access a WHERE a.memory_id = m.id)"\nX = 1\n'
    )
    assert joins_without_namespace('"FROM arm JOIN long_term_memory m ON m.id = arm.id\n"""')
    assert not joins_without_namespace(
        "FROM arm JOIN long_term_memory m ON m.namespace = %(ns)s AND m.id = arm.id"
    )


def test_the_citus_ddl_runs_and_places_every_table(migrated: str) -> None:
    """Against stand-ins for Citus's functions, in a transaction rolled back."""
    ddl = CITUS_DDL.read_text()
    body = ddl.replace("BEGIN;", "").replace("COMMIT;", "")
    with psycopg.connect(migrated) as conn:
        conn.execute("CREATE SCHEMA citus_stub")
        conn.execute("CREATE TABLE citus_stub.placed (tbl text, kind text, col text, co text)")
        conn.execute(
            "CREATE FUNCTION citus_stub.create_distributed_table(table_name regclass, "
            "distribution_column text, distribution_type text DEFAULT 'hash', "
            "colocate_with text DEFAULT 'default', shard_count int DEFAULT NULL) "
            "RETURNS void LANGUAGE sql AS $$ INSERT INTO citus_stub.placed "
            "SELECT table_name::text, 'distributed', distribution_column, colocate_with; "
            "SELECT attname FROM pg_attribute WHERE attrelid = table_name "
            "AND attname = distribution_column $$"
        )
        conn.execute(
            "CREATE FUNCTION citus_stub.create_reference_table(table_name regclass) "
            "RETURNS void LANGUAGE sql AS $$ INSERT INTO citus_stub.placed "
            "SELECT table_name::text, 'reference', NULL, NULL $$"
        )
        conn.execute("SET LOCAL search_path = public, citus_stub")
        conn.execute(body)  # type: ignore[arg-type]
        placed = {
            r[0]: (r[1], r[2], r[3])
            for r in conn.execute("SELECT tbl, kind, col, co FROM citus_stub.placed")
        }
        rows = conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
            "WHERE c.relname = ANY(%s) AND a.attname = 'namespace'",
            (list(BY_NAMESPACE),),
        ).fetchall()
        conn.rollback()
    assert {r[0] for r in rows} == BY_NAMESPACE
    assert {t for t, p in placed.items() if p[0] == "reference"} == REFERENCE
    by_namespace = {t for t, p in placed.items() if p[:2] == ("distributed", "namespace")}
    assert by_namespace == BY_NAMESPACE
    assert all(placed[t][2] == "long_term_memory" for t in BY_NAMESPACE - {"long_term_memory"})
    assert placed["embedding_cache"][:2] == ("distributed", "content_hash")
    assert not set(placed) & LOCAL


def test_revision_0017_keeps_the_data_down_and_up(fresh_db: str, redis_url: str, ns: str) -> None:
    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        api = Api.at(srv.url, ns)
        made = api.observe(
            {"key": "user.city", "value": "Lisbon"},
            {"key": "user.food", "value": "grilled sardines"},
        )
        api.observe({"key": "user.city", "value": "Porto"})  # history: superseded
        for _ in range(3):
            api.recall("sardines", k=1)
        api.append("s", "one")
        api.append("s", "two")
        ids = {m["key"]: m["id"] for m in made}

        def counted() -> bool:
            return bool(api.get(ids["user.food"])["access_count"] == 3)

        wait_until(counted, "the three recalls to be counted", 10)
        api.client.close()

    snapshot = (
        "SELECT (SELECT count(*) FROM long_term_memory), (SELECT count(*) FROM memory_history), "
        "(SELECT count(*) FROM recall_log), (SELECT count(*) FROM working_memory), "
        # keyword terms only: the label counts (negative terms) go with revision 0024 and
        # come back recounted (label_drift below)
        "(SELECT count(*) FROM keyword_stats WHERE term >= 0), "
        "(SELECT access_count FROM memory_access WHERE memory_id = %s)"
    )
    primary_key = (
        "SELECT array_agg(a.attname ORDER BY k.o) FROM pg_index x "
        "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(n, o) "
        "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n "
        "WHERE x.indrelid = %s::regclass AND x.indisprimary"
    )
    config = migrate.alembic_config(
        fresh_db, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
    )
    food = uuid.UUID(ids["user.food"])
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        before = conn.execute(snapshot, (food,)).fetchone()
        assert before is not None and before[-1] == 3 and before[0] >= 2
        migrate.downgrade(config, "0004")
        assert conn.execute(snapshot, (food,)).fetchone() == before
        assert conn.execute(primary_key, ("long_term_memory",)).fetchone() == (["id"],)
        assert conn.execute(primary_key, ("memory_access",)).fetchone() == (["memory_id"],)
        migrate.upgrade(config)
        assert conn.execute(snapshot, (food,)).fetchone() == before
        assert label_drift(fresh_db, ns) == []
        for table in BY_NAMESPACE - {"working_sessions"}:
            key = conn.execute(primary_key, (table,)).fetchone()
            assert key is not None and key[0][0] == "namespace", (table, key)
        row = conn.execute(
            "SELECT namespace FROM memory_access WHERE memory_id = %s", (food,)
        ).fetchone()
        assert row == (ns,)
        # deleting the memory takes its access counts along (the trigger matches namespace)
        conn.execute("DELETE FROM long_term_memory WHERE namespace = %s AND id = %s", (ns, food))
        left = conn.execute("SELECT count(*) FROM memory_access WHERE memory_id = %s", (food,))
        assert left.fetchone() == (0,)


@pytest.fixture(autouse=True)
def _no_leftover_stub(migrated: str) -> None:
    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS citus_stub CASCADE")
