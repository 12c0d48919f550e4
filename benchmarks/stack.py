"""The system under test, started the way production runs it: embedded PostgreSQL (tuned as
`hindsight serve` tunes it) and Redis with AOF, and the service in its own process
(uvicorn), reached over loopback HTTP."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import RedisProcess

API_KEY = "bench-key-0123456789abcdef"


@dataclass
class Stores:
    server_url: str  # the PostgreSQL server (its default database)
    redis_url: str
    root: Path

    @contextlib.contextmanager
    def database(self, migrate_it: bool = True) -> Iterator[str]:
        """A fresh database on the server, dropped afterwards."""
        name = "bench_" + uuid.uuid4().hex[:8]
        with psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = urlunsplit(urlsplit(self.server_url)._replace(path="/" + name))
        try:
            if migrate_it:
                migrate.upgrade(
                    migrate.alembic_config(
                        url, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
                    )
                )
            yield url
        finally:
            with psycopg.connect(self.server_url, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@contextlib.contextmanager
def stores(data_dir: Path | None = None) -> Iterator[Stores]:
    with contextlib.ExitStack() as es:
        root = data_dir or Path(es.enter_context(tempfile.TemporaryDirectory(prefix="hsb-")))
        server = es.enter_context(embedded_postgres(root / "pg", owner=True))
        redis = RedisProcess(root / "redis")
        redis_url = redis.start()
        es.callback(redis.stop)
        yield Stores(server, redis_url, root)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Service:
    url: str
    process: subprocess.Popen[bytes]

    def client(self, timeout: float = 120) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, timeout=timeout, headers={"Authorization": f"Bearer {API_KEY}"}
        )

    def peak_rss_mb(self) -> float:
        """Peak resident memory (VmHWM) of the service and its worker processes."""
        import psutil

        total = 0
        procs = [psutil.Process(self.process.pid)]
        procs += procs[0].children(recursive=True)
        for proc in procs:
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        return total / 1024


@contextlib.contextmanager
def service(
    database_url: str, redis_url: str, *, workers: int = 1, **settings: str
) -> Iterator[Service]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    env.update(
        {
            "HINDSIGHT_DATABASE_URL": database_url,
            "HINDSIGHT_REDIS_URL": redis_url,
            "HINDSIGHT_API_KEY": API_KEY,
            "HINDSIGHT_LOG_LEVEL": "warning",
        }
    )
    env.update({f"HINDSIGHT_{k.upper()}": v for k, v in settings.items()})
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "hindsight.api.asgi:app_from_env",
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
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("service did not start")
        time.sleep(0.1)
    try:
        yield Service(url, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@contextlib.contextmanager
def stack(workers: int = 1, data_dir: Path | None = None, **settings: str) -> Iterator[Service]:
    """Stores, a fresh database and the service: for the quick HTTP benchmark."""
    with (
        stores(data_dir) as s,
        s.database() as db,
        service(db, s.redis_url, workers=workers, **settings) as svc,
    ):
        yield svc
