"""`hindsight db …` against a live database."""

from __future__ import annotations

import psycopg

from tests.support.cli import hindsight


def test_db_commands(empty_db: str) -> None:
    out = hindsight("db", "current", database_url=empty_db)
    assert out.returncode == 0 and "current: none" in out.stdout and "behind" in out.stdout
    out = hindsight("db", "upgrade", database_url=empty_db)
    assert out.returncode == 0, out.stderr
    out = hindsight("db", "current", database_url=empty_db)
    assert "up to date" in out.stdout
    assert hindsight("db", "check", database_url=empty_db).returncode == 0
    out = hindsight("db", "downgrade", "base", database_url=empty_db)
    assert out.returncode == 0 and "schema at base" in out.stdout
    with psycopg.connect(empty_db) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'alembic_version'"
        ).fetchone()
    assert left == (0,)


def test_commands_refuse_a_schema_that_is_behind(empty_db: str) -> None:
    out = hindsight("keys", "list", database_url=empty_db)
    assert out.returncode != 0
    assert "hindsight db upgrade" in out.stderr and "Traceback" not in out.stderr
