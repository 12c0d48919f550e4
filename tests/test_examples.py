"""The examples run as documented against a live server: the agent loop in examples/, and
the code the docs show a newcomer to paste."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ADMIN_KEY
from tests.support.servers import ThreadServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "agent_loop.py"


def test_agent_loop_learns_on_the_first_task_and_uses_it_on_the_second(
    server: ThreadServer, ns: str
) -> None:
    env = {
        **os.environ,
        "HINDSIGHT_URL": server.url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_NAMESPACE": ns,
    }
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.split("# commute to Oslo on Tuesday")
    assert "asked the user" in first and "consolidation succeeded: 1 memories observed" in first
    assert "from this task's steps" in first
    assert "known from long-term memory" in second and "asked the user" not in second


def mcp_client_example() -> str:
    """docs/mcp.md's Python MCP client, the first ```python block of its section."""
    section = (ROOT / "docs" / "mcp.md").read_text().split("## A Python client (mcp 2.x)\n", 1)[1]
    return section.split("```python\n", 1)[1].split("\n```", 1)[0] + "\n"


def test_the_docs_python_mcp_client_runs_as_written(
    fresh_server: ThreadServer, tmp_path: Path
) -> None:
    code = mcp_client_example()
    # the only edits a reader makes: where the service is, and their key
    url, key = 'URL = "http://127.0.0.1:8080/mcp"', 'KEY = "hs_your_key"'
    assert code.count(url) == 1 and code.count(key) == 1, code
    code = code.replace(url, f'URL = "{fresh_server.url}/mcp"').replace(key, f'KEY = "{ADMIN_KEY}"')
    script = tmp_path / "mcp_client.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    out = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    printed = [ln[3:] for ln in code.splitlines() if ln.startswith("#> ")]
    assert printed and out.stdout.splitlines() == printed, out.stdout


def test_conversation_recall_finds_what_the_last_line_does_not_name(
    server: ThreadServer, ns: str
) -> None:
    env = {
        **os.environ,
        "HINDSIGHT_URL": server.url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_NAMESPACE": ns,
    }
    example = EXAMPLE.parent / "conversation_recall.py"
    out = subprocess.run(
        [sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:4] == [
        "searched user (0.81): My beagle Rex has been coughing since Sunday",
        "searched assistant (0.45): Poor Rex! A vet should listen to that cough.",
        "searched user (1): Who could take him this week?",
        lines[3],
    ]
    assert {lines[3], lines[4]} == {
        "recalled user.pet: has a beagle named Rex",
        "recalled user.vet: Rex's vet is Dr. Okafor on Elm Street",
    }
    assert lines[5] in (
        "from a transcript: user.pet, user.vet",
        "from a transcript: user.vet, user.pet",
    )
