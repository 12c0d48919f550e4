"""Alembic owns the schema: upgrade, downgrade and upgrade again on a live database."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import psycopg

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from tests.support.copies import copies_drift
from tests.support.labels import label_drift
from tests.support.poll import wait_until

ROOT = Path(__file__).resolve().parent.parent


def tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return {r[0] for r in rows}


def config(url: str):  # type: ignore[no-untyped-def]
    return migrate.alembic_config(
        url, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
    )


def test_upgrade_downgrade_upgrade_with_data_and_connections_open(empty_db: str) -> None:
    dsn = empty_db
    migrate.upgrade(config(empty_db))
    assert migrate.current_revision(empty_db) == migrate.head_revision()
    # a live database: rows in it, and another session connected throughout
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute(
            "INSERT INTO working_sessions (namespace, session_id, expires_at) "
            "VALUES ('n', 's', now() + interval '1 day')"
        )
        migrate.downgrade(config(empty_db), "base")
        assert tables(empty_db) == {"alembic_version"}
        migrate.upgrade(config(empty_db))
        assert "long_term_memory" in tables(empty_db)
        other.execute("SELECT 1")
    migrate.check(config(empty_db))


def test_alembic_cli_from_the_repository_root(empty_db: str, tmp_path: Path) -> None:
    env = {**os.environ, "HINDSIGHT_DATABASE_URL": empty_db, "HINDSIGHT_DATA_DIR": str(tmp_path)}
    for args in (["upgrade", "head"], ["check"], ["downgrade", "base"], ["upgrade", "head"]):
        out = subprocess.run(
            [sys.executable, "-m", "alembic", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, (args, out.stderr)
    assert "long_term_memory" in tables(empty_db)


def test_every_table_and_column_is_commented(migrated: str) -> None:
    with psycopg.connect(migrated) as conn:
        missing = conn.execute(
            """
            SELECT c.relname || coalesce('.' || a.attname, '')
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
                 AND NOT a.attisdropped
            WHERE c.relkind = 'r' AND c.relname <> 'alembic_version'
              AND (a.attname IS NULL AND obj_description(c.oid, 'pg_class') IS NULL
                   OR a.attname IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL)
            UNION ALL
            SELECT c.relname FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            WHERE c.relkind = 'r' AND c.relname <> 'alembic_version'
              AND obj_description(c.oid, 'pg_class') IS NULL
            """
        ).fetchall()
    assert missing == []


def test_indexes_the_design_asks_for(migrated: str) -> None:
    with psycopg.connect(migrated) as conn:
        defs = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
            )
        }
    assert "hnsw (embedding halfvec_cosine_ops)" in defs["ix_long_term_memory_embedding"]
    # no graph over the keyword vectors: every write kept it up to date, and the keyword
    # arm reads the posting lists for every query (migration 0040)
    assert "ix_long_term_memory_keywords" not in defs
    # the keyword arm's posting lists, over the narrow copy (migration 0035)
    assert "memory_keywords USING gin (keyword_terms)" in defs["ix_memory_keywords_keyword_terms"]
    # over the computed columns, not status: a tier move changes no indexed column
    assert defs["uq_long_term_memory_active_key"].endswith("WHERE live")
    assert defs["ix_long_term_memory_quarantined_key"].endswith("WHERE quarantined")
    assert "(expires_at)" in defs["ix_working_memory_expires_at"]
    assert "UNIQUE" in defs["uq_working_memory_step"]


def test_cjk_memories_are_reindexed_and_builtin_store_moves_to_v2(empty_db: str) -> None:
    """A store written before CJK segmentation: its Chinese memory is re-indexed (keywords
    and built-in embedding), English memories keep their vectors, and downgrade restores
    the old indexing."""
    from hindsight.retrieval.keywords import document_terms

    old = migrate.alembic_config(
        empty_db, embedding_name="builtin-hash-v1", embedding_dimensions=384
    )
    migrate.upgrade(old, "0004")
    with psycopg.connect(empty_db, autocommit=True) as conn:
        for key, value in (("zh", "用户养了一只猫"), ("en", "the user has a cat")):
            conn.execute(
                "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type,"
                " embedding, keywords, keyword_terms, confidence) VALUES (gen_random_uuid(),"
                " 'n', %s, %s, 'fact', %s::halfvec, '{1:1}/268435456'::sparsevec,"
                " ARRAY[12345], 0.5)",
                (key, value, "[" + ",".join(["0.05"] * 384) + "]"),
            )
    migrate.upgrade(old, "0005")  # 0032 re-indexes every row again (stemming)
    with psycopg.connect(empty_db) as conn:
        rows = dict(conn.execute("SELECT mem_key, keyword_terms FROM long_term_memory").fetchall())
        model = conn.execute(
            "SELECT value FROM hindsight_meta WHERE name = 'embedding_model'"
        ).fetchone()
        embedding = conn.execute(
            "SELECT embedding::text FROM long_term_memory WHERE mem_key = 'zh'"
        ).fetchone()
    assert model == ("builtin-hash-v2",)
    assert rows["zh"] == sorted(document_terms("zh: 用户养了一只猫"))
    assert rows["en"] == [12345]  # no CJK: untouched
    assert embedding is not None and embedding[0] != "[" + ",".join(["0.05"] * 384) + "]"
    migrate.downgrade(old, "0004")
    with psycopg.connect(empty_db) as conn:
        terms = conn.execute(
            "SELECT keyword_terms FROM long_term_memory WHERE mem_key = 'zh'"
        ).fetchone()
        model = conn.execute(
            "SELECT value FROM hindsight_meta WHERE name = 'embedding_model'"
        ).fetchone()
    assert model == ("builtin-hash-v1",)
    assert terms is not None and len(terms[0]) == 2  # "zh" and the whole sentence as one word


def test_keywords_are_reindexed_with_stems_and_back(empty_db: str) -> None:
    """Memories stored before stemming: after the upgrade "adopted" is indexed as `adopt`,
    the document frequencies follow, no history entry is written and cached specificities
    are cleared; the downgrade restores the words as written."""
    from hindsight.retrieval.keywords import document_terms, document_vector
    from hindsight.text.tokenize import keyword_tokens, term_id

    cfg = config(empty_db)
    migrate.upgrade(cfg, "0031")
    texts = {"a": "a: we adopted two puppies", "b": "b: 用户养了一只猫", "c": "c: 42"}
    with psycopg.connect(empty_db, autocommit=True) as conn:
        for key, text in texts.items():
            terms = sorted({term_id(t) for t in keyword_tokens(text)})
            keywords = "{" + ",".join(f"{t + 1}:0.5" for t in terms) + "}/268435456"
            conn.execute(
                "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type,"
                " embedding, keywords, keyword_terms, confidence) VALUES (gen_random_uuid(),"
                " 'n', %s, %s, 'fact', %s::halfvec, %s::sparsevec, %s, 0.5)",
                (
                    key,
                    text.split(": ", 1)[1],
                    "[" + ",".join(["0.05"] * 384) + "]",
                    keywords,
                    terms,
                ),
            )
        conn.execute(
            "INSERT INTO memory_access (namespace, memory_id, specificity, specificity_of,"
            " specificity_at, specificity_n) SELECT namespace, id, 0.5, updated_at, now(), 3"
            " FROM long_term_memory"
        )
    before = {k: sorted({term_id(t) for t in keyword_tokens(v)}) for k, v in texts.items()}

    def state() -> tuple[dict[str, list[int]], dict[int, int], int, int]:
        with psycopg.connect(empty_db) as conn:
            rows = dict(conn.execute("SELECT mem_key, keyword_terms FROM long_term_memory"))
            df = dict(
                conn.execute(
                    "SELECT term, sum(df)::int FROM keyword_stats WHERE namespace = 'n' "
                    "AND term > 0 GROUP BY term HAVING sum(df) <> 0"
                ).fetchall()
            )
            history = conn.execute("SELECT count(*) FROM memory_history").fetchone()
            kept = conn.execute(
                "SELECT count(*) FROM memory_access WHERE specificity IS NOT NULL"
            ).fetchone()
        assert history is not None and kept is not None
        return rows, df, int(history[0]), int(kept[0])

    _, _, created, _ = state()
    migrate.upgrade(cfg)
    rows, df, history, kept = state()
    assert rows == {k: document_vector(v)[1] for k, v in texts.items()}
    assert term_id("adopt") in rows["a"] and term_id("adopted") not in rows["a"]
    assert rows["b"] == before["b"] and rows["c"] == before["c"]  # no English word: as before
    assert df == {t: 1 for terms in rows.values() for t in terms}
    assert history == created and kept == 0
    assert sorted(document_terms(texts["a"])) == rows["a"]

    migrate.downgrade(cfg, "0031")
    rows, df, history, _ = state()
    assert rows == before
    assert df == {t: 1 for terms in rows.values() for t in terms}
    assert history == created


def test_contradiction_entries_and_review_moves_down_and_up(empty_db: str) -> None:
    """At 0034 a live memory sent to review is a `quarantined` entry and `contradiction` a
    change name; the downgrade turns the contradiction entries into `updated` (reasons
    kept) and restores the trigger that called such a move `updated`."""
    cfg = config(empty_db)
    migrate.upgrade(cfg)
    insert = (
        "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type,"
        " embedding, keywords, keyword_terms, confidence) VALUES (%s, 'n', %s, 'v', 'fact',"
        " %s::halfvec, '{}/268435456'::sparsevec, '{}', 0.5)"
    )
    vector = "[" + ",".join(["0.05"] * 384) + "]"
    one, two = uuid.uuid4(), uuid.uuid4()

    def changes(memory_id: uuid.UUID) -> list[tuple[str, str | None]]:
        with psycopg.connect(empty_db) as conn:
            return conn.execute(
                "SELECT change, reason FROM memory_history WHERE memory_id = %s ORDER BY id",
                (memory_id,),
            ).fetchall()

    with psycopg.connect(empty_db, autocommit=True) as conn:
        conn.execute(insert, (one, "a", vector))
        conn.execute(
            "INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type,"
            " reason) VALUES (%s, 'n', 'a', 'contradiction', 'fact', 'contradicted by …')",
            (one,),
        )
        conn.execute("UPDATE long_term_memory SET status = 'quarantined' WHERE id = %s", (one,))
    assert [c for c, _ in changes(one)] == ["created", "contradiction", "quarantined"]

    migrate.downgrade(cfg, "0033")
    assert changes(one)[1] == ("updated", "contradicted by …")
    with psycopg.connect(empty_db, autocommit=True) as conn:
        conn.execute(insert, (two, "b", vector))
        conn.execute("UPDATE long_term_memory SET status = 'quarantined' WHERE id = %s", (two,))
    assert [c for c, _ in changes(two)] == ["created", "updated"]
    migrate.upgrade(cfg)


def test_memory_facets_down_to_memory_confidence_and_up(empty_db: str) -> None:
    """0038 replaces memory_confidence with memory_facets. Down, the confidence copy and its
    triggers are back and follow new writes, and the importance buckets' counts are gone;
    up again, the facets and both buckets' counts are made anew from the memories."""
    cfg = config(empty_db)
    migrate.upgrade(cfg)
    insert = (
        "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type,"
        " embedding, keywords, keyword_terms, confidence, importance) VALUES (%s, 'n', %s,"
        " 'v', 'fact', %s::halfvec, '{}/268435456'::sparsevec, '{}', %s, %s)"
    )
    vector = "[" + ",".join(["0.05"] * 384) + "]"
    with psycopg.connect(empty_db, autocommit=True) as conn:
        for i, (confidence, importance) in enumerate([(0.5, 0.5), (0.95, 0.1), (1.0, 0.93)]):
            conn.execute(insert, (uuid.uuid4(), f"k{i}", vector, confidence, importance))
    assert copies_drift(empty_db, "n") == [] and label_drift(empty_db, "n") == []

    migrate.downgrade(cfg, "0037")
    confidence_copy = (
        "SELECT namespace, id, live, confidence FROM long_term_memory"
        " EXCEPT ALL SELECT namespace, id, live, confidence FROM memory_confidence"
    )
    with psycopg.connect(empty_db, autocommit=True) as conn:
        assert conn.execute(confidence_copy).fetchall() == []
        assert conn.execute(
            "SELECT count(*) FROM keyword_stats WHERE term < -1073741845"
        ).fetchone() == (0,)
        conn.execute(insert, (uuid.uuid4(), "k3", vector, 0.9, 0.2))  # the old triggers
        assert conn.execute(confidence_copy).fetchall() == []
        assert conn.execute(
            "SELECT sum(df) FROM keyword_stats WHERE term = hindsight_confidence_term(0.9)"
        ).fetchone() == (1,)
    assert "memory_facets" not in tables(empty_db)

    migrate.upgrade(cfg)
    assert "memory_confidence" not in tables(empty_db)
    assert copies_drift(empty_db, "n") == [] and label_drift(empty_db, "n") == []


def test_the_facets_upgrade_lets_a_reader_that_then_writes_finish(empty_db: str) -> None:
    """0038 holds writes to memories out while it copies them. A transaction that read
    memories before it and writes while it runs (as observe does) waits for it, then
    commits, and the upgrade completes: 0038 never asks for a stronger lock than the one
    it holds (dropping the old triggers there would have, and deadlocked), and 0039 drops
    them in a transaction of its own."""
    cfg = config(empty_db)
    migrate.upgrade(cfg, "0037")
    insert = (
        "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type,"
        " embedding, keywords, keyword_terms, confidence, importance) VALUES (%s, 'n', %s,"
        " 'v', 'fact', %s::halfvec, '{}/268435456'::sparsevec, '{}', 0.5, 0.5)"
    )
    vector = "[" + ",".join(["0.05"] * 384) + "]"
    with psycopg.connect(empty_db, autocommit=True) as conn:
        conn.execute(insert, (uuid.uuid4(), "before", vector))
    failures: list[BaseException] = []

    def upgrade() -> None:
        try:
            migrate.upgrade(cfg)
        except BaseException as e:  # reported below, in the test's thread
            failures.append(e)

    with (
        psycopg.connect(empty_db) as reader,
        psycopg.connect(empty_db, autocommit=True) as watcher,
    ):
        reader.execute("SELECT count(*) FROM long_term_memory").fetchone()
        migration = threading.Thread(target=upgrade)
        migration.start()

        def upgrade_reached_the_memories() -> bool:
            assert migration.is_alive() or not failures, failures
            row = watcher.execute(
                "SELECT EXISTS (SELECT FROM pg_locks WHERE pid <> %s"
                " AND database = (SELECT oid FROM pg_database"
                "                 WHERE datname = current_database())"
                " AND relation = 'long_term_memory'::regclass"
                " AND mode IN ('ShareRowExclusiveLock', 'AccessExclusiveLock'))",
                (reader.info.backend_pid,),
            ).fetchone()
            return bool(row and row[0])

        wait_until(upgrade_reached_the_memories, "the upgrade locks the memories")
        reader.execute(insert, (uuid.uuid4(), "during", vector))  # waits for 0038
        reader.commit()
        migration.join(60)
    assert not migration.is_alive() and failures == []
    assert migrate.current_revision(empty_db) == migrate.head_revision()
    assert copies_drift(empty_db, "n") == [] and label_drift(empty_db, "n") == []


def test_the_keyword_graph_down_and_up(empty_db: str) -> None:
    """0040 drops the sparse graph over keyword vectors; down, it is built again as 0033
    left it (recall before 0040 reads it), and up it is gone again."""
    cfg = config(empty_db)
    migrate.upgrade(cfg)

    def graph() -> str | None:
        with psycopg.connect(empty_db) as conn:
            row = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_long_term_memory_keywords'"
            ).fetchone()
        return None if row is None else str(row[0])

    assert graph() is None
    migrate.downgrade(cfg, "0039")
    built = graph()
    assert built is not None and "hnsw (keywords sparsevec_ip_ops)" in built
    assert "WITH (m='8', ef_construction='16')" in built
    migrate.upgrade(cfg)
    assert graph() is None
