"""`hindsight serve --workers 2` as an operator runs it: metrics summed over both workers,
JSON log lines with the request id, route, key name and timing, and nothing secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_KEY
from tests.support.poll import wait_until
from tests.support.scrape import value
from tests.support.servers import free_port, separate_database, wait_ready

LIST = "/v1/namespaces/{namespace}/memories"
SECRET_VALUE = "the-vault-code-is-8812"


class Served:
    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log

    def lines(self) -> list[dict[str, Any]]:
        out = []
        for raw in self.log.read_text().splitlines():
            if raw.startswith("{"):
                out.append(json.loads(raw))
        return out


@pytest.fixture(scope="module")
def served(
    pg_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("ops")
    port = free_port()
    log = tmp / "serve.log"
    with separate_database(pg_url) as db, log.open("w") as err:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        env.update(
            HINDSIGHT_DATABASE_URL=db,
            HINDSIGHT_REDIS_URL=redis_url,
            HINDSIGHT_API_KEY=ADMIN_KEY,
            HINDSIGHT_DATA_DIR=str(tmp / "data"),
            HINDSIGHT_METRICS_PUBLIC="true",
            HINDSIGHT_MAINTENANCE_INTERVAL_SECONDS="0.3",
        )
        command = [sys.executable, "-m", "hindsight.cli.main", "serve", "--port", str(port)]
        proc = subprocess.Popen(
            [*command, "--workers", "2"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(url, timeout=240, path="/readyz")  # a busy machine: workers import slowly
            yield Served(url, log)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _admin(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_KEY}"})


def test_counts_from_both_workers_are_summed(served: Served, ns: str) -> None:
    with _admin(served.url) as c:
        r = c.post(
            f"/v1/namespaces/{ns}/memories:batch",
            json={"memories": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}]},
        )
        assert r.status_code == 201, r.text
    sent: list[str] = []

    def served_by_both() -> bool:
        for _ in range(10):
            rid = f"spread-{ns}-{len(sent)}"
            # a new connection each time, so either worker may accept it
            r = httpx.get(
                f"{served.url}/v1/namespaces/{ns}/memories",
                params={"limit": 1},
                headers={"Authorization": f"Bearer {ADMIN_KEY}", "X-Request-ID": rid},
            )
            assert r.status_code == 200
            sent.append(rid)
        ours = set(sent)
        pids = {line["pid"] for line in served.lines() if line.get("request_id") in ours}
        return len(pids) >= 2

    wait_until(served_by_both, "both workers to serve a request", 60, interval=0)

    for _ in range(6):  # scrapes land on either worker; each sees the sum
        text = httpx.get(f"{served.url}/metrics").text  # HINDSIGHT_METRICS_PUBLIC: no key
        count = value(
            text,
            "hindsight_http_request_duration_seconds_count",
            method="GET",
            route=LIST,
            status="200",
        )
        assert count == len(sent)

    # the maintenance pass of one worker publishes the namespace's size
    wait_until(
        lambda: value(
            httpx.get(f"{served.url}/metrics").text,
            "hindsight_memories",
            namespace=ns,
            status="active",
        ),
        "hindsight_memories to show the namespace",
        30,
        accept=lambda count: count == 2,
        interval=0.2,
    )


def test_log_lines_carry_the_request_id_and_never_secrets(served: Served, ns: str) -> None:
    with _admin(served.url) as c:
        r = c.post(
            f"/v1/namespaces/{ns}/memories:batch",
            headers={"X-Request-ID": "trace-7f3a"},
            json={"memories": [{"key": "vault", "value": SECRET_VALUE}]},
        )
        assert r.status_code == 201
        assert r.headers["x-request-id"] == "trace-7f3a"
        bad = c.get(f"/v1/namespaces/{ns}/memories", headers={"X-Request-ID": "no spaces!"})
        generated = bad.headers["x-request-id"]
        assert generated != "no spaces!" and len(generated) == 32
        none = c.get("/v1/whoami")
        assert len(none.headers["x-request-id"]) == 32
    wrong = httpx.get(
        f"{served.url}/v1/namespaces/{ns}/memories", headers={"Authorization": "Bearer hs_wrong"}
    )
    assert wrong.status_code == 401

    def line_for(rid: str) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for line in served.lines():
                if line.get("request_id") == rid and line.get("logger") == "hindsight.access":
                    return line
            return None

        line = wait_until(found, f"an access log line for {rid}", 10, interval=0.05)
        assert line is not None
        return line

    line = line_for("trace-7f3a")
    assert line["route"] == "/v1/namespaces/{namespace}/memories:batch"
    assert line["method"] == "POST" and line["status"] == 201
    assert line["namespace"] == ns and line["key_name"] == "bootstrap-admin"
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] > 0
    assert line["level"] == "info" and "ts" in line
    assert line_for(generated)["status"] == 200
    refused = line_for(wrong.headers["x-request-id"])
    assert refused["status"] == 401 and "key_name" not in refused

    text = served.log.read_text()
    for secret in (ADMIN_KEY, SECRET_VALUE, "hs_wrong"):
        assert secret not in text
    # every line is JSON (stderr is not a terminal)
    for raw in text.splitlines():
        json.loads(raw)
