"""What a written memory costs, piece by piece, and the write paths old against new
(issue 33 item 3).

Two trees side by side: this one and an older checkout (`--base`, e.g. `git archive main |
tar -x -C /tmp/main-base`), each with a database of its own on one embedded PostgreSQL
server, loaded the same way: N memories of the Zipf corpus (benchmarks/corpora.py) in one
namespace through `hindsight import`, timed (the bulk path's rate).

1. The breakdown. For each piece of what an INSERT does (an index, a trigger), a copy of
   the loaded database (CREATE DATABASE ... TEMPLATE) without that piece takes the same
   rows by plain INSERT, 500 a statement and a transaction each, as the batch call writes
   them; the piece's cost is what its absence saves. Measured as the backend's CPU time
   (/proc/<pid>/schedstat), which the other processes on a busy machine disturb far less
   than wall time; wall time is printed beside it. "floor" drops every piece.
2. The batch API: both services running (uvicorn, one worker each, the tree's own code),
   batches of new memories sent to one then the other, in turns, order alternating; then
   the same batches again (every memory reinforced). Memories/s per side and the ratio.

    python -m benchmarks.write_cost [--n 20000] [--rows 1000] [--rounds 2] [--base DIR]
        [--side LABEL=DIR ...] [--batches 6] [--batch 500] [--keep DIR]

`--side LABEL=DIR` (repeatable) names the trees to compare instead of old = `--base` and
new = this tree, e.g. `--side main=/tmp/base-w --side branch=.`; the first is the one the
others are divided by. `--rounds 0` skips the breakdown (the write paths alone).

Writes benchmarks/results/write_cost.md and write_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from tests.support.servers import database_url, drop_database, spawn_server

from benchmarks.corpora import Zipf
from benchmarks.stack import API_KEY, stores
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import document_vector
from hindsight.text import memory_text

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
NS = "bench"

# What a side's database is loaded by, run with that side's code (python -c): the import
# path as `hindsight import` runs it, then what a live service would have done long before
# anything is timed (autovacuum's pass, a checkpoint).
_LOAD = """
import asyncio, json, sys, time, uuid
from benchmarks.corpora import Zipf
from hindsight import core
from hindsight.config import Settings
from hindsight.services.bulk_import import BulkImporter, ImportItem
from hindsight.services.observing import Observation
from tests.support.servers import create_database

async def load(url, n):
    settings = Settings(api_key="x" * 20)
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
        items = (ImportItem("bench", Observation(key=m["key"], value=m["value"]))
                 for m in Zipf().memories(n))
        start = time.perf_counter()
        await importer.run(items, total=n, import_id=str(uuid.uuid4()), rebuild_indexes=True)
        rate = n / (time.perf_counter() - start)
        async with hs.pool.connection() as conn:
            await conn.execute("VACUUM (ANALYZE) long_term_memory")
            await conn.execute("CHECKPOINT")
        return rate
    finally:
        await hs.aclose()

url = create_database(sys.argv[1], sys.argv[2])
print(json.dumps({"import_rate": round(asyncio.run(load(url, int(sys.argv[3]))))}))
"""

_OTHER_BTREES = (
    "ix_long_term_memory_occurred",
    "ix_long_term_memory_created",
    "ix_long_term_memory_expires_at",
    "ix_long_term_memory_quarantined_key",
)
# piece -> what removes it from a copy (an index the side does not have is skipped)
PIECES: dict[str, list[str]] = {
    "HNSW on the embedding": ["DROP INDEX ix_long_term_memory_embedding"],
    "HNSW on the keyword vector": ["DROP INDEX ix_long_term_memory_keywords"],
    # before migration 0035: the postings on long_term_memory itself
    "GIN keyword postings": ["DROP INDEX ix_long_term_memory_keyword_terms"],
    # from 0035: the narrow copy's row, its key and its GIN postings, written by a trigger
    "keyword copy (memory_keywords: row, key, GIN postings)": [
        "ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_keywords_inserted"
    ],
    # from 0036: each memory's confidence, its key and its index, written by a trigger
    "confidence copy (memory_confidence: row, key, index)": [
        "ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_confidence_inserted"
    ],
    # from 0038, in its place: the confidence, importance and last observation, three indexes
    "facets copy (memory_facets: row, key, three indexes)": [
        "ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_facets_inserted"
    ],
    "GIN labels": ["DROP INDEX ix_long_term_memory_labels"],
    "other b-trees (time windows, expiry, quarantine)": [
        f"DROP INDEX {name}" for name in _OTHER_BTREES
    ],
    "history + keyword statistics trigger": [
        "ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_inserted"
    ],
    "label statistics trigger": [
        "ALTER TABLE long_term_memory DISABLE TRIGGER long_term_memory_labels_inserted"
    ],
}
ALL = "everything (as deployed)"
FLOOR = "floor (heap, primary key, one-live-key index)"

_INSERT = (
    "INSERT INTO long_term_memory (id, namespace, mem_key, mem_value, memory_type, embedding, "
    "keywords, keyword_terms, confidence, importance, tags, metadata) "
    "SELECT gen_random_uuid(), 'bench', x.k, x.v, 'fact', x.e, x.s, x.t::int[], 0.5, 0.5, "
    "'{}', '{}' FROM unnest(%s::text[], %s::text[], %s::halfvec[], %s::sparsevec[], "
    "%s::text[]) AS x(k, v, e, s, t)"
)


def fresh_memories(n: int, seed: int, prefix: str) -> list[dict[str, str]]:
    """Memories the corpus does not hold (new keys, new texts from the same vocabulary)."""
    z = Zipf()
    rng = random.Random(seed)
    return [{"key": f"{prefix}.{i}", "value": z._text(rng, 6, 24)} for i in range(n)]


def _rows(memories: list[dict[str, str]]) -> list[tuple[Any, ...]]:
    embedder = BuiltinEmbedder()
    out = []
    for m in memories:
        text = memory_text(m["key"], m["value"])
        keywords, terms = document_vector(text)
        out.append((m["key"], m["value"], HalfVector(embedder.embed_one(text)), keywords, terms))
    return out


def _cpu_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def _has(conn: psycopg.Connection[Any], statement: str) -> bool:
    if statement.startswith("DROP INDEX "):
        name = statement.split()[-1]
        return conn.execute("SELECT to_regclass(%s)", (name,)).fetchone() != (None,)
    if " DISABLE TRIGGER " in statement:
        name = statement.split()[-1]
        found = conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname = %s", (name,))
        return found.fetchone() != (0,)
    return True


def piece_cost(
    server: str, template: str, remove: list[str], rows: list[tuple[Any, ...]], batch: int
) -> tuple[float, float] | None:
    """(CPU, wall) ms per row of inserting `rows` into a copy of `template` without the
    piece; None when the side has no such piece."""
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS write_cost_scratch WITH (FORCE)")
        conn.execute(f"CREATE DATABASE write_cost_scratch TEMPLATE {template}")  # type: ignore[arg-type]
    try:
        with psycopg.connect(database_url(server, "write_cost_scratch"), autocommit=True) as c:
            register_vector(c)
            present = [s for s in remove if _has(c, s)]
            if remove and not present:
                return None
            for statement in present:
                c.execute(statement)  # type: ignore[arg-type]
            c.execute("CHECKPOINT")  # each copy starts from the same state of its pages
            row = c.execute("SELECT pg_backend_pid()").fetchone()
            assert row is not None
            pid = row[0]
            cpu, start = _cpu_ns(pid), time.perf_counter()
            for i in range(0, len(rows), batch):
                part = rows[i : i + batch]
                with c.transaction():
                    c.execute(
                        _INSERT,
                        (
                            [r[0] for r in part],
                            [r[1] for r in part],
                            [r[2] for r in part],
                            [r[3] for r in part],
                            ["{" + ",".join(map(str, r[4])) + "}" for r in part],
                        ),
                    )
            wall = time.perf_counter() - start
            used = (_cpu_ns(pid) - cpu) / 1e9
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS write_cost_scratch WITH (FORCE)")
    return used * 1000 / len(rows), wall * 1000 / len(rows)


def breakdown(
    server: str, templates: dict[str, str], rows: list[tuple[Any, ...]], rounds: int, batch: int
) -> dict[str, dict[str, dict[str, float]]]:
    """side -> piece -> {"cpu": ms, "wall": ms} (medians over rounds; sides and pieces in
    a shuffled order each round)."""
    every = [s for statements in PIECES.values() for s in statements]
    cases = {ALL: [], **PIECES, FLOOR: every}
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in range(rounds):
        jobs = [(side, piece) for side in templates for piece in cases]
        random.Random(r).shuffle(jobs)
        for side, piece in jobs:
            got = piece_cost(server, templates[side], cases[piece], rows, batch)
            if got is None:
                continue
            samples.setdefault((side, piece), []).append(got)
            print(f"  round {r} {side:>3} {piece:<50} cpu {got[0]:6.2f} wall {got[1]:6.2f} ms/row")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (side, piece), xs in samples.items():
        out.setdefault(side, {})[piece] = {
            "cpu": round(statistics.median(x[0] for x in xs), 3),
            "wall": round(statistics.median(x[1] for x in xs), 3),
        }
    return out


def load_side(server: str, tree: Path, name: str, n: int) -> dict[str, Any]:
    drop_database(server, name)
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}:{tree}"}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, server, name, str(n)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"loading {name} with {tree} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _service(tree: Path, url: str, redis_url: str) -> tuple[subprocess.Popen[bytes], str]:
    env = {
        "PYTHONPATH": f"{tree / 'src'}:{tree}",
        "HINDSIGHT_DATABASE_URL": url,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_API_KEY": API_KEY,
        "HINDSIGHT_LOG_LEVEL": "warning",
    }
    return spawn_server(env, ready_path="/readyz", timeout=180)


def batch_api(
    server: str,
    redis_url: str,
    trees: dict[str, Path],
    templates: dict[str, str],
    batches: int,
    batch: int,
) -> dict[str, dict[str, float]]:
    """Memories/s of the batch call per side: new memories, then the same again
    (reinforced), one batch a turn, the sides alternating which goes first."""
    procs = {}
    try:
        for side, tree in trees.items():
            name = f"write_cost_api_{side}"
            drop_database(server, name)
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name} TEMPLATE {templates[side]}")  # type: ignore[arg-type]
            procs[side] = _service(tree, database_url(server, name), redis_url)
        memories = fresh_memories(batches * batch, seed=47, prefix="api")
        seconds: dict[tuple[str, str], float] = {}
        for phase in ("new", "reinforced"):
            for i in range(batches):
                part = memories[i * batch : (i + 1) * batch]
                order = list(trees) if i % 2 == 0 else list(reversed(trees))
                for side in order:
                    with httpx.Client(
                        base_url=procs[side][1],
                        headers={"Authorization": f"Bearer {API_KEY}"},
                        timeout=600,
                    ) as client:
                        start = time.perf_counter()
                        r = client.post(
                            f"/v1/namespaces/{NS}/memories:batch", json={"memories": part}
                        )
                        took = time.perf_counter() - start
                    assert r.status_code in (200, 201), r.text
                    outcomes = {x["outcome"] for x in r.json()["results"]}
                    print(f"  {phase} batch {i} {side:>3}: {len(part) / took:6.1f}/s {outcomes}")
                    seconds[(side, phase)] = seconds.get((side, phase), 0.0) + took
        return {
            side: {
                phase: round(batches * batch / seconds[(side, phase)], 1)
                for phase in ("new", "reinforced")
            }
            for side in trees
        }
    finally:
        for proc, _ in procs.values():
            proc.terminate()
            proc.wait(timeout=60)
        for side in trees:
            drop_database(server, f"write_cost_api_{side}")


def report(out: dict[str, Any]) -> str:
    pieces = out["breakdown"]
    sides: list[str] = out["sides"]
    first = sides[0]
    trees = ", ".join(f"{side} = {out['trees'][side]}" for side in sides)
    lines = [
        "# What a written memory costs (issue 33 item 3)",
        "",
        f"`python -m benchmarks.write_cost --n {out['n']} --rows {out['rows']} "
        f"--rounds {out['rounds']}`: {out['n']:,} Zipf memories in one namespace, loaded by "
        f"`hindsight import`; {trees}. Load average "
        f"{out['load_before']} before, {out['load_after']} after.",
        "",
    ]
    if out["rounds"] > 0:
        lines += [
            "## Per written memory, by piece (backend CPU ms; wall ms in brackets)",
            "",
            "Each piece's cost is what removing it from a copy of the loaded table saves on "
            f"{out['rows']:,} rows inserted 500 a statement (median of the rounds).",
            "",
            "| piece | " + " | ".join(sides) + " |",
            "| --- |" + " ---: |" * len(sides),
        ]

    def cell(side: str, piece: str) -> str:
        here = pieces.get(side, {})
        if piece not in here:
            return "—"
        if piece in (ALL, FLOOR):
            return f"{here[piece]['cpu']:.2f} ({here[piece]['wall']:.2f})"
        saves = here[ALL]["cpu"] - here[piece]["cpu"]
        saves_wall = here[ALL]["wall"] - here[piece]["wall"]
        return f"{saves:.2f} ({saves_wall:.2f})"

    if out["rounds"] > 0:
        for piece in (ALL, *PIECES, FLOOR):
            lines.append(f"| {piece} | " + " | ".join(cell(side, piece) for side in sides) + " |")
        lines.append("")
    api = out["batch_api"]
    others = sides[1:]
    lines += [
        f"## Write paths, side by side (memories/s; × against {first})",
        "",
        "| path | " + " | ".join(sides) + "".join(f" | {o}/{first}" for o in others) + " |",
        "| --- |" + " ---: |" * (len(sides) + len(others)),
    ]
    rows: list[tuple[str, dict[str, float]]] = [
        (
            "`hindsight import` of the corpus (loaded in turn, not interleaved)",
            {side: out["import"][side]["import_rate"] for side in sides},
        )
    ]
    for phase in ("new", "reinforced"):
        rows.append(
            (
                f"batch API, {out['batches']} × {out['batch']} {phase} memories",
                {side: api[side][phase] for side in sides},
            )
        )
    for label, rates in rows:
        lines.append(
            f"| {label} | "
            + " | ".join(str(rates[side]) for side in sides)
            + "".join(f" | {rates[o] / rates[first]:.2f}" for o in others)
            + " |"
        )
    return "\n".join(lines) + "\n"


def _load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20_000, help="memories loaded first")
    parser.add_argument("--rows", type=int, default=1000, help="rows inserted per piece")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--base", type=Path, default=Path("/tmp/main-base"))
    parser.add_argument("--base-label", default="main")
    parser.add_argument(
        "--side",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="a source tree to measure (repeatable; replaces --base and this tree)",
    )
    parser.add_argument("--keep", type=Path, help="keep the loaded databases here")
    args = parser.parse_args()
    trees = {"old": args.base.resolve(), "new": ROOT}
    labels = {"old": args.base_label, "new": "this tree"}
    if args.side:
        trees, labels = {}, {}
        for spec in args.side:
            label, _, tree = spec.partition("=")
            if not re.fullmatch(r"[a-z][a-z0-9_]*", label) or not tree:
                parser.error(f"--side wants LABEL=DIR (LABEL in [a-z0-9_]), not {spec!r}")
            trees[label] = Path(tree).resolve()
            labels[label] = str(trees[label])
    out: dict[str, Any] = {
        "n": args.n,
        "rows": args.rows,
        "rounds": args.rounds,
        "batches": args.batches,
        "batch": args.batch,
        "sides": list(trees),
        "trees": labels,
        "load_before": _load_average(),
    }
    with stores(args.keep) as s:
        templates = {side: f"write_cost_{side}_{args.n}" for side in trees}
        out["import"] = {}
        for side, tree in trees.items():
            record = s.root / f"{templates[side]}.json"
            if args.keep is None or not record.exists():
                print(f"[{side}] importing {args.n:,} memories with {tree} ...", flush=True)
                record.write_text(
                    json.dumps(load_side(s.server_url, tree, templates[side], args.n))
                )
            out["import"][side] = json.loads(record.read_text())
            print(f"[{side}] {out['import'][side]}", flush=True)
        out["breakdown"] = {}
        if args.rounds > 0:
            rows = _rows(fresh_memories(args.rows, seed=41, prefix="raw"))
            print("breakdown ...", flush=True)
            out["breakdown"] = breakdown(s.server_url, templates, rows, args.rounds, 500)
        print("batch API ...", flush=True)
        out["batch_api"] = batch_api(
            s.server_url, s.redis_url, trees, templates, args.batches, args.batch
        )
        if args.keep is None:
            for name in templates.values():
                drop_database(s.server_url, name)
    out["load_after"] = _load_average()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "write_cost.json").write_text(json.dumps(out, indent=1))
    text = report(out)
    (RESULTS / "write_cost.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
