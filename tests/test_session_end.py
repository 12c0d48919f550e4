"""Ending a session and queuing its consolidation happen together or not at all: a session
ended without its job would never be consolidated."""

from __future__ import annotations

import psycopg

from tests.conftest import Api, make_settings
from tests.support.servers import ThreadServer


def test_a_failed_enqueue_leaves_the_session_active(fresh_db: str, redis_url: str, ns: str) -> None:
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        # the job insert fails, as on a full disk
        conn.execute(
            "CREATE FUNCTION refuse_jobs() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'no room for jobs' USING ERRCODE = 'disk_full'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse_jobs BEFORE INSERT ON consolidation_jobs "
            "FOR EACH ROW EXECUTE FUNCTION refuse_jobs()"
        )
    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        api = Api.at(srv.url, ns)
        api.append("s", "a step")
        r = api.client.post(f"{api.base}/sessions/s:end")
        assert r.status_code == 503, r.text
        assert api.client.get(f"{api.base}/sessions/s").json()["status"] == "active"
        with psycopg.connect(fresh_db, autocommit=True) as conn:
            conn.execute("DROP TRIGGER refuse_jobs ON consolidation_jobs")
        # ending it again works, and queues the job
        ended = api.client.post(f"{api.base}/sessions/s:end")
        assert ended.status_code == 200, ended.text
        assert ended.json()["status"] == "ended" and ended.json()["consolidation"]["job_id"]
