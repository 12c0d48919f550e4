"""First benchmark: the service over HTTP with a keep-alive client, at N memories.

    python -m benchmarks.http_bench            # 10,000 memories
    python -m benchmarks.http_bench --n 2000   # quicker

Prints batch ingest rate, single observe latency (new keys and reinforcement), recall
latency, and working-memory append/read latency, as p50/p99 in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import httpx

from benchmarks.corpus import Corpus
from benchmarks.stack import stack


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def timed(n: int, call: Callable[[int], httpx.Response]) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        r = call(i)
        out.append((time.perf_counter() - start) * 1000)
        if r.status_code >= 300:
            raise RuntimeError(f"{r.status_code}: {r.text[:300]}")
    return out


def row(name: str, samples: list[float]) -> str:
    return (
        f"| {name} | {len(samples)} | {percentile(samples, 50):.2f} | "
        f"{percentile(samples, 99):.2f} | {statistics.fmean(samples):.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000, help="memories to load")
    parser.add_argument("--batch", type=int, default=500, help="memories per batch call")
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()

    corpus = Corpus()
    with stack() as s, s.client() as client:
        base = "/v1/namespaces/bench"
        memories = list(corpus.memories(args.n))
        start = time.perf_counter()
        for i in range(0, len(memories), args.batch):
            r = client.post(
                f"{base}/memories:batch", json={"memories": memories[i : i + args.batch]}
            )
            r.raise_for_status()
        ingest = args.n / (time.perf_counter() - start)

        fresh = list(corpus.memories(200, prefix="single"))
        observe_new = timed(200, lambda i: client.post(f"{base}/memories", json=fresh[i]))
        observe_again = timed(200, lambda i: client.post(f"{base}/memories", json=fresh[i]))
        queries = [corpus.query() for _ in range(args.queries)]
        for q in queries[:20]:  # warm the caches and the prepared statements
            client.post(f"{base}/recall", json={"query": q, "k": 10})
        recall = timed(
            len(queries),
            lambda i: client.post(f"{base}/recall", json={"query": queries[i], "k": 10}),
        )
        contents = [corpus.sentence() for _ in range(300)]
        append = timed(
            300,
            lambda i: client.post(
                f"{base}/sessions/s{i % 10}/steps", json={"content": contents[i]}
            ),
        )
        read = timed(
            300, lambda i: client.get(f"{base}/sessions/s{i % 10}/steps", params={"recent": 10})
        )

    print(f"\nHindsight over HTTP, {args.n:,} memories, one keep-alive client, built-in embedder\n")
    print(f"batch ingest: {ingest:,.0f} memories/s (batches of {args.batch})\n")
    print("| call | n | p50 ms | p99 ms | mean ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(row("observe (new key)", observe_new))
    print(row("observe (reinforce)", observe_again))
    print(row("recall k=10", recall))
    print(row("append step", append))
    print(row("read recent 10 steps", read))


if __name__ == "__main__":
    main()
