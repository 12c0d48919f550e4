"""Single operations when PostgreSQL is a round trip away, as a deployer's managed database is.

    python -m benchmarks.remote_db [--delay-ms 0.5] [--memories 300] [--calls 200]

The service in its own process (one worker) over embedded PostgreSQL and Redis, reached
once directly (unix socket) and once through a TCP proxy in a process of its own that holds
every chunk `--delay-ms` before passing it on, each way (the event loop's timers make the
real delay longer: the round trip of `SELECT 1` is printed for both). One client, one call
at a time: a single observe (a new key beside `--memories` others under the same prefix,
so the near-duplicate and contender checks run), a recall, a step append, each p50 / p99.
What a round trip costs an operation is its share of what it waits on the network: the
numbers say how many round trips each makes, roughly, as the difference over the round
trip. Prints only.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import psycopg

from benchmarks.mixed import NS, _sentence
from benchmarks.stack import API_KEY, service, stores

PROXY_PORT = 6543


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes | None]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            if data is None:
                writer.close()
                return
            if (wait := due - loop.time()) > 0:
                await asyncio.sleep(wait)
            writer.write(data)

    sender = asyncio.create_task(send())
    try:
        while data := await reader.read(65536):
            queue.put_nowait((loop.time() + delay, data))
    finally:
        queue.put_nowait((0.0, None))
        await sender


async def _proxy(port: int, socket_path: str, delay: float) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_unix_connection(socket_path)
        await asyncio.gather(
            _pipe(client_r, server_w, delay), _pipe(server_r, client_w, delay),
            return_exceptions=True,
        )  # fmt: skip

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


@contextmanager
def delayed(database_url: str, delay_ms: float) -> Iterator[str]:
    """`database_url` (an embedded server's, on its unix socket) through the proxy."""
    url = urllib.parse.urlparse(database_url)
    socket_path = urllib.parse.parse_qs(url.query)["host"][0] + "/.s.PGSQL.5432"
    code = (
        "import asyncio; from benchmarks.remote_db import _proxy; "
        f"asyncio.run(_proxy({PROXY_PORT}, {socket_path!r}, {delay_ms / 1000}))"
    )
    proxy = subprocess.Popen([sys.executable, "-c", code])
    try:
        proxied = f"postgresql://postgres:@127.0.0.1:{PROXY_PORT}{url.path}"
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(proxied).close()
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield proxied
    finally:
        proxy.terminate()
        proxy.wait()


def round_trip_ms(url: str) -> float:
    with psycopg.connect(url) as conn:
        times = []
        for _ in range(200):
            start = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def operations(url: str, redis_url: str, memories: int, calls: int) -> dict[str, list[float]]:
    latency: dict[str, list[float]] = {"observe": [], "recall": [], "append": []}
    rng = random.Random(3)
    with (
        service(url, redis_url) as svc,
        httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {API_KEY}"}) as c,
    ):
        base = f"/v1/namespaces/{NS}"
        for i in range(0, memories, 100):
            batch = [{"key": f"fact.{j}", "value": _sentence(rng)} for j in range(i, i + 100)]
            assert c.post(f"{base}/memories:batch", json={"memories": batch}).status_code < 300
        requests = {
            # a new key under the loaded memories' prefix: both checks run
            "observe": lambda i: (
                f"{base}/memories",
                {"key": f"fact.n{i}", "value": _sentence(rng)},
            ),
            "recall": lambda i: (f"{base}/recall", {"query": _sentence(rng)[:40], "k": 10}),
            "append": lambda i: (f"{base}/sessions/s1/steps", {"content": _sentence(rng)}),
        }
        for i in range(calls):
            for op, make in requests.items():
                path, body = make(i)
                start = time.perf_counter()
                r = c.post(path, json=body)
                latency[op].append(1000 * (time.perf_counter() - start))
                assert r.status_code < 300, r.text
    return latency


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--delay-ms", type=float, default=0.5, help="each way, asked")
    parser.add_argument("--memories", type=int, default=300)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    rows = []
    with stores() as s:
        for label in ("direct", "through the proxy"):
            with s.database() as db:
                if label == "direct":
                    rtt, ops = (
                        round_trip_ms(db),
                        operations(db, s.redis_url, args.memories, args.calls),
                    )
                else:
                    with delayed(db, args.delay_ms) as url:
                        rtt = round_trip_ms(url)
                        ops = operations(url, s.redis_url, args.memories, args.calls)
            rows.append((label, rtt, ops))
    print(f"{args.calls} calls of each, one at a time, beside {args.memories} memories")
    print(
        "| PostgreSQL | round trip ms | observe p50 / p99 ms | recall p50 / p99 "
        "| append p50 / p99 |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, rtt, ops in rows:
        cells = []
        for op in ("observe", "recall", "append"):
            xs = sorted(ops[op])
            cells.append(f"{statistics.median(xs):.1f} / {xs[int(0.99 * (len(xs) - 1))]:.1f}")
        print(f"| {label} | {rtt:.2f} | " + " | ".join(cells) + " |")
    (_, direct, d), (_, remote, r) = rows
    for op in ("observe", "recall", "append"):
        extra = statistics.median(r[op]) - statistics.median(d[op])
        print(f"{op}: +{extra:.1f} ms at p50 ≈ {extra / (remote - direct):.1f} round trips")


if __name__ == "__main__":
    main()
