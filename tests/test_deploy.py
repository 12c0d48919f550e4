"""Deployment files. No Docker engine runs here, so: the compose file's shape, and the
exact command the image runs, against external PostgreSQL and Redis as compose wires them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import yaml

from hindsight.config import Settings
from tests.support.servers import free_port, wait_ready

ROOT = Path(__file__).resolve().parent.parent


def test_compose_waits_for_healthy_stores_with_aof_on_volumes() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    app = services["hindsight"]
    assert app["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    assert "pgvector" in services["postgres"]["image"]
    redis_cmd = services["redis"]["command"]
    assert redis_cmd[redis_cmd.index("--appendonly") + 1] == "yes"
    assert redis_cmd[redis_cmd.index("--appendfsync") + 1] == "everysec"
    for name in ("postgres", "redis", "hindsight"):
        assert "healthcheck" in services[name], name
    assert any(v.endswith(":/data") for v in services["redis"]["volumes"])
    assert any("/var/lib/postgresql/data" in v for v in services["postgres"]["volumes"])
    known = {f"HINDSIGHT_{name.upper()}" for name in Settings.model_fields}
    assert set(app["environment"]) <= known, set(app["environment"]) - known


def test_dockerfile_installs_the_package_and_serves() -> None:
    text = (ROOT / "Dockerfile").read_text()
    for path in ("pyproject.toml", "src", "migrations", "sql", "alembic.ini"):
        assert path in text and (ROOT / path).exists()
    assert 'CMD ["hindsight", "serve"]' in text
    assert "HINDSIGHT_HOST=0.0.0.0" in text and "USER hindsight" in text


def test_serve_with_external_stores_migrates_a_fresh_database(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    name = "compose_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    db = urlunsplit(urlsplit(pg_url)._replace(path="/" + name))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    env.update(
        {
            "HINDSIGHT_DATABASE_URL": db,
            "HINDSIGHT_REDIS_URL": redis_url,
            "HINDSIGHT_API_KEY": "compose-key-123456",
            "HINDSIGHT_PORT": str(port),
            "HINDSIGHT_WORKERS": "2",
            "HINDSIGHT_EMBEDDING_MODEL": "",
            "HINDSIGHT_LLM_MODEL": "",
            "HINDSIGHT_DATA_DIR": str(tmp_path / "unused"),
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hindsight.cli.main", "serve"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, timeout=120, path="/readyz")
        h = {"Authorization": "Bearer compose-key-123456"}
        r = httpx.post(
            f"{url}/v1/namespaces/n/memories", headers=h, json={"key": "k", "value": "v"}
        )
        assert r.status_code == 201, r.text
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
    assert proc.returncode == 0, err
    assert not (tmp_path / "unused").exists(), "external stores must not touch the data dir"
