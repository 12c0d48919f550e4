"""Alembic, driven from the package: the same migrations as `alembic` at the repo root."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from hindsight.db.urls import sqlalchemy_url
from hindsight.errors import ConfigurationError

_PACKAGE = Path(__file__).resolve().parent.parent


def migrations_dir() -> Path:
    """`hindsight/_migrations` in an installed wheel, `migrations/` in a source checkout."""
    for candidate in (_PACKAGE / "_migrations", _PACKAGE.parent.parent / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise ConfigurationError("the migrations are missing from this installation; reinstall")


def alembic_config(
    url: str, *, embedding_name: str | None = None, embedding_dimensions: int | None = None
) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["database_url"] = url
    if embedding_name and embedding_dimensions:
        config.attributes["embedding_name"] = embedding_name
        config.attributes["embedding_dimensions"] = embedding_dimensions
    return config


def _with_connection(config: Config, action: str, revision: str | None = None) -> None:
    engine = create_engine(
        sqlalchemy_url(config.attributes["database_url"]), poolclass=pool.NullPool
    )
    try:
        with engine.connect() as connection:
            config.attributes["connection"] = connection
            if action == "upgrade":
                command.upgrade(config, revision or "head")
            elif action == "downgrade":
                command.downgrade(config, revision or "base")
            elif action == "check":
                command.check(config)
    finally:
        config.attributes.pop("connection", None)
        engine.dispose()


def upgrade(config: Config, revision: str = "head") -> None:
    _with_connection(config, "upgrade", revision)
    # on a Citus cluster already distributed, a table the upgrade created is placed too
    from hindsight.db import citus

    url = config.attributes["database_url"]
    if citus.status(url)[0].distributed:
        citus.distribute(url)


def downgrade(config: Config, revision: str) -> None:
    _with_connection(config, "downgrade", revision)


def check(config: Config) -> None:
    """Raise if the models and the migrated schema disagree (`alembic check`)."""
    _with_connection(config, "check")


@lru_cache(maxsize=1)
def head_revision() -> str:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


def current_revision(url: str) -> str | None:
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
