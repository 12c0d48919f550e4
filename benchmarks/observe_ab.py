"""Single observes into a small namespace, before and after a change, side by side.

    python -m benchmarks.observe_ab --baseline-src /path/to/other/checkout/src \
        [--prefill 3000] [--observes 600] [--rounds 2]

What an agent does most: one memory at a time into its user's namespace, which holds a few
hundred to a few thousand memories and so is searched exactly (up to
HINDSIGHT_EXACT_SEARCH_MAX_ROWS), not through the graphs. Two services run on one fresh
database, one worker each: the baseline (another checkout's code) and this checkout. Each
gets a namespace of its own, filled with `--prefill` English sentences (the matrix's
`english` corpus) through the batch API, and then observes the following sentences one
by one under new keys, the two services in turns, 25 observes at a time, so the shared
machine's load falls on both alike. Per observe: latency p50 / p99, the worker's CPU and
PostgreSQL's (all of its processes over that service's turns). `--rounds` repeats it with
fresh namespaces and the order of the services swapped. Writes results/observe_ab.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.corpora import stdlib_sentences
from benchmarks.perf import summary
from benchmarks.recall_ab import variant
from benchmarks.stack import LightClient, Service, stores

BLOCK = 25
RESULTS = Path(__file__).resolve().parent / "results"


def worker_cpu(svc: Service) -> float:
    proc = psutil.Process(svc.process.pid)
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            t = p.cpu_times()
            total += t.user + t.system
    return total


def database_cpu() -> float:
    """CPU of every PostgreSQL process so far."""
    total = 0.0
    for proc in psutil.process_iter(["name"]):
        if (proc.info["name"] or "").startswith("postgres"):
            with contextlib.suppress(psutil.Error):
                t = proc.cpu_times()
                total += t.user + t.system
    return total


def fill(client: LightClient, namespace: str, sentences: list[str]) -> None:
    for start in range(0, len(sentences), 100):
        batch = [
            {"key": f"pre.{start + i}", "value": value}
            for i, value in enumerate(sentences[start : start + 100])
        ]
        reply = client.post(f"/v1/namespaces/{namespace}/memories:batch", json={"memories": batch})
        if reply.status_code >= 300:
            raise RuntimeError(f"{reply.status_code}: {reply.text[:200]}")


def one_round(
    services: dict[str, Service], sentences: list[str], args: argparse.Namespace, tag: str
) -> dict[str, dict[str, float]]:
    names = list(services)
    for n in names:
        filler = services[n].light_client()
        try:
            fill(filler, f"{tag}_{n}", sentences[: args.prefill])
        finally:
            filler.close()
    # new connections: the server closes one idle for 5 s, as the other side filled
    clients = {n: svc.light_client() for n, svc in services.items()}
    latency: dict[str, list[float]] = {n: [] for n in names}
    try:
        work = {n: 0.0 for n in names}
        database = {n: 0.0 for n in names}
        todo = sentences[args.prefill : args.prefill + args.observes]
        # blocks of BLOCK observes in turns: PostgreSQL's CPU is counted per block, as
        # both services' backends are alike to the operating system
        for b, start in enumerate(range(0, len(todo), BLOCK)):
            for n in names if b % 2 == 0 else names[::-1]:
                w0, d0 = worker_cpu(services[n]), database_cpu()
                for i, value in enumerate(todo[start : start + BLOCK], start=start):
                    began = time.perf_counter()
                    reply = clients[n].post(
                        f"/v1/namespaces/{tag}_{n}/memories",
                        json={"key": f"fact.{i}", "value": value},
                    )
                    latency[n].append(time.perf_counter() - began)
                    if reply.status_code >= 300:
                        raise RuntimeError(f"{reply.status_code}: {reply.text[:200]}")
                work[n] += worker_cpu(services[n]) - w0
                database[n] += database_cpu() - d0
    finally:
        for c in clients.values():
            c.close()
    out = {}
    for n in names:
        s = summary(latency[n])
        out[n] = {
            "p50": s["p50"],
            "p99": s["p99"],
            "worker_cpu": round(1000 * work[n] / len(latency[n]), 2),
            "database_cpu": round(1000 * database[n] / len(latency[n]), 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-src", required=True, help="the baseline runs this src's code")
    parser.add_argument("--prefill", type=int, default=3000)
    parser.add_argument("--observes", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "observe_ab.md")
    args = parser.parse_args()
    sentences = list(stdlib_sentences())
    rows: list[tuple[int, str, dict[str, float]]] = []
    with (
        stores() as s,
        s.database() as url,
        variant(url, s.redis_url, {}, args.baseline_src) as before,
        variant(url, s.redis_url, {}, None) as after,
    ):
        for r in range(args.rounds):
            random.Random(r).shuffle(sentences)
            order = {"before": before, "after": after}
            if r % 2:
                order = {"after": after, "before": before}
            result = one_round(order, sentences, args, f"r{r}")
            load = round(os.getloadavg()[0], 1)
            for name in ("before", "after"):
                rows.append((r + 1, name, {**result[name], "load": load}))
            print(f"round {r + 1}: {result} load {load}", flush=True)
    text = report(rows, args)
    args.out.write_text(
        f"# Single observes, side by side\n\n`python -m benchmarks.observe_ab "
        f"{' '.join(sys.argv[1:])}`\n\n{text}\n"
    )
    print(text)


def report(rows: list[tuple[int, str, dict[str, Any]]], args: argparse.Namespace) -> str:
    lines = [
        f"Single observes of English sentences into a namespace of {args.prefill:,} "
        f"(then growing by {args.observes}), one worker each, in turns. ms an observe.",
        "",
        "| round | side | p50 | p99 | worker CPU | database CPU | load |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r, name, t in rows:
        lines.append(
            f"| {r} | {name} | {t['p50']} | {t['p99']} | {t['worker_cpu']} "
            f"| {t['database_cpu']} | {t['load']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
