"""The purge (`hindsight maintenance purge`, and the service's maintenance pass) commits
each batch on its own: what it deleted stays deleted when a later step fails."""

from __future__ import annotations

import psycopg

from tests.support.cli import hindsight


def test_purged_batches_stay_purged_when_a_later_step_fails(fresh_db: str) -> None:
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO working_sessions (namespace, session_id, next_step, expires_at) "
            "VALUES ('p', 'old', 10050, now() - interval '1 hour')"
        )
        # two batches' worth of expired steps
        conn.execute(
            "INSERT INTO working_memory (namespace, session_id, step_index, role, content, "
            "expires_at) SELECT 'p', 'old', i, 'user', 'expired', now() - interval '1 hour' "
            "FROM generate_series(0, 10049) AS i"
        )
        # the recall-log step fails, after the steps were purged
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'recall_log is read-only today'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE DELETE ON recall_log "
            "FOR EACH STATEMENT EXECUTE FUNCTION refuse()"
        )
    out = hindsight("maintenance", "purge", database_url=fresh_db)
    assert out.returncode != 0 and "recall_log is read-only today" in out.stderr
    with psycopg.connect(fresh_db) as conn:
        assert conn.execute("SELECT count(*) FROM working_memory").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM working_sessions").fetchone() == (0,)
