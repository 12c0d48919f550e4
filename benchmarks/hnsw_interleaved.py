"""HNSW recall and latency of several graphs and ef_search values, measured interleaved.

    python -m benchmarks.hnsw_interleaved --corpus zipf --keep DIR \
        --configs 16,64@40/16,64@800/24,100@400

`hnsw_embedder_study` measures one graph after the other, so load from other work on a
shared machine lands on some configurations and not others (ratios drifted by 1.5x within
one run). Here every query runs under every configuration before the next query, so the
ratios to the first configuration are measured under the same load. Each graph is built
(m, ef_construction, single worker, built-in embedder vectors as in `hnsw_embedder_study`)
on a scratch table of its own; the tables are dropped afterwards. Recall is strict
recall@10 against the exact top 10 of the same half-precision vectors.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from pgvector import HalfVector

from benchmarks.corpora import CORPORA
from benchmarks.hnsw_embedder_study import VARIANTS, build, embed, exact, load, study_connection
from hindsight.text import memory_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default="zipf", choices=sorted(CORPORA))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--configs",
        default="16,64@40/16,64@100/16,64@400/16,64@800/16,128@400/16,128@800"
        "/24,100@200/24,100@300/24,100@400",
        help="M,EFC@EF_SEARCH each, separated by /; the first is the ratios' base",
    )
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    configs = []
    for c in args.configs.split("/"):
        graph, ef = c.split("@")
        m, efc = (int(x) for x in graph.split(","))
        configs.append(((m, efc), int(ef)))
    graphs = list(dict.fromkeys(g for g, _ in configs))
    corpus = CORPORA[args.corpus]
    v = VARIANTS["v2"]
    vectors = np.stack(
        [embed(memory_text(m["key"], m["value"]), v) for m in corpus.memories(args.n)]
    )
    queries = np.stack([embed(t, v) for t in corpus.queries(args.queries)])
    _, top = exact(vectors, queries)
    with study_connection(args.keep) as conn:
        tables = {g: f"i_{args.corpus}_{g[0]}_{g[1]}" for g in graphs}
        for g, table in tables.items():
            load(conn, table, vectors)
            print(
                f"{args.corpus}: built m {g[0]}, ef_construction {g[1]} in "
                f"{build(conn, table, *g):.0f} s",
                flush=True,
            )
        conn.execute("SET enable_seqscan = off")
        times: dict = {c: [] for c in configs}
        recall: dict = {c: [] for c in configs}
        for round_ in range(args.rounds):
            for qi, q in enumerate(queries):
                hv = HalfVector(q.astype(np.float32))
                for c in configs:
                    graph, ef = c
                    conn.execute(f"SET hnsw.ef_search = {ef}")
                    sql = f"SELECT id FROM {tables[graph]} ORDER BY embedding <=> %s LIMIT 10"
                    start = time.perf_counter()
                    got = {r[0] for r in conn.execute(sql, (hv,)).fetchall()}
                    times[c].append(time.perf_counter() - start)
                    if round_ == 0:
                        recall[c].append(len(got & set(top[qi].tolist())) / 10)
        base = statistics.median(times[configs[0]])
        print("| m, efc | ef_search | recall@10 | p50 ms | ratio |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for c in configs:
            p50 = statistics.median(times[c])
            print(
                f"| {c[0][0]}, {c[0][1]} | {c[1]} | {statistics.fmean(recall[c]):.3f} "
                f"| {p50 * 1e3:.2f} | {p50 / base:.2f} |"
            )
        for table in tables.values():
            conn.execute(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
