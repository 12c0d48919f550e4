"""`hindsight reembed`: every memory re-embedded with a new model, even of another width."""

from __future__ import annotations

import psycopg

from hindsight.db import migrate
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer


def test_reembed_to_another_model_and_width(fresh_db: str, redis_url: str) -> None:
    with ThreadServer(make_settings(), fresh_db, redis_url) as srv:
        api = Api.at(srv.url, "re")
        api.observe(
            *(
                {"key": f"topic.{i}", "value": f"note {i} about gardening and tomatoes"}
                for i in range(40)
            )
        )
        api.observe({"key": "user.pet", "value": "a grey cat named Miso"})

    with FakeOpenAI(dimensions=48) as fake:
        out = hindsight(
            "reembed",
            "--yes",
            "--batch-size",
            "16",
            database_url=fresh_db,
            embedding_base_url=fake.url,
            embedding_model="fake-embed",
        )
        assert out.returncode == 0, out.stderr
        assert (
            "41 memories: builtin-hash-v2 (384 dimensions) -> openai:fake-embed (48" in out.stdout
        )
        assert "re-embedded 41 memories" in out.stdout

        with psycopg.connect(fresh_db) as conn:
            column = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                "'long_term_memory'::regclass AND attname = 'embedding'"
            ).fetchone()
            widths = conn.execute(
                "SELECT DISTINCT vector_dims(embedding::vector) FROM long_term_memory"
            ).fetchall()
            meta = dict(conn.execute("SELECT name, value FROM hindsight_meta").fetchall())
            index = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_long_term_memory_embedding'"
            ).fetchone()
        assert column == ("halfvec(48)",) and widths == [(48,)]
        assert (
            meta["embedding_model"] == "openai:fake-embed" and meta["embedding_dimensions"] == "48"
        )
        assert index is not None and "halfvec_cosine_ops" in index[0]
        migrate.check(migrate.alembic_config(fresh_db))

        settings = make_settings(embedding_base_url=fake.url, embedding_model="fake-embed")
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, "re")
            hits = api.recall("grey cat", k=3)["results"]
            assert hits[0]["key"] == "user.pet"
            (more,) = api.observe({"key": "user.car", "value": "an old Volvo"})
            assert more["outcome"] == "created"


def test_reembed_refuses_a_schema_that_is_behind(empty_db: str) -> None:
    out = hindsight("reembed", "--yes", database_url=empty_db)
    assert out.returncode != 0 and "hindsight db upgrade" in out.stderr
