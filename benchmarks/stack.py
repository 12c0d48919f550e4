"""The system under test, started the way production runs it: embedded PostgreSQL (tuned as
`hindsight serve` tunes it) and Redis with AOF, and the service in its own process
(uvicorn), reached over loopback HTTP."""

from __future__ import annotations

import contextlib
import http.client
import json
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

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
class Reply:
    status_code: int
    content: bytes
    headers: dict[str, str]

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self) -> Any:
        return json.loads(self.content)


class LightClient:
    """Keep-alive HTTP/1.1 over the standard library, for timing the service: httpx costs
    0.4-1 ms a call of its own on this machine (a recall measured 6.6 ms through it, 5.6
    through this), which is the client's time, not the service's."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        self._conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        self._headers = {"Authorization": f"Bearer {API_KEY}"}

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self._conn.request(method, path, body=data, headers=headers)
        response = self._conn.getresponse()
        content = response.read()
        return Reply(response.status, content, {k.lower(): v for k, v in response.getheaders()})

    def get(self, path: str, params: dict[str, Any] | None = None) -> Reply:
        return self.request("GET", f"{path}?{urlencode(params)}" if params else path)

    def post(self, path: str, json: Any = None) -> Reply:
        return self.request("POST", path, json)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LightClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def server_timing(header: str | None) -> dict[str, float]:
    """`db;dur=2.41, app;dur=3.87` -> {"db": 2.41, "app": 3.87} (ms)."""
    out: dict[str, float] = {}
    for part in (header or "").split(","):
        name, _, dur = part.strip().partition(";dur=")
        if name and dur:
            out[name] = float(dur)
    return out


@dataclass
class Service:
    url: str
    process: subprocess.Popen[bytes]

    def client(self, timeout: float = 120) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, timeout=timeout, headers={"Authorization": f"Bearer {API_KEY}"}
        )

    def light_client(self, timeout: float = 120) -> LightClient:
        return LightClient(self.url, timeout)

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
