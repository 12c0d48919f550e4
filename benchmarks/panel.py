"""How fast the debug panel's pages load on a large namespace, in headless chromium.

    python -m benchmarks.panel [--memories 100000] [--keep DIR]

Loads N memories into one namespace of an embedded store with `hindsight import`, serves
it with `hindsight serve`, then times each page from navigation to its content shown
(median of 5). Needs /usr/bin/chromium and the `browser` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.servers import free_port, wait_ready

KEY = "bench-panel-key-0123456789"
WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
    "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu "
    "city tea coffee trip plan meeting budget invoice report garden music book film"
).split()


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    env.update(HINDSIGHT_DATA_DIR=str(data), HINDSIGHT_API_KEY=KEY, HINDSIGHT_LOG_LEVEL="warning")
    return env


def load(data: Path, n: int) -> None:
    if (data / "loaded").exists():
        return
    rng = random.Random(7)
    lines = data / "memories.jsonl"
    with lines.open("w") as f:
        for i in range(n):
            value = " ".join(rng.choices(WORDS, k=8))
            f.write(json.dumps({"key": f"item.{i}", "value": value}) + "\n")
    cli = [sys.executable, "-m", "hindsight.cli.main"]
    subprocess.run([*cli, "db", "upgrade"], env=_env(data), check=True, stdout=subprocess.DEVNULL)
    cmd = [*cli, "import", str(lines), "--namespace", "big"]
    subprocess.run(cmd, env=_env(data), check=True, stdout=subprocess.DEVNULL)
    (data / "loaded").write_text(str(n))


def timed(page: Any, url: str, ready: str) -> float:
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(ready)
    return (time.perf_counter() - started) * 1000


def measure(url: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(60_000)
        page.goto(url + "/ui/")
        page.fill("input[name=apikey]", KEY)
        page.click("#signin button[type=submit]")
        page.wait_for_selector("#loaded-in")
        pages = {
            "namespaces": (url + "/ui/?n={i}#/namespaces", "#loaded-in"),
            "memories (50 a page)": (url + "/ui/?n={i}#/memories?ns=big", "tbody tr"),
            "memories, key prefix": (
                url + "/ui/?n={i}#/memories?ns=big&prefix=item.4242",
                "tbody tr",
            ),
            "a memory with history": (url + "/ui/?n={i}#/memory?ns=big&id={id}", "#history li"),
            "recall log": (url + "/ui/?n={i}#/recalls?ns=big", "h1"),
        }
        first = page.evaluate(
            "fetch('/v1/namespaces/big/memories?limit=1', {headers: {Authorization: "
            f"'Bearer {KEY}'}}}}).then(r => r.json())"
        )
        memory_id = first["memories"][0]["id"]
        out = {}
        for name, (template, ready) in pages.items():
            runs = [timed(page, template.format(i=i, id=memory_id), ready) for i in range(5)]
            out[name] = round(statistics.median(runs), 1)
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="data dir to reuse")
    args = parser.parse_args()
    data = args.keep or Path(tempfile.mkdtemp(prefix="hs-panel-"))
    data.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    load(data, args.memories)
    loaded = time.monotonic() - started
    port = free_port()
    cmd = [sys.executable, "-m", "hindsight.cli.main", "serve", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=_env(data), stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, timeout=300, path="/readyz")
        result = {"memories": args.memories, "load_seconds": round(loaded), **measure(url)}
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
