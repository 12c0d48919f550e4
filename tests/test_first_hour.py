"""What a newcomer tripped over in their first hour (issue 35), each as they met it: the
CLI run as a process, the service over HTTP."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import httpx

from hindsight.services.doctor import server_version
from tests.conftest import Api, make_settings
from tests.support.cli import hindsight
from tests.support.servers import ThreadServer, free_port, wait_ready
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


# --- error messages that say what to fix ------------------------------------------------


def test_json_sent_without_its_content_type_is_named(client: httpx.Client, ns: str) -> None:
    r = client.post(f"/v1/namespaces/{ns}/memories", content=json.dumps({"key": "k", "value": "v"}))
    assert r.status_code == 422
    assert "Content-Type: application/json" in r.json()["error"]["message"], r.text


def test_a_batch_sent_as_a_bare_array_names_the_wrapper(client: httpx.Client, ns: str) -> None:
    r = client.post(f"/v1/namespaces/{ns}/memories:batch", json=[{"key": "k", "value": "v"}])
    assert r.status_code == 422
    assert '{"memories": [...]}' in r.json()["error"]["message"], r.text


def test_one_memory_sent_alone_is_not_described_as_a_batch(client: httpx.Client, ns: str) -> None:
    r = client.put(f"/v1/namespaces/{ns}/policy", json={"redaction": {"mode": "reject"}})
    assert r.status_code == 200, r.text
    secret = "sk-proj-" + "Zq7XwV3uT9sR1pO5nM2lK8jH4gF6dS0a"
    r = client.post(f"/v1/namespaces/{ns}/memories", json={"key": "k", "value": secret})
    assert r.status_code == 422, r.text
    message = r.json()["error"]["message"]
    assert message.startswith("value") and "memories[0]" not in message, message
    r = client.post(
        f"/v1/namespaces/{ns}/memories:batch", json={"memories": [{"key": "k", "value": secret}]}
    )
    assert r.json()["error"]["message"].startswith("memories[0].value"), r.text


def test_a_step_too_large_is_not_told_to_send_fewer_memories(
    migrated: str, redis_url: str, ns: str
) -> None:
    with ThreadServer(make_settings(max_body_bytes=2048), migrated, redis_url) as srv:
        api = Api.at(srv.url, ns)
        r = api.client.post(f"{api.base}/sessions/s/steps", json={"content": "x" * 4096})
        assert r.status_code == 413
        message = r.json()["error"]["message"]
        assert "memories" not in message and "shorter step" in message, message
        r = api.client.post(
            f"{api.base}/memories:batch", json={"memories": [{"key": "k", "value": "x" * 4096}]}
        )
        assert "fewer memories per batch" in r.json()["error"]["message"], r.text


def test_get_on_recall_says_it_is_post(client: httpx.Client, ns: str) -> None:
    r = client.get(f"/v1/namespaces/{ns}/recall")
    assert r.status_code == 405
    assert "POST" in r.json()["error"]["message"], r.text


def test_whoami_is_listed_once_in_the_api_docs(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()
    assert schema["paths"]["/v1/whoami"]["get"]["tags"] == ["auth"]
    assert all(
        len(op.get("tags", [])) <= 1 for path in schema["paths"].values() for op in path.values()
    )


def test_the_end_answer_carries_the_sessions_fields(api: Api) -> None:
    api.append("s", "a step")
    ended = api.client.post(f"{api.base}/sessions/s:end").json()
    read = api.client.get(f"{api.base}/sessions/s").json()
    for field in ("live_steps", "created_at", "updated_at", "step_count", "expires_at"):
        assert ended[field] is not None and ended[field] == read[field], field


# --- the CLI's output --------------------------------------------------------------------


def test_keys_list_prints_a_header(fresh_db: str) -> None:
    made = hindsight("keys", "create", "ci-reader", "--role", "reader", "--all-namespaces",
                     database_url=fresh_db)  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = hindsight("keys", "list", database_url=fresh_db).stdout.splitlines()
    assert lines[0].split("\t") == ["name", "prefix", "role", "namespaces", "state", "id"]
    assert lines[1].startswith("ci-reader\t")


def test_doctor_shows_the_postgresql_version_as_people_write_it(
    fresh_db: str, redis_url: str, tmp_path: Path
) -> None:
    assert (server_version(180004), server_version(160010), server_version(90624)) == (
        "18.4",
        "16.10",
        "9.6.24",
    )
    done = hindsight("doctor", database_url=fresh_db, redis_url=redis_url, data_dir=str(tmp_path))
    assert re.search(r"reachable \(PostgreSQL \d+\.\d+\)", done.stdout), done.stdout
