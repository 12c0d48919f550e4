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
