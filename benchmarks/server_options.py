"""What the service adds around recall's SQL, under other servers and settings.

    python -m benchmarks.server_options [--corpus zipf] [--n 10000] [--queries 600]

One corpus is loaded once (`hindsight import`, then ANALYZE); each option then starts the
service in its own process and answers the same recalls, one client over keep-alive HTTP
(`LightClient`), twice. Per option: the client's p50 and p99, and by the service's
Server-Timing the time it spent in all (app), in the two search statements (db) and in the
query's embedding, the rest of the service (python) and what HTTP added on top (http).
The options are those issue 10 asks about: the ASGI server (uvicorn with httptools and
uvloop, which `hindsight serve` runs, against Granian, a Rust one), and how often the
access counts and the recall log are flushed (their writes share the worker's event loop
and CPU with the recalls). Prints a table; results/server_options.md keeps one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.servers import free_port, wait_ready

from benchmarks import matrix
from benchmarks.corpora import CORPORA
from benchmarks.perf import recall_calls, summary, timed_calls, writes
from benchmarks.stack import API_KEY, Service, stores
from hindsight.config import Settings

RESULTS = Path(__file__).resolve().parent / "results"

UVICORN = [
    "-m", "uvicorn", "--factory", "hindsight.server:app_from_env", "--log-level", "warning",
    "--no-access-log", "--workers", "1", "--host", "127.0.0.1", "--port",
]  # fmt: skip
GRANIAN = [
    "-m", "granian", "--interface", "asgi", "--factory", "--loop", "uvloop", "--workers", "1",
    "--log-level", "warning", "--no-access-log", "--host", "127.0.0.1", "--port",
]  # fmt: skip

# name -> (server command, extra HINDSIGHT_* settings)
OPTIONS: dict[str, tuple[list[str], dict[str, str]]] = {
    "uvicorn": (UVICORN, {}),  # as `hindsight serve` runs it: flushes every 50 ms
    "uvicorn-flush-250ms": (UVICORN, {"ACCESS_FLUSH_INTERVAL_MS": "250"}),
    "uvicorn-no-flush": (UVICORN, {"ACCESS_FLUSH_INTERVAL_MS": "60000"}),  # none in the run
    "granian": (GRANIAN, {}),  # Rust, with uvloop
}


@contextlib.contextmanager
def server(command: list[str], env: dict[str, str]) -> Iterator[Service]:
    port = free_port()
    target = ["hindsight.server:app_from_env"] if command is GRANIAN else []
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    full_env.update(env)
    proc = subprocess.Popen([sys.executable, *command, str(port), *target], env=full_env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, 120, "/readyz")
        yield Service(url, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def measure(svc: Service, calls: list[Any]) -> dict[str, Any]:
    timed_calls(svc, calls[:100], 1)  # connections, prepared statements, caches
    best: dict[str, Any] = {}
    for _ in range(2):
        spans: list[dict[str, float]] = []
        samples, _ = timed_calls(svc, calls, 1, spans)
        out: dict[str, Any] = {"recall": summary(samples)}
        for name in ("app", "db", "embed"):
            out[name] = round(statistics.median(s.get(name, 0.0) for s in spans), 2)
        out["python"] = round(out["app"] - out["db"] - out["embed"], 2)
        out["http"] = round(out["recall"]["p50"] - out["app"], 2)
        out["load_average"] = round(os.getloadavg()[0], 1)
        if not best or out["recall"]["p50"] < best["recall"]["p50"]:
            best = out
    return best


def report(rows: dict[str, dict[str, Any]], argv: list[str]) -> str:
    lines = [
        "# Around recall's SQL: servers and settings",
        "",
        f"`python -m benchmarks.server_options {' '.join(argv)}`: one worker on 2 cores, one "
        "client over keep-alive HTTP, built-in embedder, k = 10; the better of two passes. "
        "ms; app, db, embed from the service's Server-Timing (p50s).",
        "",
        "| option | recall p50 | p99 | app | db | embed | python | http | load avg |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, m in rows.items():
        lines.append(
            f"| {name} | {m['recall']['p50']} | {m['recall']['p99']} | {m['app']} | {m['db']} "
            f"| {m['embed']} | {m['python']} | {m['http']} | {m['load_average']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="zipf", choices=sorted(CORPORA))
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--options", help="comma-separated option names (default: all)")
    parser.add_argument("--keep", type=Path, help="keep the loaded corpus here and reuse it")
    parser.add_argument(
        "--writes",
        action="store_true",
        help="also time writes and working memory on the served service (perf.writes)",
    )
    args = parser.parse_args()
    cell = matrix.Cell(args.corpus, "import", 1, args.n)
    corpus = CORPORA[args.corpus]
    wanted = args.options.split(",") if args.options else list(OPTIONS)
    rows: dict[str, dict[str, Any]] = {}
    with stores(args.keep) as s:
        settings = Settings(api_key="x" * 20, data_dir=s.root)
        with matrix.cell_database(s, cell, args.keep is not None) as (url, fresh):
            if fresh:
                asyncio.run(matrix.load_import(url, cell, corpus, settings))
                matrix.analyze(url)
            env = {
                "HINDSIGHT_DATABASE_URL": url,
                "HINDSIGHT_REDIS_URL": s.redis_url,
                "HINDSIGHT_API_KEY": API_KEY,
                "HINDSIGHT_LOG_LEVEL": "warning",
            }
            rng = random.Random(5)
            queries = [("bench", q) for q in corpus.queries(args.queries)]
            rng.shuffle(queries)
            calls = recall_calls(queries, {})
            for name in wanted:
                command, extra = OPTIONS[name]
                with server(command, env | {f"HINDSIGHT_{k}": v for k, v in extra.items()}) as svc:
                    rows[name] = measure(svc, calls)
                print(f"[{name}] {rows[name]}", flush=True)
            wrote = {}
            if args.writes:
                command, _ = OPTIONS["uvicorn"]
                with server(command, env) as svc:
                    wrote = writes(svc, url, settings, args)
    text = report(rows, sys.argv[1:])
    if wrote:
        text += "\nWrites and working memory on the same service (p50 / p99 ms):\n\n"
        for k, v in wrote.items():
            shown = f"{v['p50']} / {v['p99']}" if isinstance(v, dict) else v
            text += f"- {k}: {shown}\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "server_options.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
