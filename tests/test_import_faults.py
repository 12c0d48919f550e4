"""`hindsight import` under faults: a key written concurrently, a kill -9 mid-import, the
search indexes the killed import left dropped, and running the same input again."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import psycopg

from tests.conftest import ADMIN_KEY, make_settings
from tests.support.cli import hindsight
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer

SEARCH_INDEXES = {
    "ix_long_term_memory_embedding",
    "ix_memory_keywords_keyword_terms",
}


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def spawn_import(path: Path, database_url: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    env["HINDSIGHT_DATABASE_URL"] = database_url
    return subprocess.Popen(
        [sys.executable, "-m", "hindsight.cli.main", "import", str(path), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def valid_search_indexes(conn: psycopg.Connection[Any]) -> set[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid IN ('long_term_memory'::regclass, 'memory_keywords'::regclass) "
        "AND i.indisvalid"
    ).fetchall()
    return {r[0] for r in rows} & SEARCH_INDEXES


def test_a_key_written_while_a_chunk_is_copied_joins_the_import(
    fresh_db: str, tmp_path: Path
) -> None:
    seed = hindsight(
        "import",
        str(write(tmp_path / "seed.jsonl", [{"key": "seed", "value": "a seed"}])),
        "--namespace",
        "imp",
        database_url=fresh_db,
    )
    assert seed.returncode == 0, seed.stderr
    rows: list[dict[str, object]] = [{"key": f"k{i}", "value": f"value {i}"} for i in range(50)]
    with psycopg.connect(fresh_db) as writer:
        # another client's insert of k5, not committed yet when the import reaches it
        writer.execute(
            "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type, "
            "embedding, keywords, keyword_terms, confidence, importance, changed_by) "
            "SELECT gen_random_uuid(), namespace, 'k5', 'held value', memory_type, "
            "embedding, keywords, keyword_terms, confidence, importance, 'other client' "
            "FROM long_term_memory WHERE mem_key = 'seed'"
        )
        proc = spawn_import(write(tmp_path / "m.jsonl", rows), fresh_db, "--namespace", "imp")
        with psycopg.connect(fresh_db, autocommit=True) as watch:
            wait_until(
                lambda: watch.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = 'hindsight' "
                    "AND wait_event_type = 'Lock'"
                ).fetchone(),
                "the import to wait for the other client's row",
                timeout=60,
            )
        writer.commit()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert (report["copied"], report["observed"], report["outcomes"]) == (
        49,
        1,
        {"superseded": 1},
    )
    with psycopg.connect(fresh_db) as conn:
        values = dict(
            conn.execute(
                "SELECT mem_key, mem_value FROM long_term_memory "
                "WHERE namespace = 'imp' AND status = 'active'"
            ).fetchall()
        )
    assert len(values) == 51 and values["k5"] == "value 5"


def test_a_killed_import_is_finished_by_a_rerun_and_its_indexes_come_back(
    fresh_db: str, redis_url: str, tmp_path: Path
) -> None:
    rows: list[dict[str, object]] = [
        {"key": f"fact.{i}", "value": f"imported fact number {i}"} for i in range(6_000)
    ]
    path = write(tmp_path / "big.jsonl", rows)
    proc = spawn_import(path, fresh_db, "--namespace", "big", "--rebuild-indexes")
    with psycopg.connect(fresh_db, autocommit=True) as conn:

        def first_chunk_in() -> bool:
            row = conn.execute("SELECT count(*) FROM long_term_memory").fetchone()
            return bool(row and row[0] >= 5_000)

        wait_until(first_chunk_in, "the first chunk to commit", 120)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        (committed,) = conn.execute("SELECT count(*) FROM long_term_memory").fetchone() or (0,)
        assert 5_000 <= committed <= 6_000
        assert valid_search_indexes(conn) != SEARCH_INDEXES  # the kill left them dropped

        missing = SEARCH_INDEXES - valid_search_indexes(conn)

        # a service started now notices, says so, and builds them without blocking writes.
        # An open transaction that has written to the table holds the build (CREATE INDEX
        # CONCURRENTLY first waits for every transaction that may write to the table), so
        # the rebuild is seen running for as long as the test needs. (The blocker is taken
        # before the service starts, and let go before it stops, whatever happens.)
        with contextlib.ExitStack() as stack, psycopg.connect(fresh_db) as blocker:
            blocker.execute("LOCK TABLE long_term_memory IN ROW EXCLUSIVE MODE")
            srv = stack.enter_context(ThreadServer(make_settings(), fresh_db, redis_url))
            auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
            states: list[str] = []

            def search_indexes() -> str:
                r = httpx.get(f"{srv.url}/readyz", timeout=10)
                # slower recall, not down: the service stays ready throughout
                assert r.status_code == 200 and r.json()["status"] == "ready", r.text
                states.append(r.json()["checks"]["search_indexes"])
                return states[-1]

            def building() -> bool:
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_progress_create_index "
                    "WHERE datname = current_database() "
                    "AND relid = 'long_term_memory'::regclass"
                ).fetchone()
                return bool(row and row[0])

            wait_until(
                lambda: search_indexes().startswith("rebuilding: "), "the rebuild to start", 120
            )
            wait_until(building, "the index build to be under way", 120)
            assert set(states[-1].removeprefix("rebuilding: ").split(", ")) == missing, states
            assert {s.split(":")[0] for s in states} <= {"not checked yet", "missing", "rebuilding"}

            # a write goes through while the build waits, and does not wait for it
            wrote = httpx.post(
                f"{srv.url}/v1/namespaces/live/memories",
                json={"key": "written.during.rebuild", "value": "a memory written meanwhile"},
                headers=auth,
                timeout=30,
            )
            assert wrote.status_code == 201, wrote.text
            assert building() and search_indexes().startswith("rebuilding: ")

            blocker.rollback()  # let the build go on
            wait_until(lambda: search_indexes() == "ok", "the search indexes to be rebuilt", 120)
            assert valid_search_indexes(conn) == SEARCH_INDEXES
            for ns, query, key in [
                ("big", "imported fact number 17", "fact.17"),
                ("live", "a memory written meanwhile", "written.during.rebuild"),
            ]:
                hits = httpx.post(
                    f"{srv.url}/v1/namespaces/{ns}/recall",
                    json={"query": query, "k": 1},
                    headers=auth,
                    timeout=30,
                ).json()["results"]
                assert hits[0]["key"] == key, (query, hits)

    # the same input again: only what the killed run did not write, nothing reinforced
    again = hindsight("import", str(path), "--namespace", "big", database_url=fresh_db)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["already_written"] == committed
    assert report["copied"] == 6_000 - committed and report["observed"] == 0
    with psycopg.connect(fresh_db) as conn:
        counts = conn.execute(
            "SELECT count(*), max(observation_count) FROM long_term_memory WHERE namespace = 'big'"
        ).fetchone()
    assert counts == (6_000, 1)
    # and once more, after it finished: nothing to do
    done = hindsight("import", str(path), "--namespace", "big", database_url=fresh_db)
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout)
    assert last["finished_before"] and last["copied"] == 0 and last["observed"] == 0
