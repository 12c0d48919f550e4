"""Alembic environment: runs migrations under an advisory lock, so replicas that start
together upgrade the schema once, one after another."""

from __future__ import annotations

from logging.config import fileConfig
from typing import Any

from alembic import context
from sqlalchemy import Connection, create_engine, pool, text

from hindsight.config import Settings
from hindsight.db.models import metadata
from hindsight.db.urls import sqlalchemy_url
from hindsight.embeddings.factory import embedder_name
from hindsight.runtime.stores import database_url

# Any fixed number; every Hindsight process that migrates takes the same lock.
MIGRATION_LOCK = 7_361_582_001


def _compare_type(
    context: Any, inspected: Any, metadata_column: Any, inspected_type: Any, metadata_type: Any
) -> bool | None:
    # The embedding width follows the embedding model and is checked at start-up against it;
    # `alembic check` should not report it as drift.
    if type(metadata_type).__name__ in {"HALFVEC", "VECTOR", "SPARSEVEC"}:
        return False
    return None


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        compare_type=_compare_type,
        transaction_per_migration=True,
    )
    connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
    connection.commit()
    try:
        with context.begin_transaction():
            context.run_migrations()
    finally:
        connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})
        connection.commit()


def _embedding_from_settings(attributes: dict[str, Any]) -> None:
    """A bare `alembic upgrade` was told no embedding model: take it from settings when they
    say its width (the built-in model's is known); else 0001 says what to set."""
    if attributes.get("embedding_name") and attributes.get("embedding_dimensions"):
        return
    settings = Settings()
    if settings.uses_builtin_embedder or settings.embedding_dimensions:
        attributes["embedding_name"] = embedder_name(settings)
        attributes["embedding_dimensions"] = settings.schema_embedding_dimensions


def run_migrations_online() -> None:
    if context.config.config_file_name is not None:  # run as `alembic` from the repo root
        fileConfig(context.config.config_file_name, disable_existing_loggers=False)
    _embedding_from_settings(context.config.attributes)
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    settings = Settings()
    with database_url(settings) as url:
        engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
        with engine.connect() as conn:
            _run(conn)
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
run_migrations_online()
