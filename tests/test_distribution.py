"""The schema can be distributed by namespace (Citus): keys and foreign keys carry the
namespace, statements join within one namespace, and `hindsight db distribute`'s plan
(db/citus.py) places every table. Checked on the schema and the source, on a single
PostgreSQL; tests/test_citus.py distributes it on a real cluster."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import psycopg

from hindsight.db import citus, migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from tests.conftest import Api, make_settings
from tests.support.copies import copies_drift
from tests.support.labels import label_drift
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer

ROOT = Path(__file__).resolve().parent.parent

# How each table is placed, as the plan says; a new table must be placed there to pass.
BY_NAMESPACE = {p.table for p in citus.PLAN if p.column == "namespace"}
REFERENCE = {p.table for p in citus.PLAN if p.kind == "reference"}
BY_OTHER_COLUMN = {p.table: p.column for p in citus.PLAN if p.column not in (None, "namespace")}
LOCAL = set(citus.LOCAL)


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
        assert tables == placed, f"place these tables in db/citus.PLAN: {sorted(tables ^ placed)}"
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
        # come back recounted (label_drift below); the terms with a document frequency, not
        # the rows: re-indexing (0032, stems) leaves rows of 0 until compaction merges them
        "(SELECT count(*) FROM (SELECT term FROM keyword_stats WHERE term >= 0 "
        "GROUP BY namespace, term HAVING sum(df) <> 0) t), "
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
        assert copies_drift(fresh_db) == []
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
