"""The README's walk-through, run as a newcomer pastes it: against `hindsight serve` on a
fresh data dir, in bash, with curl and jq; every `#>` line in it must be what the command
above it prints. The quickstart page carries the same block."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.servers import free_port, wait_ready
from tests.test_serve import start, stop

ROOT = Path(__file__).resolve().parent.parent


def walkthrough(text: str) -> str:
    """The first ```sh block after the `## Walk-through` heading."""
    section = text.split("## Walk-through\n", 1)[1]
    return section.split("```sh\n", 1)[1].split("\n```", 1)[0] + "\n"


def first_call(block: str) -> str:
    """The walk-through's first call: its set-up lines and the observe call after them
    (the block's first two paragraphs), with what it prints."""
    return "\n\n".join(block.split("\n\n")[:2]) + "\n"


def test_the_panels_first_run_page_shows_the_walkthroughs_first_call() -> None:
    call = first_call(walkthrough((ROOT / "README.md").read_text()))
    assert "memories:batch" in call and call.count("#> ") == 2, call
    shown = ROOT / "src" / "hindsight" / "ui" / "static" / "first-call.sh"
    assert shown.read_text() == call, (
        f"{shown.relative_to(ROOT)} must be the README walk-through's first two paragraphs"
    )


def test_the_quickstart_shows_the_readmes_walkthrough() -> None:
    readme = walkthrough((ROOT / "README.md").read_text())
    assert walkthrough((ROOT / "docs" / "quickstart.md").read_text()) == readme


def test_the_walkthrough_has_no_placeholders() -> None:
    block = walkthrough((ROOT / "README.md").read_text())
    assert not re.search(r"<[a-z_]+>", block), "use ids captured from answers, not <id>"


@pytest.mark.skipif(not (shutil.which("jq") and shutil.which("curl")), reason="needs curl, jq")
def test_the_readme_walkthrough_runs_as_written(tmp_path: Path) -> None:
    block = walkthrough((ROOT / "README.md").read_text())
    expected = [ln[3:] for ln in block.splitlines() if ln.startswith("#> ")]
    assert len(expected) >= 10
    data_dir, port = tmp_path / "data", free_port()
    proc = start(data_dir, port)
    try:
        wait_ready(f"http://127.0.0.1:{port}", timeout=180, path="/readyz")
        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
        env.update(HINDSIGHT_DATA_DIR=str(data_dir), HINDSIGHT_PORT=str(port))
        run = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        stop(proc)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == expected, run.stdout
