"""The TypeScript SDK (clients/typescript): its Node tests against a live service, its types
generated from the live OpenAPI schema, a call for every REST operation, and the example.

Needs Node 18+ and `npm ci` in clients/typescript (CI runs it); elsewhere these skip."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.conftest import ADMIN_KEY
from tests.support.servers import ThreadServer

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "clients" / "typescript"
EXAMPLE = PACKAGE / "dist-examples" / "typescript_memory.mjs"

if shutil.which("node") is None or not (PACKAGE / "node_modules").is_dir():
    if os.environ.get("CI"):
        raise RuntimeError("CI must run `npm ci` in clients/typescript before the tests")
    pytest.skip(
        "run `npm ci` in clients/typescript to test the TypeScript SDK", allow_module_level=True
    )


def npm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", *args], cwd=PACKAGE, env={**os.environ, **(env or {})},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def built() -> None:
    """`npm run build`: the SDK, its tests and the examples, once for this module."""
    out = npm("run", "build")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_the_node_tests_pass_against_a_live_service(server: ThreadServer, built: None) -> None:
    out = subprocess.run(
        ["node", "--test", "dist/test/"], cwd=PACKAGE,
        env={**os.environ, "HINDSIGHT_URL": server.url, "HINDSIGHT_API_KEY": ADMIN_KEY},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    passed = int(re.search(r"^# pass (\d+)$", out.stdout, re.M).group(1))  # type: ignore[union-attr]
    assert re.search(r"^# fail 0$", out.stdout, re.M) and re.search(
        r"^# skipped 0$", out.stdout, re.M
    )
    assert passed >= 12, out.stdout[-2000:]


def test_the_generated_types_match_the_live_schema(server: ThreadServer, tmp_path: Path) -> None:
    """Regenerate: `npm run generate` (HINDSIGHT_OPENAPI=<url or file>) after an API change."""
    script = json.loads((PACKAGE / "package.json").read_text())["scripts"]["generate"]
    generated = tmp_path / "schema.ts"
    out = subprocess.run(
        script.replace("src/schema.ts", str(generated)), shell=True, cwd=PACKAGE,
        env={**os.environ, "HINDSIGHT_OPENAPI": f"{server.url}/openapi.json",
             "PATH": f"{PACKAGE / 'node_modules' / '.bin'}:{os.environ['PATH']}"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    committed = (PACKAGE / "src" / "schema.ts").read_text()
    assert generated.read_text() == committed, (
        "clients/typescript/src/schema.ts is out of date: run `npm run generate` there "
        "against a running server, then add the new calls to src/client.ts"
    )


def test_every_rest_operation_has_a_typed_call(server: ThreadServer) -> None:
    schema = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    operations = {
        (method.upper(), path)
        for path, ops in schema["paths"].items()
        if path.startswith("/v1/")
        for method in ops
    }
    source = (PACKAGE / "src" / "client.ts").read_text()
    covered = set(re.findall(r'call\(\s*"(GET|POST|PUT|PATCH|DELETE)",\s*"(/v1/[^"]+)"', source))
    assert operations - covered == set(), "no TypeScript call for these operations"


def test_the_typescript_example_runs(server: ThreadServer, ns: str, built: None) -> None:
    out = subprocess.run(
        ["node", str(EXAMPLE)],
        env={**os.environ, "HINDSIGHT_URL": server.url, "HINDSIGHT_API_KEY": ADMIN_KEY,
             "HINDSIGHT_NAMESPACE": ns},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "observed user.favorite_color: created (confidence 0.5)",
        "observed user.favorite_color: reinforced (confidence 0.6)",
        "recalled: blue (score components: similarity, keyword, confidence, access boost)",
        "steps of trip-planning: searched flights to Oslo | booked the 07:42",
    ]
