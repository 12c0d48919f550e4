"""`hindsight db …` against a live database."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg


def hindsight(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HINDSIGHT_DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "-m", "hindsight.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_db_commands(empty_db: str) -> None:
    out = hindsight(empty_db, "db", "current")
    assert out.returncode == 0 and "current: none" in out.stdout and "behind" in out.stdout
    out = hindsight(empty_db, "db", "upgrade")
    assert out.returncode == 0, out.stderr
    out = hindsight(empty_db, "db", "current")
    assert "up to date" in out.stdout
    assert hindsight(empty_db, "db", "check").returncode == 0
    out = hindsight(empty_db, "db", "downgrade", "base")
    assert out.returncode == 0 and "schema at base" in out.stdout
    with psycopg.connect(empty_db) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'alembic_version'"
        ).fetchone()
    assert left == (0,)


def test_commands_refuse_a_schema_that_is_behind(empty_db: str) -> None:
    out = hindsight(empty_db, "keys", "list")
    assert out.returncode != 0
    assert "hindsight db upgrade" in out.stderr and "Traceback" not in out.stderr
