"""`hindsight doctor` against real stores: a good setup passes; each breakage is named,
with its fix, and the exit status says so."""

from __future__ import annotations

from pathlib import Path

import psycopg
import redis

from tests.support.cli import hindsight
from tests.support.servers import free_port


def test_a_good_setup_passes(fresh_db: str, redis_url: str, tmp_path: Path) -> None:
    done = hindsight("doctor", database_url=fresh_db, redis_url=redis_url, data_dir=str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for name in ("configuration", "disk", "postgres", "pgvector", "schema", "embedding"):
        assert f"ok    {name}" in out, out
    assert "appendonly yes" in out and "search indexes present" in out
    assert "all checks passed" in out


def test_a_broken_setup_fails_with_the_fix(fresh_db: str, redis_url: str, tmp_path: Path) -> None:
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute("DROP INDEX ix_memory_keywords_keyword_terms")
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    done = hindsight("doctor", database_url=fresh_db, redis_url=nowhere, data_dir=str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "FAIL  index ix_memory_keywords_keyword_terms" in out, out
    assert "fix: CREATE INDEX ix_memory_keywords_keyword_terms ON memory_keywords USING gin" in out
    assert "FAIL  redis" in out and "unreachable" in out
    assert "correct HINDSIGHT_REDIS_URL" in out
    assert "2 problem(s) found" in out
    # the printed fix repairs it
    fix = out.split("fix: ", 2)[1].splitlines()[0]
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute(fix)  # type: ignore[arg-type]


def test_redis_without_aof_and_an_old_schema_fail(
    empty_db: str, redis_url: str, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(redis_url)
    client.config_set("appendonly", "no")
    try:
        done = hindsight(
            "doctor", database_url=empty_db, redis_url=redis_url, data_dir=str(tmp_path)
        )
    finally:
        client.config_set("appendonly", "yes")
        client.close()
    assert done.returncode == 1
    out = done.stdout
    assert "FAIL  schema" in out and "fix: hindsight db upgrade" in out, out
    assert "appendonly is 'no'" in out and "CONFIG SET appendonly yes" in out
