"""Real servers for tests (and the benchmarks): a database of its own on a PostgreSQL server,
the app under uvicorn in a thread or a subprocess."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import uvicorn

from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.server import create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def database_url(server_url: str, name: str) -> str:
    return urlunsplit(urlsplit(server_url)._replace(path="/" + name))


def create_database(
    server_url: str, name: str, migrate_it: bool = True, template: str | None = None
) -> str:
    """A new database on the server, migrated unless asked not to; its URL. With a
    `template` (see `migrated_template`) it is a copy of that instead: copying a few MB
    beats running every revision."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        if template:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        else:
            conn.execute(f"CREATE DATABASE {name}")
    url = database_url(server_url, name)
    if migrate_it and not template:
        migrate.upgrade(
            migrate.alembic_config(
                url, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
            )
        )
    return url


def migrated_template(server_url: str) -> str:
    """A new database on the server, migrated, for `create_database` to copy; its name.

    PostgreSQL refuses to copy a database that has connections, so none are allowed to it
    once it is made (ALLOW_CONNECTIONS false); `drop_database` still drops it."""
    name = "hs_template_" + uuid.uuid4().hex[:12]
    create_database(server_url, name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
    return name


def drop_database(server_url: str, name: str) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def separate_database(
    server_url: str, migrate_it: bool = True, template: str | None = None
) -> Iterator[str]:
    """A database of its own on the server (migrated unless asked not to, or a copy of
    `template`), dropped afterwards. For servers whose background workers must not meet
    other tests' data."""
    name = "t_" + uuid.uuid4().hex[:12]
    try:
        yield create_database(server_url, name, migrate_it, template)
    finally:
        drop_database(server_url, name)


def wait_ready(url: str, timeout: float = 30.0, path: str = "/healthz") -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + path, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not come up: {last}")


class ThreadServer:
    """uvicorn serving `create_app(...)` on a loopback port, in a background thread."""

    def __init__(self, settings: Settings, database_url: str, redis_url: str | None) -> None:
        # bound here and handed to uvicorn: no other process (an xdist worker, a client's
        # ephemeral port) can take the port between choosing it and listening on it
        self.socket = socket.socket()
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = int(self.socket.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(settings, database_url=database_url, redis_url=redis_url)
        self.app = app
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("test server failed to start; see the log above")
            if time.monotonic() > deadline:
                raise TimeoutError("test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.socket.close()

    @property
    def core(self) -> Any:
        return self.app.state.hindsight


def spawn_server(
    env: dict[str, str], *, workers: int = 1, ready_path: str = "/healthz", timeout: float = 90
) -> tuple[subprocess.Popen[bytes], str]:
    """Start the app in its own process (`uvicorn --factory`), as a replica runs, with only
    the HINDSIGHT_* settings given; return it with its URL once `ready_path` answers. (A
    deadline, not a wait: on a 2-core machine busy with other work, the imports alone of
    a new process have taken over 15 s, and 30 s was once not enough for a start.)"""
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    full_env.update(env)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "hindsight.server:app_from_env",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
            "--workers",
            str(workers),
        ],
        env=full_env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, timeout, ready_path)
    except BaseException:
        proc.kill()
        raise
    return proc, url


@contextlib.contextmanager
def subprocess_server(env: dict[str, str], *, workers: int = 1) -> Iterator[str]:
    """The app in its own process for the duration of the block."""
    proc, url = spawn_server(env, workers=workers)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
