"""`hindsight import`: a JSON-lines file in, new keys at COPY speed, known keys observed."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from tests.conftest import Api
from tests.support.cli import hindsight
from tests.support.copies import copies_drift
from tests.support.labels import label_drift
from tests.support.servers import ThreadServer


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_loads_new_keys_and_observes_known_ones(
    fresh_db: str, redis_url: str, tmp_path: Path
) -> None:
    from tests.conftest import make_settings

    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        api = Api.at(srv.url, "imp")
        (known,) = api.observe({"key": "user.city", "value": "Oslo"})
        rows: list[dict[str, object]] = [
            {
                "key": f"fact.{i}",
                "value": f"imported fact number {i} about tomatoes",
                "tags": ["garden"],
            }
            for i in range(12_000)
        ]
        rows += [
            {"key": "user.city", "value": "Oslo"},  # reinforces
            {"key": "fact.3", "value": "imported fact number 3 about tomatoes"},  # reinforces
            {"key": "fact.4", "value": "a new value for fact four"},  # supersedes
            {"namespace": "other", "key": "k", "value": "v", "memory_type": "preference"},
        ]
        out = hindsight(
            "import",
            str(write(tmp_path / "m.jsonl", rows)),
            "--namespace",
            "imp",
            database_url=fresh_db,
        )
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        assert report == {
            "memories": 12_004,
            "copied": 12_001,
            "observed": 3,
            "outcomes": {"reinforced": 2, "superseded": 1},
            "indexes_rebuilt": True,
            "already_written": 0,
            "finished_before": None,
        }
        assert api.get(known["id"])["confidence"] == 0.6
        hits = api.recall("fact number 7777 about tomatoes", k=1)["results"]
        assert hits[0]["key"] == "fact.7777"
        assert api.recall("tomatoes", k=1, tags=["garden"])["results"]
        four = api.client.get(f"{api.base}/memories", params={"key": "fact.4"}).json()
        assert four["memories"][0]["value"] == "a new value for fact four"
        assert [h["change"] for h in api.history(four["memories"][0]["id"])] == [
            "created",
            "superseded",
        ]
        assert Api.at(srv.url, "other").recall("v")["results"][0]["memory_type"] == "preference"
    with psycopg.connect(fresh_db) as conn:
        indexes = {
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes "
                "WHERE tablename IN ('long_term_memory', 'memory_keywords')"
            )
        }
        df = conn.execute(
            "SELECT sum(df) FROM keyword_stats WHERE namespace = 'imp' AND term = 0"
        ).fetchone()
    assert {
        "ix_long_term_memory_embedding",
        "ix_memory_keywords_keyword_terms",
    } <= indexes
    assert df == (12_001,)  # the document count the keyword arm's IDF uses
    assert label_drift(fresh_db, "imp") == []  # what recall's filters count by
    assert copies_drift(fresh_db, "imp") == []  # what the keyword arm reads


def test_a_bad_line_stops_the_import_before_anything_is_written(
    fresh_db: str, tmp_path: Path
) -> None:
    rows: list[dict[str, object]] = [
        {"key": "a", "value": "fine"},
        {"key": "b", "value": "v", "memory_type": "gossip"},
    ]
    out = hindsight(
        "import",
        str(write(tmp_path / "bad.jsonl", rows)),
        "--namespace",
        "x",
        database_url=fresh_db,
    )
    assert out.returncode != 0 and "line 2: memory_type" in out.stderr
    with psycopg.connect(fresh_db) as conn:
        assert conn.execute("SELECT count(*) FROM long_term_memory").fetchone() == (0,)


def test_import_reads_standard_input(fresh_db: str, redis_url: str) -> None:
    from tests.conftest import make_settings

    rows = [{"key": f"k{i}", "value": f"piped memory {i}"} for i in range(3)]
    out = hindsight(
        "import",
        "-",
        "--namespace",
        "piped",
        stdin="".join(json.dumps(r) + "\n" for r in rows),
        database_url=fresh_db,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["copied"] == 3
    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        hits = Api.at(srv.url, "piped").recall("piped memory 2", k=1)["results"]
    assert hits[0]["key"] == "k2"


def test_an_import_leaves_one_document_frequency_row_a_term(fresh_db: str, tmp_path: Path) -> None:
    """Every chunk and every import writes a row per term it holds; recall sums a term's
    rows on every query (~200 of them for a common term after a 1M import). The import
    merges them as it finishes, with the sums unchanged."""
    for part in range(3):
        rows = [
            {"key": f"fact.{part}.{i}", "value": f"tomatoes grow in bed {part} row {i}"}
            for i in range(20)
        ]
        out = hindsight(
            "import",
            str(write(tmp_path / f"m{part}.jsonl", rows)),
            "--namespace",
            "garden",
            database_url=fresh_db,
        )
        assert out.returncode == 0, out.stderr
    with psycopg.connect(fresh_db) as conn:
        rows_a_term = conn.execute(
            "SELECT count(*), count(DISTINCT term) FROM keyword_stats WHERE namespace = 'garden'"
        ).fetchone()
        documents = conn.execute(
            "SELECT sum(df) FROM keyword_stats WHERE namespace = 'garden' AND term = 0"
        ).fetchone()
    assert rows_a_term is not None and rows_a_term[0] == rows_a_term[1]
    assert documents == (60,)


def test_an_interleaved_import_keeps_each_namespace_on_its_own_pages(
    fresh_db: str, tmp_path: Path
) -> None:
    """Recall of a small namespace reads every row of it; rows arriving interleaved with
    other namespaces' rows would each cost a page of their own."""
    rows: list[dict[str, object]] = [
        {"namespace": f"agent{i % 20}", "key": f"k{i}", "value": f"note {i} " + "word " * 40}
        for i in range(2_000)
    ]
    out = hindsight("import", str(write(tmp_path / "mixed.jsonl", rows)), database_url=fresh_db)
    assert out.returncode == 0, out.stderr
    with psycopg.connect(fresh_db) as conn:
        (pages,) = conn.execute(
            "SELECT count(DISTINCT (ctid::text::point)[0]) FROM long_term_memory "
            "WHERE namespace = 'agent7'"
        ).fetchone() or (0,)
        (per_page,) = conn.execute(
            "SELECT count(*)::float8 / count(DISTINCT (ctid::text::point)[0]) FROM long_term_memory"
        ).fetchone() or (1.0,)
    # 100 rows of agent7 among 2,000: interleaved, nearly every one on a page of its own
    assert pages <= 100 / per_page + 2, (pages, per_page)


def test_index_builds_get_memory_for_the_whole_graph_and_give_it_back(fresh_db: str) -> None:
    """A graph that outgrows maintenance_work_mem is finished on disk, several times slower:
    a million 384-d memories need more than 1 GB. The setting is reset afterwards, so the
    pooled connection that built the indexes does not keep it."""
    import asyncio

    from hindsight import core
    from hindsight.db.schema import index_build_memory_mb
    from hindsight.services.bulk_import import BulkImporter, parse_line
    from tests.conftest import make_settings

    assert index_build_memory_mb(10_000, 384, 4096) == 1024
    assert 1800 < index_build_memory_mb(1_000_000, 384, 4096) < 2400
    assert index_build_memory_mb(1_000_000, 1536, 4096) == 4096  # HINDSIGHT_INDEX_BUILD_…
    assert index_build_memory_mb(1_000_000, 384, 512) == 512

    async def go() -> tuple[str, str]:
        settings = make_settings(db_pool_min=1, db_pool_max=1, index_build_memory_mb=100)
        hs = await core.start(settings, database_url=fresh_db, redis_url=None, background=False)
        try:
            async with hs.pool.connection() as conn:
                before = await (await conn.execute("SHOW maintenance_work_mem")).fetchone()
            items = [parse_line(f'{{"key": "k{i}", "value": "v {i}"}}', "ns", i) for i in range(50)]
            importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
            report = await importer.run(
                items, total=len(items), import_id="memory", rebuild_indexes=True
            )
            assert report.indexes_rebuilt and report.copied == 50
            async with hs.pool.connection() as conn:
                after = await (await conn.execute("SHOW maintenance_work_mem")).fetchone()
            return before["maintenance_work_mem"], after["maintenance_work_mem"]
        finally:
            await hs.aclose()

    before, after = asyncio.run(go())
    assert after == before


def test_import_redacts_secrets_like_any_write(
    server: ThreadServer, migrated: str, api: Api, tmp_path: Path
) -> None:
    secret = "ghp_" + "k3Y9" * 9
    rows: list[dict[str, object]] = [{"key": "ci.token", "value": f"the CI uses {secret}"}]
    out = hindsight(
        "import",
        str(write(tmp_path / "s.jsonl", rows)),
        "--namespace",
        api.ns,
        database_url=migrated,
    )
    assert out.returncode == 0, out.stderr
    (m,) = api.client.get(f"{api.base}/memories").json()["memories"]
    assert m["value"] == "the CI uses [REDACTED:github_token]"
