"""Mixed load, measured from outside: what one worker sustains, how it answers at half that,
and what happens at twice it (issue 33 item 4).

The service in its own process (one worker) over embedded PostgreSQL and Redis, N memories
in one namespace; operations drawn 80% recall / 15% observe / 5% step append.
1. capacity: 16 closed-loop clients for a while; throughput is the capacity.
2. half load: open loop (Poisson arrivals) at half the capacity.
3. half load, recall only: the same arrivals, every one a recall: what the writes among
   them cost recall's latency.
4. overload: open loop at twice the capacity.
Each phase prints throughput (answers within the phase), p50/p99 per operation (latency from
the moment a request was due, so a client-side backlog counts), the requests refused 503
overloaded, and the sender's own lag: when the generator, on the same 2 cores as the
service, cannot send at the rate asked, the latencies are the generator's as much as the
service's, and the lag says so.
`--no-shedding` runs the same with HINDSIGHT_MAX_IN_FLIGHT=0, the behaviour before.

`--variant LABEL[:name=value,...]` (repeated) runs the three phases through services with
other settings on the same data, in turns, every variant offered the first one's rates →
`results/mixed.md`.

`--workers-compare` asks what a second worker process buys on this machine (issue 33 item
5): on the same data, recall alone in a closed loop at each `--clients` count, through a
service with one worker and one with two (HINDSIGHT_WORKERS), in turns, `--rounds` times,
the order alternating: throughput and p50/p99 of each.

    python -m benchmarks.mixed [--memories 20000] [--seconds 20] [--no-shedding]
    python -m benchmarks.mixed --variant today --variant "bounded:max_in_flight=8" ...
    python -m benchmarks.mixed --workers-compare [--clients 1,8,16] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import uvloop

from benchmarks.stack import API_KEY, service, stores

NS = "mixed"
RESULTS = Path(__file__).resolve().parent / "results"
# More than the service ever holds in flight and queued, so that a backlog under overload is
# the service's to shed, not the generator's pool's to hide.
OPEN_LOOP_CONNECTIONS = 1024
WORDS = (
    "tea coffee river mountain violin garden lisbon berlin cat dog paper orange train "
    "meeting doctor sister budget laptop bicycle holiday recipe allergy birthday office"
).split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))


def _request(
    rng: random.Random, i: int, recall_only: bool = False
) -> tuple[str, str, dict[str, Any]]:
    roll = 0.0 if recall_only else rng.random()
    if roll < 0.80:
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5)))
        return "recall", f"/v1/namespaces/{NS}/recall", {"query": query, "k": 10}
    if roll < 0.95:
        body = {"key": f"fact.{rng.randrange(50_000)}", "value": _sentence(rng)}
        return "observe", f"/v1/namespaces/{NS}/memories", body
    return "append", f"/v1/namespaces/{NS}/sessions/s{i % 20}/steps", {"content": _sentence(rng)}


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.lag: list[float] = []  # how late the generator sent (its own backlog), ms
        self.shed = 0
        self.refused_in: list[float] = []  # ms from due to the 503
        self.errors = 0
        self.in_window = 0  # served (not refused) within the phase's seconds

    def refusal(self) -> str:
        return f"{statistics.median(self.refused_in):.1f}" if self.refused_in else "—"

    def row(self, phase: str, seconds: float) -> str:
        lag = statistics.median(self.lag) if self.lag else 0.0
        parts = [
            f"{phase:<10} {self.in_window / seconds:6.1f} ops/s  shed {self.shed:5d} "
            f"(p50 {self.refusal()} ms)  err {self.errors}  sender lag p50 {lag:6.1f} ms"
        ]
        for op in ("recall", "observe", "append"):
            xs = sorted(self.latency.get(op, []))
            if xs:
                p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
                parts.append(f"{op} p50 {statistics.median(xs):7.1f} p99 {p99:7.1f} ms")
        return " | ".join(parts)


class Connections:
    """Keep-alive HTTP/1.1 connections over asyncio streams, one request on each at a time.

    Not httpx: it spent about 1.7 ms of CPU a request, so at twice the service's capacity
    the generator took a whole core while the service, waiting for requests, used a third
    of one; what was measured was the generator's backlog. Here a request is bytes written
    and a status line, headers and a Content-Length body read back (~0.1 ms). Requests
    beyond the open connections wait for one in arrival order, as a browser's or an SDK's
    pool makes them wait; that wait counts in their latency.
    """

    def __init__(self, url: str, size: int) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.size = size
        self.opened = 0
        self.idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.Queue()
        )
        self.head = (
            f"Host: {self.host}:{self.port}\r\nAuthorization: Bearer {API_KEY}\r\n"
            "Content-Type: application/json\r\n"
        ).encode()

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.idle.empty() and self.opened < self.size:
            self.opened += 1
            try:
                conn = await asyncio.open_connection(self.host, self.port)
            except OSError:
                self.opened -= 1
                raise
        else:
            conn = await self.idle.get()
        reader, writer = conn
        data = json.dumps(body).encode()
        try:
            writer.write(
                f"POST {path} HTTP/1.1\r\n".encode()
                + self.head
                + f"Content-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            payload = await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            writer.close()
            self.opened -= 1
            raise
        if b"connection: close" in head.lower():
            writer.close()
            self.opened -= 1
        else:
            self.idle.put_nowait(conn)
        return status, payload

    async def close(self) -> None:
        while not self.idle.empty():
            _, writer = self.idle.get_nowait()
            writer.close()


async def _one(
    client: Connections,
    rng: random.Random,
    i: int,
    due: float,
    t: Tally,
    end: float,
    recall_only: bool = False,
) -> None:
    op, path, body = _request(rng, i, recall_only)
    t.lag.append((time.perf_counter() - due) * 1000)
    try:
        status, payload = await client.post(path, body)
    except (OSError, asyncio.IncompleteReadError, ValueError):
        t.errors += 1
        return
    took = (time.perf_counter() - due) * 1000
    if status == 503 and b'"overloaded"' in payload:
        t.shed += 1
        t.refused_in.append(took)
    elif status >= 400:
        t.errors += 1
    else:
        t.latency[op].append(took)
        if time.perf_counter() <= end:
            t.in_window += 1


async def closed_loop(url: str, clients: int, seconds: float, recall_only: bool = False) -> Tally:
    t = Tally()
    end = time.perf_counter() + seconds
    c = Connections(url, clients)

    async def worker(w: int) -> None:
        rng = random.Random(w)
        i = 0
        while time.perf_counter() < end:
            await _one(c, rng, w * 1_000_000 + i, time.perf_counter(), t, end, recall_only)
            i += 1

    await asyncio.gather(*(worker(w) for w in range(clients)))
    await c.close()
    return t


async def open_loop(url: str, rate: float, seconds: float, recall_only: bool = False) -> Tally:
    t = Tally()
    rng = random.Random(7)
    c = Connections(url, OPEN_LOOP_CONNECTIONS)
    tasks = []
    start = time.perf_counter()
    due = start
    i = 0
    while due < start + seconds:
        due += rng.expovariate(rate)
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        one = _one(c, random.Random(i), i, due, t, start + seconds, recall_only)
        tasks.append(asyncio.create_task(one))
        i += 1
    await asyncio.gather(*tasks)
    await c.close()
    return t


def load(url: str, memories: int) -> None:
    rng = random.Random(1)
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=300
    ) as c:
        for start in range(0, memories, 1000):
            batch = [
                {"key": f"fact.{i}", "value": _sentence(rng)}
                for i in range(start, min(memories, start + 1000))
            ]
            r = c.post(f"/v1/namespaces/{NS}/memories:batch", json={"memories": batch})
            assert r.status_code in (200, 201), r.text


def workers_compare(memories: int, seconds: float, clients: list[int], rounds: int) -> None:
    """Recall alone, closed loop, one worker against two on the same data, in turns."""
    tallies: dict[tuple[int, int], list[Tally]] = defaultdict(list)
    with stores() as s, s.database() as db:
        with service(db, s.redis_url) as svc:
            load(svc.url, memories)
        for r in range(rounds):
            for workers in (1, 2) if r % 2 == 0 else (2, 1):
                with service(db, s.redis_url, workers=workers) as svc:
                    uvloop.run(closed_loop(svc.url, 2, 3, recall_only=True))  # warm both
                    for n in clients:
                        t = uvloop.run(closed_loop(svc.url, n, seconds, recall_only=True))
                        tallies[(workers, n)].append(t)
                        print(f"round {r} workers {workers} " + t.row(f"{n} clients", seconds))
    lines = [
        "# One worker or two (issue 33 item 5)",
        "",
        f"`python -m benchmarks.mixed --workers-compare --memories {memories} --seconds "
        f"{seconds:g} --clients {','.join(map(str, clients))} --rounds {rounds}`: "
        f"{memories:,} memories in one namespace (loaded through the batch API), recall "
        "alone in a closed loop through one worker and through two, in turns on the same "
        f"data; load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}.",
        "",
        "| clients | workers | recalls/s | p50 ms | p99 ms |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for n in clients:
        for workers in (1, 2):
            ts = tallies[(workers, n)]
            xs = sorted(x for t in ts for x in t.latency["recall"])
            rate = sum(t.in_window for t in ts) / (seconds * len(ts))
            p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
            lines.append(
                f"| {n} | {workers} | {rate:.1f} | {statistics.median(xs):.1f} | {p99:.1f} |"
            )
    text = "\n".join(lines) + "\n"
    (RESULTS / "workers.md").write_text(text)
    print(text)


def _phases(url: str, seconds: float, reference: float | None) -> dict[str, Tally]:
    """Capacity (closed loop), then half and twice `reference` ops/s (default: the capacity
    just measured), open loop; and half of it again in recalls alone."""
    capacity = uvloop.run(closed_loop(url, 16, seconds))
    rate = reference if reference is not None else capacity.in_window / seconds
    half = uvloop.run(open_loop(url, rate / 2, seconds))
    recalls = uvloop.run(open_loop(url, rate / 2, seconds, recall_only=True))
    over = uvloop.run(open_loop(url, rate * 2, seconds))
    return {
        "capacity": capacity,
        "half load": half,
        "half load, recall only": recalls,
        "overload": over,
    }


def _variant(text: str) -> tuple[str, dict[str, str]]:
    """`LABEL` or `LABEL:name=value,name=value` (settings without HINDSIGHT_, lower case)."""
    label, _, pairs = text.partition(":")
    return label, dict(p.split("=", 1) for p in pairs.split(",") if p)


def compare(
    memories: int,
    seconds: float,
    variants: list[tuple[str, dict[str, str]]],
    out: Path = RESULTS / "mixed.md",
) -> None:
    """Each variant's service on the same data, in turns; the open-loop rates are the first
    variant's capacity, so every variant is offered the same load."""
    results: dict[str, dict[str, Tally]] = {}
    reference: float | None = None
    with stores() as s, s.database() as db:
        with service(db, s.redis_url) as svc:
            load(svc.url, memories)
        for label, settings in variants:
            with service(db, s.redis_url, **settings) as svc:
                uvloop.run(closed_loop(svc.url, 4, 3))  # warm up
                results[label] = _phases(svc.url, seconds, reference)
            if reference is None:
                reference = results[label]["capacity"].in_window / seconds
            for phase, t in results[label].items():
                print(f"{label:<24} " + t.row(phase, seconds))
    assert reference is not None
    load_average = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines = [
        "# Mixed load: capacity, half load and overload (issue 33 item 4)",
        "",
        f"`python -m benchmarks.mixed --memories {memories} --seconds {seconds:g} "
        + " ".join(
            f"--variant {label}" + (":" + ",".join(f"{k}={v}" for k, v in st.items()) if st else "")
            for label, st in variants
        )
        + f"`: {memories:,} memories in one namespace (batch API), one worker (unless a "
        "variant sets `workers`), operations "
        "80% recall / 15% observe / 5% step append. Capacity: 16 closed-loop clients. Half "
        f"load (also as recalls alone) and overload: Poisson arrivals at half and twice the "
        "first variant's capacity "
        f"({reference:.1f} ops/s), the same for every variant. Latency counts from when a "
        "request was due; served: answered 2xx within the phase; shed: answered 503 `overloaded` "
        "(and the median time to that answer); sender lag: how late the "
        "generator (on the same 2 cores) sent. Load average after the run: "
        f"{load_average}.",
        "",
        "| variant | phase | served ops/s | shed (p50 ms) | recall p50 / p99 ms "
        "| observe p50 / p99 | append p50 / p99 | sender lag p50 ms |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, phases in results.items():
        for phase, t in phases.items():
            cells = []
            for op in ("recall", "observe", "append"):
                xs = sorted(t.latency.get(op, []))
                if not xs:
                    cells.append("—")
                    continue
                p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
                cells.append(f"{statistics.median(xs):.1f} / {p99:.1f}")
            lag = statistics.median(t.lag) if t.lag else 0.0
            lines.append(
                f"| {label} | {phase} | {t.in_window / seconds:.1f} | {t.shed} ({t.refusal()}) | "
                + " | ".join(cells)
                + f" | {lag:.1f} |"
            )
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--no-shedding", action="store_true")
    parser.add_argument(
        "--variant",
        action="append",
        help="LABEL[:name=value,...]: compare services with these settings on the same data "
        "and the same offered load (repeat; the first sets the rates) → --out",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "mixed.md", help="--variant's report")
    parser.add_argument("--workers-compare", action="store_true")
    parser.add_argument("--clients", default="1,8,16")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.workers_compare:
        clients = [int(c) for c in args.clients.split(",")]
        workers_compare(args.memories, args.seconds, clients, args.rounds)
        return
    if args.variant:
        compare(args.memories, args.seconds, [_variant(v) for v in args.variant], args.out)
        return
    settings = {"max_in_flight": "0"} if args.no_shedding else {}
    with stores() as s, s.database() as db, service(db, s.redis_url, **settings) as svc:
        load(svc.url, args.memories)
        shedding = "off" if args.no_shedding else "on"
        print(f"{args.memories:,} memories, one worker, shedding {shedding}")
        for phase, t in _phases(svc.url, args.seconds, None).items():
            print(t.row(phase, args.seconds))


if __name__ == "__main__":
    main()
