"""What a newcomer tripped over in their first hour (issue 35), each as they met it: the
CLI run as a process, the service over HTTP."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import httpx

from tests.support.cli import hindsight
from tests.support.servers import free_port, wait_ready
from tests.test_serve import start, stop


def test_serve_on_a_busy_port_says_so_before_creating_anything(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = hindsight("serve", "--port", str(port), data_dir=str(data_dir))
    assert out.returncode == 1
    assert f"127.0.0.1:{port}" in out.stderr and "--port" in out.stderr, out.stderr
    assert "HINDSIGHT_PORT=" in out.stderr and "Errno" not in out.stderr, out.stderr
    # no stores initialised, no admin key printed or saved
    assert "Created an admin API key" not in out.stderr
    assert not data_dir.exists() or not any(data_dir.iterdir())


def test_erase_while_serving_refuses_before_asking_and_names_the_rest_call(
    tmp_path: Path,
) -> None:
    data_dir, port = tmp_path / "data", free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(data_dir, port)
    try:
        wait_ready(url, timeout=180, path="/readyz")
        key = (data_dir / "admin-api-key").read_text().strip()
        h = {"Authorization": f"Bearer {key}"}
        r = httpx.post(
            f"{url}/v1/namespaces/alice/memories",
            headers=h,
            json={"key": "user.city", "value": "Oslo"},
        )
        assert r.status_code == 201, r.text

        out = hindsight("erase", "--namespace", "alice", data_dir=str(data_dir), port=str(port))
        assert out.returncode == 1
        assert "Erase everything" not in out.stdout + out.stderr  # refused before asking
        assert "is running on" in out.stderr, out.stderr
        command = out.stderr.split("instead: ", 1)[1].split(" (an admin key)", 1)[0]
        assert "DELETE" in command and "/v1/namespaces/alice" in command

        # the command it names, pasted into a shell, erases the namespace
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and '"namespace":"alice"' in done.stdout, done.stdout
        left = httpx.get(f"{url}/v1/namespaces/alice/memories", headers=h).json()
        assert left["memories"] == []
    finally:
        stop(proc)
