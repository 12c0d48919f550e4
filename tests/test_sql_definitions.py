"""A database at head has the functions and triggers that hindsight/db/functions.sql
writes, as it writes them, and no others: the file is where a reader finds them and where a
developer changes them, so a migration that wrote one its own way would make it lie.

As `alembic check` does for tables. The comparison is PostgreSQL's own: the catalog of a
migrated database, before and after running every definition of the file over it (in a
transaction rolled back), so spacing and spelling are normalised the way the server does."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from hindsight.db import functions

# Functions of the public schema, less those of extensions (pgvector's); triggers a user
# made (not those behind foreign keys)
_FUNCTIONS = """
SELECT p.oid::regprocedure::text AS key, p.proname AS name, pg_get_functiondef(p.oid) AS def,
       obj_description(p.oid, 'pg_proc') AS comment
FROM pg_proc p
WHERE p.pronamespace = 'public'::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                  AND d.objid = p.oid AND d.deptype = 'e')
"""
_TRIGGERS = """
SELECT t.tgname AS key, t.tgname AS name, pg_get_triggerdef(t.oid) AS def,
       t.tgenabled::text AS comment
FROM pg_trigger t WHERE NOT t.tgisinternal
"""


def catalog(conn: psycopg.Connection[Any]) -> dict[str, tuple[str, str, str | None]]:
    """Each function (by signature) and trigger (by name): its name, its definition as the
    server prints it, and its comment (a trigger: whether it is enabled)."""
    rows = conn.execute(_FUNCTIONS).fetchall() + conn.execute(_TRIGGERS).fetchall()
    return {key: (name, definition, comment) for key, name, definition, comment in rows}


def differences(conn: psycopg.Connection[Any]) -> list[str]:
    """Where the database differs from functions.sql; changes nothing."""
    defined = functions.definitions()
    found = []
    with conn.transaction(force_rollback=True):
        before = catalog(conn)
        for name, sql in defined.items():
            table = conn.execute(
                "SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname = %s", (name,)
            ).fetchone()
            if table is not None:  # a trigger cannot be replaced before PostgreSQL 14
                conn.execute(f"DROP TRIGGER {name} ON {table[0]}")
            conn.execute(sql)  # type: ignore[arg-type]
        after = catalog(conn)
    names = [entry[0] for entry in before.values()]
    for key in sorted(before.keys() | after.keys()):
        if key not in before:
            found.append(f"{key}: in {functions.FILE.name}, not in the database")
        elif before[key][0] not in defined:
            found.append(f"{key}: in the database, not in {functions.FILE.name}")
        elif names.count(before[key][0]) > 1:
            found.append(f"{key}: one of several functions named {before[key][0]}")
        elif before[key] != after[key]:
            found.append(f"{key}: the database's differs from {functions.FILE.name}'s")
    return found


def test_the_database_at_head_is_what_the_file_says(module_db: str) -> None:
    with psycopg.connect(module_db) as conn:
        assert differences(conn) == []
        # and the check saw them all: every function and trigger the migrations made
        assert set(functions.definitions()) == {name for name, _, _ in catalog(conn).values()}


def test_the_check_finds_a_migration_that_wrote_a_definition_its_own_way(
    module_db: str,
) -> None:
    """What a migration that changed a function inline, added one the file lacks or made
    a trigger of its own would leave behind."""
    body = functions.definitions()["hindsight_session_ended"]
    with psycopg.connect(module_db) as conn, conn.transaction(force_rollback=True):
        conn.execute(body.replace("coalesce(n.ended_at, now())", "now()"))  # type: ignore[arg-type]
        conn.execute("COMMENT ON FUNCTION hindsight_actor() IS 'someone'")
        conn.execute(
            "CREATE FUNCTION hindsight_stray() RETURNS trigger LANGUAGE plpgsql "
            "AS $$ BEGIN RETURN NULL; END $$"
        )
        conn.execute(
            "CREATE TRIGGER stray AFTER DELETE ON working_sessions "
            "FOR EACH STATEMENT EXECUTE FUNCTION hindsight_stray()"
        )
        conn.execute("ALTER TABLE working_sessions DISABLE TRIGGER working_sessions_ended")
        found = differences(conn)
    assert found == [
        "hindsight_actor(): the database's differs from functions.sql's",
        "hindsight_session_ended(): the database's differs from functions.sql's",
        "hindsight_stray(): in the database, not in functions.sql",
        "stray: in the database, not in functions.sql",
        "working_sessions_ended: the database's differs from functions.sql's",
    ]


def test_a_definition_is_loaded_only_as_the_migration_saw_it() -> None:
    """A migration pins the text it loads: once the file says something else, loading it
    fails instead of installing the new text at an old revision."""
    sql = functions.definitions()["hindsight_actor"]
    assert functions.load(hindsight_actor=functions.pin(sql)) == sql
    with pytest.raises(RuntimeError, match=r"hindsight_actor .* new migration"):
        functions.load(hindsight_actor=functions.pin(sql + " "))


def test_notes_are_not_part_of_a_definition() -> None:
    """Lines that start with `--` explain; they run nowhere, so rewording one needs no
    migration. A comment inside a body is indented and is part of it."""
    text = (
        "-- the file's header\n"
        "-- name: f\n"
        "-- why f is so\n"
        "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$\n"
        "BEGIN\n"
        "  -- how\n"
        "  RETURN 1;\n"
        "END $$;\n"
        "-- name: t\n"
        "CREATE TRIGGER t AFTER DELETE ON x FOR EACH STATEMENT EXECUTE FUNCTION f();\n"
    )
    assert functions.parse(text) == {
        "f": "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$\n"
        "BEGIN\n  -- how\n  RETURN 1;\nEND $$;\n",
        "t": "CREATE TRIGGER t AFTER DELETE ON x FOR EACH STATEMENT EXECUTE FUNCTION f();\n",
    }
    # a section that creates something else could not be loaded by its name
    with pytest.raises(ValueError, match="the section 'g' must create g alone"):
        functions.parse(text.replace("-- name: f", "-- name: g"))
