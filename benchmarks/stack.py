"""The system under test, started the way production runs it: embedded PostgreSQL and
Redis with AOF, and the service in its own process (uvicorn), reached over loopback HTTP."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from hindsight.db import migrate
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.runtime.embedded_redis import RedisProcess

API_KEY = "bench-key-0123456789abcdef"


@dataclass
class Stack:
    url: str
    database_url: str
    redis_url: str
    pid: int

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=120
        )


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def stack(workers: int = 1, data_dir: Path | None = None, **env: str) -> Iterator[Stack]:
    with contextlib.ExitStack() as es:
        root = data_dir or Path(es.enter_context(tempfile.TemporaryDirectory(prefix="hsb-")))
        db = es.enter_context(embedded_postgres(root / "pg", owner=True))
        migrate.upgrade(
            migrate.alembic_config(
                db, embedding_name=BuiltinEmbedder.VERSION, embedding_dimensions=384
            )
        )
        redis = RedisProcess(root / "redis")
        redis_url = redis.start()
        es.callback(redis.stop)
        port = _free_port()
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
        full_env.update(
            {
                "HINDSIGHT_DATABASE_URL": db,
                "HINDSIGHT_REDIS_URL": redis_url,
                "HINDSIGHT_API_KEY": API_KEY,
                **env,
            }
        )
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
            env=full_env,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
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
            yield Stack(url=url, database_url=db, redis_url=redis_url, pid=proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
