"""Recall before and after a change, side by side: two services on one loaded namespace.

    python -m benchmarks.recall_ab --keep DIR [--corpora madeup,zipf,english] [--size 100000] \
        [--queries 300] [--quality 150] [--baseline HINDSIGHT_HNSW_EF_SEARCH=100] \
        [--baseline-src /path/to/other/checkout/src] [--turns 7]

Each corpus of `benchmarks.corpora` is loaded into one namespace of `--size` memories by
the bulk import the matrix uses (kept in DIR under the matrix's database names, so
`benchmarks.matrix --keep DIR --paths import --spreads 1` and this share their loads),
analyzed, and every memory's specificity computed ahead, as the matrix does. Then two
services run on it at once, one worker each: the baseline (this checkout with the
`--baseline` settings, or another checkout's code with `--baseline-src`) and the
candidate (this checkout as it is). Each query goes to both over keep-alive HTTP, the
order alternating query by query, so the shared machine's load and whatever the first
call leaves warm (pages, the embedding cache) fall on both alike; each is warmed first
with as many other queries from the same distribution. Beside the latencies, the
service's own Server-Timing (db, and the app's whole time) and the quality of each
variant's settings: the share of the exact fused top 10 (the same ranking with every
arm searched exactly) its answers find (`benchmarks.perf.hnsw_quality`). `--turns N` asks
each query as the latest user turn of a conversation (`context`: N earlier turns, the
corpus's own sentences), as an agent recalls with the dialogue so far; quality then
compares with the same conversations searched exactly. Quality is measured in-process with
this checkout's code and each variant's settings (not `--baseline-src`'s code).
Writes results/recall_ab.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
from pydantic import SecretStr
from tests.support.servers import spawn_server

from benchmarks.corpora import CORPORA
from benchmarks.matrix import (
    Cell,
    analyze,
    cell_database,
    keep_specificities,
    load_import,
    namespace_of,
)
from benchmarks.perf import hnsw_quality, summary
from benchmarks.stack import API_KEY, LightClient, Service, server_timing, stores
from hindsight.config import Settings
from hindsight.text.conversation import Turn

RESULTS = Path(__file__).resolve().parent / "results"


@contextlib.contextmanager
def variant(
    database_url: str, redis_url: str, env: dict[str, str], src: str | None
) -> Iterator[Service]:
    full = {
        "HINDSIGHT_DATABASE_URL": database_url,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": API_KEY,
        "HINDSIGHT_LOG_LEVEL": "warning",
        **env,
    }
    if src:  # another checkout's code, ahead of the installed one
        full["PYTHONPATH"] = os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])
    proc, url = spawn_server(full, ready_path="/readyz", timeout=120)
    try:
        yield Service(url, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def settings_of(env: dict[str, str]) -> Settings:
    """The in-process Settings a service with these HINDSIGHT_* variables runs with."""
    return Settings.model_validate(
        {k.removeprefix("HINDSIGHT_").lower(): v for k, v in env.items()}
    )


def recall(client: LightClient, ns: str, body: dict[str, Any]) -> tuple[float, dict[str, float]]:
    start = time.perf_counter()
    reply = client.post(f"/v1/namespaces/{ns}/recall", json={**body, "k": 10})
    took = time.perf_counter() - start
    if reply.status_code >= 300:
        raise RuntimeError(f"{reply.status_code}: {reply.text[:200]}")
    return took, server_timing(reply.headers.get("server-timing"))


def cpu_seconds(svc: Service) -> float:
    """User and system CPU of the service's process and its children so far."""
    procs = [psutil.Process(svc.process.pid)]
    procs += procs[0].children(recursive=True)
    total = 0.0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            t = proc.cpu_times()
            total += t.user + t.system
    return total


def interleaved(
    services: dict[str, Service],
    queries: list[tuple[str, dict[str, Any]]],
    warm: list[tuple[str, dict[str, Any]]],
) -> dict[str, dict[str, Any]]:
    names = list(services)
    clients = {name: svc.light_client() for name, svc in services.items()}
    samples: dict[str, list[float]] = {n: [] for n in names}
    spans: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    cpu: dict[str, float] = {}
    try:
        for timed, batch in ((False, warm), (True, queries)):
            if timed:
                cpu = {n: cpu_seconds(services[n]) for n in names}
            for i, (ns, q) in enumerate(batch):
                for name in names if i % 2 == 0 else names[::-1]:
                    took, timing = recall(clients[name], ns, q)
                    if timed:
                        samples[name].append(took)
                        spans[name].append(timing)
        cpu = {n: cpu_seconds(services[n]) - cpu[n] for n in names}
    finally:
        for c in clients.values():
            c.close()
    out = {}
    for name in names:
        s = summary(samples[name])

        def p50(span: str, name: str = name) -> float:
            return round(statistics.median(t.get(span, 0.0) for t in spans[name]), 2)

        out[name] = {
            "p50": s["p50"],
            "p99": s["p99"],
            "db": p50("db"),
            "app": p50("app"),
            "outside app": round(s["p50"] - p50("app"), 2),
            "cpu": round(1000 * cpu[name] / len(queries), 2),
        }
    return out


def run_corpus(
    s: Any, name: str, args: argparse.Namespace, baseline: dict[str, str]
) -> dict[str, Any]:
    corpus = CORPORA[name]
    cell = Cell(name, "import", 1, args.size)
    settings = Settings(api_key=SecretStr("x" * 20), data_dir=s.root)
    ns = namespace_of(0, 1)
    asked = corpus.queries(2 * args.queries)
    bodies = conversations(corpus, asked, args.turns)
    with cell_database(s, cell, True) as (url, fresh):
        if fresh:
            print(f"[{name}] loading {args.size:,} ...", flush=True)
            rate = asyncio.run(load_import(url, cell, corpus, settings))
            print(f"[{name}] {rate:.0f} memories/s", flush=True)
            analyze(url)
        asyncio.run(keep_specificities(url, settings))
        with (
            variant(url, s.redis_url, baseline, args.baseline_src) as before,
            variant(url, s.redis_url, {}, None) as after,
        ):
            times = interleaved(
                {"before": before, "after": after},
                [(ns, b) for b in bodies[: args.queries]],
                [(ns, b) for b in bodies[args.queries :]],
            )
        load_average = round(os.getloadavg()[0], 1)
        quality = {
            label: asyncio.run(
                hnsw_quality(
                    url,
                    [(ns, b["query"]) for b in bodies[: args.quality]],
                    settings_of(env),
                    {},
                    [turns_of(b) for b in bodies[: args.quality]],
                )
            )["answers"]
            for label, env in (("before", baseline), ("after", {}))
        }
    out = {"times": times, "quality": quality, "load_average": load_average}
    print(f"[{name}] {out}", flush=True)
    return out


def turns_of(body: dict[str, Any]) -> tuple[Turn, ...]:
    return tuple(Turn(t["role"], t["content"]) for t in body.get("context", ()))


def conversations(corpus: Any, queries: list[str], turns: int) -> list[dict[str, Any]]:
    """Each query as the request body: alone, or (`turns`) as the latest user turn of a
    conversation whose earlier turns, user and assistant in turn, are the corpus's own
    sentences (drawn past the memories' first 10,000, the same for every run)."""
    if not turns:
        return [{"query": q} for q in queries]
    rng = random.Random(33)
    said = [m["value"] for m in corpus.memories(10_000 + 2_000)][10_000:]
    return [
        {
            "query": q,
            "context": [
                {"role": "user" if (turns - i) % 2 == 0 else "assistant", "content": line}
                for i, line in enumerate(rng.sample(said, turns))
            ],
        }
        for q in queries
    ]


def report(results: dict[str, dict[str, Any]], args: argparse.Namespace, argv: list[str]) -> str:
    before = " ".join(f"{k}={v}" for k, v in args.baseline_env.items()) or "(defaults)"
    if args.baseline_src:
        before += f", code from {args.baseline_src}"
    lines = [
        "# Recall before and after, side by side",
        "",
        f"`python -m benchmarks.recall_ab {' '.join(argv)}` on a 2-core machine shared with",
        f"other work; one namespace of {args.size:,} memories per corpus (bulk import,",
        f"analyzed), built-in embedder, k=10, {args.queries} queries each sent to both",
        *(
            [
                f"as the latest user turn of a conversation of {args.turns + 1} turns (the",
                "earlier ones the corpus's own sentences),",
            ]
            if args.turns
            else []
        ),
        "services in alternating order over keep-alive HTTP, one worker each. Before:",
        f"{before}; after: this checkout's defaults. ms; db and app are the service's",
        "Server-Timing p50s (the arms' SQL as it awaited them, and its whole time), outside",
        "app is recall p50 minus app (HTTP, the event loop before and after); worker CPU is",
        "the service process's CPU time (user + system) over the timed queries per recall,",
        "background work included. Quality: the",
        "share of the exact fused top 10 (every arm searched exactly, same ranking) the",
        f"answers find, over the first {args.quality} queries (this checkout's code with each "
        "side's settings). Target: "
        "p50 ≤ 5 ms.",
        "",
        "| corpus | variant | recall p50 | p99 | db p50 | app p50 | outside app | worker CPU "
        "| p50 after / before | p99 after / before | quality | load avg |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        b, a = r["times"]["before"], r["times"]["after"]
        for label, t in (("before", b), ("after", a)):
            ratio50 = "1.00" if label == "before" else f"{a['p50'] / b['p50']:.2f}"
            ratio99 = "1.00" if label == "before" else f"{a['p99'] / b['p99']:.2f}"
            lines.append(
                f"| {name} | {label} | {t['p50']} | {t['p99']} | {t['db']} | {t['app']} "
                f"| {t['outside app']} | {t.get('cpu', '')} | {ratio50} | {ratio99} "
                f"| {r['quality'][label]} | {r['load_average']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--corpora", default="madeup,zipf,english")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--quality", type=int, default=150)
    parser.add_argument(
        "--baseline",
        action="append",
        default=None,
        help="NAME=VALUE setting of the baseline service (default HINDSIGHT_HNSW_EF_SEARCH=100,"
        " the default before issue 33); repeat for more",
    )
    parser.add_argument("--baseline-src", help="the baseline runs this src directory's code")
    parser.add_argument(
        "--turns",
        type=int,
        default=0,
        help="ask each query after this many earlier turns of a conversation (`context`)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "recall_ab.md")
    args = parser.parse_args()
    pairs = args.baseline if args.baseline is not None else ["HINDSIGHT_HNSW_EF_SEARCH=100"]
    args.baseline_env = dict(p.split("=", 1) for p in pairs if p)
    results = {}
    with stores(args.keep) as s:
        for name in args.corpora.split(","):
            results[name] = run_corpus(s, name, args, args.baseline_env)
            text = report(results, args, sys.argv[1:])
            args.out.parent.mkdir(exist_ok=True)
            args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
