"""The example agent loop in examples/ runs as documented against a live server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ADMIN_KEY
from tests.support.servers import ThreadServer

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "agent_loop.py"


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
