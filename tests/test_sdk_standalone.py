"""The SDK installs and works on its own: a fresh virtualenv holding only `clients/python`
(httpx, pydantic) makes a round trip to a live server, with none of the server's
dependencies importable there."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ADMIN_KEY
from tests.support.servers import ThreadServer

CLIENT_DIST = Path(__file__).resolve().parent.parent / "clients" / "python"

ROUND_TRIP = textwrap.dedent(
    """
    import asyncio, importlib.util, sys
    from hindsight.client import AsyncHindsight, Hindsight

    url, key, ns = sys.argv[1:4]
    server_only = [m for m in ("psycopg", "pgvector", "fastapi", "sqlalchemy", "redis", "numpy")
                   if importlib.util.find_spec(m) is not None]
    assert not server_only, f"server dependencies installed: {server_only}"

    with Hindsight(url, api_key=key) as hs:
        created = hs.observe(ns, "user.city", "Oslo", memory_type="fact")
        again = hs.observe(ns, "user.city", "Oslo")
        print("observe", created.outcome, again.outcome, again.confidence)
        hs.append(ns, "s1", "asked about trains", role="user")

    async def main() -> None:
        async with AsyncHindsight(url, api_key=key) as hs:
            hit = (await hs.recall(ns, "which city does the user live in", k=1)).results[0]
            from hindsight.wire.recall import RecallHit
            print("recall", hit.key, hit.value, type(hit) is RecallHit)
            steps = await hs.steps(ns, "s1")
            print("steps", [s.content for s in steps])

    asyncio.run(main())
    """
)


def test_the_sdk_alone_installs_without_the_server_and_makes_a_round_trip(
    server: ThreadServer, ns: str, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         str(CLIENT_DIST)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    out = subprocess.run(
        [str(python), "-c", ROUND_TRIP, server.url, ADMIN_KEY, ns],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "observe created reinforced 0.6"
    # the SDK's models are the server's, importable from hindsight.wire.memories
    assert lines[1] == "recall user.city Oslo True"
    assert lines[2] == "steps ['asked about trains']"
