"""The system under test, started the way production runs it: embedded PostgreSQL (tuned as
`hindsight serve` tunes it) and Redis with AOF, and the service in its own process
(uvicorn), reached over loopback HTTP."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.support.servers import separate_database, spawn_server

from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import RedisProcess

API_KEY = "bench-key-0123456789abcdef"


@dataclass
class Stores:
    server_url: str  # the PostgreSQL server (its default database)
    redis_url: str
    root: Path

    def database(self, migrate_it: bool = True) -> contextlib.AbstractContextManager[str]:
        """A fresh database on the server, dropped afterwards."""
        return separate_database(self.server_url, migrate_it)


@contextlib.contextmanager
def stores(data_dir: Path | None = None) -> Iterator[Stores]:
    with contextlib.ExitStack() as es:
        root = data_dir or Path(es.enter_context(tempfile.TemporaryDirectory(prefix="hsb-")))
        server = es.enter_context(embedded_postgres(root / "pg", owner=True))
        redis = RedisProcess(root / "redis")
        redis_url = redis.start()
        es.callback(redis.stop)
        yield Stores(server, redis_url, root)


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
    env = {
        "HINDSIGHT_DATABASE_URL": database_url,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": API_KEY,
        "HINDSIGHT_LOG_LEVEL": "warning",
    }
    env.update({f"HINDSIGHT_{k.upper()}": v for k, v in settings.items()})
    proc, url = spawn_server(env, workers=workers, ready_path="/readyz", timeout=120)
    try:
        yield Service(url, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
