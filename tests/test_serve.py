"""`hindsight serve` as a newcomer runs it: embedded stores, a stop, a restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import free_port, wait_ready


def start(data_dir: Path, port: int, **env: str) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    full.update({"HINDSIGHT_DATA_DIR": str(data_dir), **env})
    return subprocess.Popen(
        [sys.executable, "-m", "hindsight.cli.main", "serve", "--port", str(port)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[int, str]:
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError("serve did not stop within 60s of SIGTERM:\n" + err) from None
    return proc.returncode, err


def servers_using(data_dir: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if str(data_dir) in cmd and ("postgres" in cmd or "redis-server" in cmd):
            found.append(p)
    return found


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_serve_restart_keeps_everything_and_stops_cleanly(data_dir: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(data_dir, port)
    try:
        wait_ready(url, timeout=120, path="/readyz")
        key = (data_dir / "admin-api-key").read_text().strip()
        assert oct((data_dir / "admin-api-key").stat().st_mode & 0o777) == "0o600"
        h = {"Authorization": f"Bearer {key}"}
        r = httpx.post(
            f"{url}/v1/namespaces/me/memories:batch",
            headers=h,
            json={"memories": [{"key": "user.name", "value": "Ada"}]},
        )
        assert r.status_code == 201, r.text
        memory_id = r.json()["results"][0]["id"]
        for text in ("plan", "act"):
            assert (
                httpx.post(
                    f"{url}/v1/namespaces/me/sessions/s/steps", headers=h, json={"content": text}
                ).status_code
                == 201
            )
        hits = httpx.post(
            f"{url}/v1/namespaces/me/recall", headers=h, json={"query": "user name"}
        ).json()["results"]
        assert hits[0]["id"] == memory_id
    finally:
        code, err = stop(proc)
    assert code == 0, err
    assert key in err  # the new key was shown once, on stderr
    assert servers_using(data_dir) == [], "embedded servers outlived `hindsight serve`"

    proc = start(data_dir, port)
    try:
        wait_ready(url, timeout=120, path="/readyz")
        m = httpx.get(f"{url}/v1/namespaces/me/memories/{memory_id}", headers=h)
        assert m.status_code == 200 and m.json()["value"] == "Ada"
        assert m.json()["access_count"] == 1  # the recall before the restart was counted
        steps = httpx.get(f"{url}/v1/namespaces/me/sessions/s/steps", headers=h).json()
        assert [s["content"] for s in steps["steps"]] == ["plan", "act"]
        second = start(data_dir, free_port())
        _, second_err = second.communicate(timeout=60)
        assert second.returncode != 0 and "another `hindsight serve`" in second_err
    finally:
        code, err = stop(proc, signal.SIGINT)  # Ctrl-C
    assert code == 0, err
    assert "Created an admin API key" not in err
    assert servers_using(data_dir) == []


def test_serve_refuses_vectors_from_another_model(data_dir: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(data_dir, port, HINDSIGHT_API_KEY="k" * 20)
    try:
        wait_ready(url, timeout=120, path="/readyz")
        r = httpx.post(
            f"{url}/v1/namespaces/me/memories",
            json={"key": "a", "value": "b"},
            headers={"Authorization": "Bearer " + "k" * 20},
        )
        assert r.status_code == 201, r.text
    finally:
        assert stop(proc)[0] == 0

    with FakeOpenAI(dimensions=48) as fake:
        proc = start(
            data_dir,
            port,
            HINDSIGHT_API_KEY="k" * 20,
            HINDSIGHT_EMBEDDING_BASE_URL=fake.url,
            HINDSIGHT_EMBEDDING_MODEL="fake-embed",
        )
        _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert "384-dimension embeddings from 'builtin-hash-v2'" in err
    assert "hindsight reembed" in err
    assert servers_using(data_dir) == []


def test_an_empty_store_adopts_a_new_embedding_model(data_dir: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with FakeOpenAI(dimensions=48) as fake:
        proc = start(
            data_dir,
            port,
            HINDSIGHT_API_KEY="k" * 20,
            HINDSIGHT_EMBEDDING_BASE_URL=fake.url,
            HINDSIGHT_EMBEDDING_MODEL="fake-embed",
        )
        try:
            wait_ready(url, timeout=120, path="/readyz")
            h = {"Authorization": "Bearer " + "k" * 20}
            r = httpx.post(
                f"{url}/v1/namespaces/me/memories",
                headers=h,
                json={"key": "pet", "value": "a cat called Tom"},
            )
            assert r.status_code == 201, r.text
            hits = httpx.post(
                f"{url}/v1/namespaces/me/recall", headers=h, json={"query": "cat"}
            ).json()["results"]
            assert hits[0]["key"] == "pet"
            assert all(len(r["body"]["input"]) >= 1 for r in fake.requests)
        finally:
            assert stop(proc)[0] == 0


def test_bad_configuration_fails_fast_with_the_variable_named(data_dir: Path) -> None:
    proc = start(
        data_dir, free_port(), HINDSIGHT_PORT="not-a-port", HINDSIGHT_INITIAL_CONFIDENCE="2"
    )
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "HINDSIGHT_INITIAL_CONFIDENCE" in err
