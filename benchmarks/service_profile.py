"""Where the service's own time goes during recall: a sampling profile of the running worker.

    python -m benchmarks.service_profile --keep DIR   # English, 1,000 namespaces and one
    python -m benchmarks.service_profile --keep DIR --cells zipf/batch/1/100000

The matrix splits each recall by the service's Server-Timing into database, embedding, the
rest of the service and HTTP; the rest is Python, and a cell whose recall takes more than
1.5× its SQL spends it there. This starts the service on a matrix cell's corpus (loaded as
`benchmarks.matrix --keep` loads it, or reused from there), has one keep-alive client
recall for a while, and samples the worker's stacks from outside with py-spy
(`pip install -e '.[profile]'`; `--nonblocking`: the worker is never paused) where it
holds the GIL, i.e. runs Python. The worker's CPU time over the same window (from the
kernel) divided by the recalls answered is its CPU per recall; each part's share of the
samples times that apportions it. Writes results/service_profile.md.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks import matrix
from benchmarks.corpora import CORPORA
from benchmarks.perf import recall_calls, timed_calls
from benchmarks.stack import Stores, service, stores
from hindsight.config import Settings

RESULTS = Path(__file__).resolve().parent / "results"
RATE = 200  # samples a second: py-spy keeps up on a busy 2-core machine

# What a sample was doing, by the first listed frame found in its stack (top to bottom of
# this list: the first match wins, so narrower parts come before the code around them).
PARTS: list[tuple[str, tuple[str, ...]]] = [
    ("background: flushing access counts and the recall log", ("AccessRecorder._run",)),
    # psycopg resumes a statement from the event loop's callbacks, outside its caller
    ("psycopg: the arms' statements, parameters and rows", ("psycopg/",)),
    ("recall: embedding the query", ("RecallService._query_vector",)),
    ("recall: time expressions in the query", ("RecallService.time_window",)),
    ("recall: fusion and ranking", ("ranking.py",)),
    ("recall: the rest of the recall service", ("RecallService.recall",)),
    ("route: results into response models", ("recall.<locals>.<listcomp>",)),
    ("FastAPI: dependencies, authentication, body validation", ("solve_dependencies",)),
    ("FastAPI: response serialisation", ("serialize_response", "_prepare_response_content")),
    ("route: the rest of the handler", ("api/routes/recall.py",)),
    ("HTTP server and middleware", ("run_asgi",)),
]
OTHER = "event loop, connection pools and the rest"


def part_of(stack: str) -> str:
    for name, needles in PARTS:
        if any(needle in stack for needle in needles):
            return name
    return OTHER


def parts(raw: Path) -> collections.Counter[str]:
    """Samples per part, from py-spy's raw output (`frame;frame;... count` lines)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if stack:
            counts[part_of(stack)] += int(n)
    return counts


def load_if_new(s: Stores, cell: matrix.Cell, settings: Settings) -> str:
    """The cell's database, loaded and analyzed as the matrix leaves it."""
    with matrix.cell_database(s, cell, keep=True) as (url, fresh):
        if fresh:
            print(f"[{cell.name}] loading ...", flush=True)
            with service(url, s.redis_url) as svc:  # which migrates the new database
                matrix._svc = svc
                if cell.path == "batch":
                    matrix.load_batch(url, cell, CORPORA[cell.corpus])
                else:
                    asyncio.run(matrix.load_import(url, cell, CORPORA[cell.corpus], settings))
            matrix.analyze(url)
    return url


def profile(
    s: Stores, cell: matrix.Cell, seconds: float, queries: int, keep_raw: Path | None = None
) -> dict[str, object]:
    settings = Settings(api_key="x" * 20, data_dir=s.root)
    url = load_if_new(s, cell, settings)
    rng = random.Random(99)
    asked = [
        (matrix.namespace_of(rng.randrange(cell.spread), cell.spread), q)
        for q in CORPORA[cell.corpus].queries(queries)
    ]
    calls = recall_calls(asked, {})
    with service(url, s.redis_url) as svc, tempfile.TemporaryDirectory() as tmp:
        timed_calls(svc, calls, 1)  # connections, prepared statements, pages
        raw = Path(tmp) / "samples.txt"
        spy = subprocess.Popen(
            [
                *py_spy(),
                "record",
                "--pid",
                str(svc.process.pid),
                "--subprocesses",
                "--nonblocking",
                "--gil",
                "--rate",
                str(RATE),
                "--duration",
                str(max(1, round(seconds))),  # py-spy 0.4.3 takes whole seconds
                "--format",
                "raw",
                "--output",
                str(raw),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        latencies: list[float] = []
        worker = psutil.Process(svc.process.pid)
        cpu_before = sum(worker.cpu_times()[:2])
        start = time.perf_counter()
        while spy.poll() is None:
            latencies += timed_calls(svc, calls[:50], 1)[0]
        elapsed = time.perf_counter() - start
        cpu_ms = 1000 * (sum(worker.cpu_times()[:2]) - cpu_before)
        if spy.returncode != 0 or not raw.exists():
            raise SystemExit(f"py-spy failed: {spy.stderr.read().decode() if spy.stderr else ''}")
        counts = parts(raw)
        if keep_raw is not None:  # for a closer look: py-spy's stacks, one line each
            keep_raw.mkdir(parents=True, exist_ok=True)
            (keep_raw / f"{cell.name.replace('/', '-')}.txt").write_text(raw.read_text())
    recalls = len(latencies)
    per_recall = cpu_ms / recalls
    total = sum(counts.values())
    return {
        "cell": cell.name,
        "recalls": recalls,
        "recall_p50_ms": round(1000 * statistics.median(latencies), 2),
        "seconds": round(elapsed, 1),
        "worker_cpu_ms_per_recall": round(per_recall, 3),
        "parts": {
            name: (round(100 * n / total, 1), round(per_recall * n / total, 3))
            for name, n in counts.most_common()
        },
    }


def py_spy() -> list[str]:
    found = Path(sys.executable).with_name("py-spy")
    if not found.exists():
        raise SystemExit("py-spy is missing: pip install -e '.[profile]'")
    if os.geteuid() != 0:  # attaching to another process needs ptrace rights
        return ["sudo", "-n", str(found)]
    return [str(found)]


def report(results: list[dict[str, object]], argv: list[str]) -> str:
    lines = [
        "# Where the service's own time goes during recall",
        "",
        f"`python -m benchmarks.service_profile {' '.join(argv)}` on a 2-core machine: one",
        "worker, one keep-alive client, built-in embedder, k = 10; py-spy sampling the",
        f"worker at {RATE} Hz where it runs Python (recall p50 is with py-spy attached); ms",
        "per recall: the worker's CPU per recall (from the kernel) times the part's share.",
    ]
    for result in results:
        shares = result["parts"]
        assert isinstance(shares, dict)
        lines += [
            "",
            f"## {result['cell']}",
            "",
            f"{result['recalls']:,} recalls in {result['seconds']} s, p50 "
            f"{result['recall_p50_ms']} ms; {result['worker_cpu_ms_per_recall']} ms of worker "
            "CPU per recall.",
            "",
            "| part | share of the samples | ms per recall |",
            "| --- | ---: | ---: |",
        ]
        for name, (share, ms) in shares.items():
            lines.append(f"| {name} | {share}% | {ms} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", type=Path, required=True, help="matrix corpora live here")
    parser.add_argument(
        "--cells",
        default="english/import/1000/10000,english/import/1/100000",
        help="corpus/load path/namespaces/memories, comma-separated",
    )
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--raw", type=Path, help="keep py-spy's raw samples here, a file a cell")
    args = parser.parse_args()
    cells = []
    for spec in args.cells.split(","):
        corpus, path, spread, n = spec.split("/")
        if corpus not in CORPORA or path not in ("import", "batch"):
            parser.error(f"--cells: {spec!r} is not corpus/import|batch/namespaces/memories")
        cells.append(matrix.Cell(corpus, path, int(spread), int(n)))
    with stores(args.keep) as s:
        results = [profile(s, cell, args.seconds, args.queries, args.raw) for cell in cells]
    text = report(results, sys.argv[1:])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "service_profile.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
