"""Resolve where PostgreSQL and Redis are, starting embedded servers for what is unset."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from hindsight.config import Settings
from hindsight.errors import ConfigurationError
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import embedded_redis


@dataclass(frozen=True)
class StoreUrls:
    database_url: str
    redis_url: str | None


@contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """One `hindsight serve` per data directory: its embedded servers have one owner."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "serve.lock"
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "another process"
            raise ConfigurationError(
                f"another `hindsight serve` (pid {owner}) is using {data_dir}; stop it or "
                "point HINDSIGHT_DATA_DIR elsewhere"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def serving_pid(data_dir: Path) -> str | None:
    """The pid of the `hindsight serve` that owns `data_dir`'s embedded servers, if one
    runs: a command that needs them to itself can say so before it asks or starts anything."""
    path = data_dir / "serve.lock"
    if not path.exists():
        return None
    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "?"
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


@contextmanager
def database_url(settings: Settings, *, owner: bool = False) -> Iterator[str]:
    if settings.database_url:
        yield settings.database_url
        return
    with embedded_postgres(settings.data_dir, owner=owner) as url:
        yield url


@contextmanager
def serving_stores(settings: Settings) -> Iterator[StoreUrls]:
    """URLs for both stores, embedded servers started (and later stopped) as needed."""
    with ExitStack() as stack:
        embedded = not settings.database_url or not settings.redis_url
        if embedded:
            stack.enter_context(data_dir_lock(settings.data_dir))
        db = stack.enter_context(database_url(settings, owner=True))
        redis_url = settings.redis_url or stack.enter_context(embedded_redis(settings.data_dir))
        yield StoreUrls(db, redis_url)
