"""Run the `hindsight` command as a user would, in its own process."""

from __future__ import annotations

import os
import subprocess
import sys


def hindsight(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`hindsight ARGS` with only the given HINDSIGHT_* settings (e.g. database_url=...),
    fed `stdin` if given."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    full.update({f"HINDSIGHT_{k.upper()}": v for k, v in env.items()})
    return subprocess.run(
        [sys.executable, "-m", "hindsight.cli.main", *args],
        env=full,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
