"""The keyword postings (migration 0021) are the keyword arm's index for large namespaces:
they must hold exactly each memory's current keywords through every kind of write, or
recall finds a memory by words it no longer says and misses it by the words it does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer

# Each memory's keywords, one row per term, as the postings must hold them.
_EXPECTED = """
SELECT m.namespace, split_part(e, ':', 1)::int - 1 AS term, m.id,
       split_part(e, ':', 2)::real AS weight
FROM long_term_memory m,
     unnest(string_to_array(btrim(split_part(m.keywords::text, '/', 1), '{}'), ',')) e
WHERE m.namespace = %(ns)s
"""
_HELD = """
SELECT namespace, term, memory_id, weight FROM keyword_postings WHERE namespace = %(ns)s
"""


def postings_match(url: str, ns: str) -> tuple[int, int, int]:
    """(postings, missing, stale) of namespace `ns`."""
    with psycopg.connect(url) as conn:
        held = set(conn.execute(_HELD, {"ns": ns}).fetchall())
        expected = set(conn.execute(_EXPECTED, {"ns": ns}).fetchall())
    return len(held), len(expected - held), len(held - expected)


@pytest.fixture(scope="module")
def big_namespace_server(migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    """Every namespace is 'large': recall's keyword arm reads the postings."""
    with ThreadServer(make_settings(exact_search_max_rows=0), migrated, redis_url) as srv:
        yield srv


def test_postings_follow_every_write(
    api: Api, migrated: str, big_namespace_server: ThreadServer
) -> None:
    first = api.observe(
        {"key": "trip", "value": "booked a ferry to Zanzibar"},
        {"key": "pet", "value": "the cat is called Mochi"},
        {"key": "car", "value": "the car is a blue Skoda"},
    )
    ids = {r["key"]: r["id"] for r in first}
    assert postings_match(migrated, api.ns)[1:] == (0, 0)
    assert postings_match(migrated, api.ns)[0] >= 9

    big = Api.at(big_namespace_server.url, api.ns)
    assert big.recall("zanzibar", k=3)["results"][0]["key"] == "trip"

    # a new value replaces the words it is found by
    api.observe({"key": "trip", "value": "booked a train to Valparaiso"})
    r = api.client.patch(f"{api.base}/memories/{ids['pet']}", json={"value": "the dog is Bruno"})
    assert r.status_code == 200, r.text
    # a tier change keeps them (the row's keywords did not change)
    r = api.client.patch(f"{api.base}/memories/{ids['car']}", json={"status": "archived"})
    assert r.status_code == 200, r.text
    assert postings_match(migrated, api.ns)[1:] == (0, 0)

    keys = [r["key"] for r in big.recall("valparaiso", k=3)["results"]]
    assert keys[:1] == ["trip"]
    assert "trip" not in [r["key"] for r in big.recall("zanzibar", k=3)["results"]]
    assert [r["key"] for r in big.recall("bruno", k=3)["results"]][:1] == ["pet"]
    assert "pet" not in [r["key"] for r in big.recall("mochi", k=3)["results"]]

    # a delete takes them away
    r = api.client.delete(f"{api.base}/memories/{ids['pet']}")
    assert r.status_code in (200, 204), r.text
    assert postings_match(migrated, api.ns)[1:] == (0, 0)
    with psycopg.connect(migrated) as conn:
        left = conn.execute(
            "SELECT count(*) FROM keyword_postings WHERE namespace = %s AND memory_id = %s",
            (api.ns, ids["pet"]),
        ).fetchone()
    assert left == (0,)


def test_postings_of_an_import_and_of_an_erased_namespace(
    api: Api, migrated: str, redis_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "memories.jsonl"
    source.write_text(
        "\n".join(
            json.dumps({"key": f"note.{i}", "value": f"harbour crane number {i} painted red"})
            for i in range(300)
        )
    )
    out = hindsight(
        "import", str(source), "--namespace", api.ns, database_url=migrated, redis_url=redis_url
    )
    assert out.returncode == 0, out.stderr
    held, missing, stale = postings_match(migrated, api.ns)
    assert (missing, stale) == (0, 0) and held >= 300 * 4

    out = hindsight(
        "erase", "--namespace", api.ns, "--yes", database_url=migrated, redis_url=redis_url
    )
    assert out.returncode == 0, out.stderr
    assert postings_match(migrated, api.ns) == (0, 0, 0)


def test_an_upgrade_builds_the_postings_of_memories_already_there(
    api: Api, migrated: str, empty_db: str
) -> None:
    config = migrate.alembic_config(
        empty_db, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
    )
    migrate.upgrade(config)
    with ThreadServer(make_settings(), empty_db, None) as srv:
        Api.at(srv.url, "old").observe(
            *({"key": f"k{i}", "value": f"lighthouse keeper log {i}"} for i in range(20))
        )
    migrate.downgrade(config, "0020")
    with psycopg.connect(empty_db) as conn:
        gone = conn.execute("SELECT to_regclass('keyword_postings') IS NULL").fetchone()
    assert gone == (True,)
    migrate.upgrade(config)
    held, missing, stale = postings_match(empty_db, "old")
    assert (missing, stale) == (0, 0) and held >= 20 * 3
