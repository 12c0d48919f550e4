"""What a lifecycle pass costs on a large namespace.

    python -m benchmarks.lifecycle_cost --n 100000
    nice -n 10 python -m benchmarks.lifecycle_cost --n 1000000 --keep /tmp/hs-lifecycle

Loads N memories (into one namespace, or spread over `--spread` namespaces) with the path
`hindsight import` uses (BulkImporter, built-in embedder, the search indexes rebuilt after
the COPY, so both HNSW indexes and the GIN index are present during the passes, which
maintain them on every update), then times `LifecycleService.run` with an injected clock:

- **nothing due**: a real pass (no dry run) the day after the load: every rule's keyset
  scan finds nothing; the retroactive merge (`merge_per_run`) and the capacity count run too;
- **dry run, most due**: 60 days later every memory is due to cool; the dry run reads every
  candidate batch and changes nothing;
- **real pass, a share due**: the clock set so that `--share` of the memories (by their
  last observation; the import writes them in chunks, so the share is approximate) are idle
  for more than `cold_after_days`: the pass cools them, batch by batch, each batch its own
  transaction, history rows and index entries written.

Beside each, the raw SQL count of what is due (one `count(*)` over the namespace with the
rule's condition). The corpus's confidences are drawn in [0.5, 0.95] so the weekly
low-confidence rule has nothing to take and the real pass is pure cooling, and the
namespace capacity is set above N so the capacity rule does not archive (it would at 1M in
one namespace, by design). With `--keep DIR` the stores and the loaded corpus stay in DIR
and a later run reuses them (memories a previous real pass cooled are set back to active
first, outside the timings). Writes benchmarks/results/lifecycle_cost.md (one section per
corpus, merged with what is already there) and lifecycle_cost.json.

Faster loads, said so in the results: `--imported K` imports K and makes the rest SQL copies
of them (new ids and keys, the embedding's dimensions rotated per copy so no two vectors
are equal; `top_up`); `--partial` (with `--keep`) tops up what a stopped import left.
`--passes` picks passes; `--database-url` measures a loaded database whose server runs;
`--label` files the results under the corpus and a label (the schema measured, say).

With each real pass, the share of its updates that were HOT (pg_stat_user_tables); with
the raw UPDATE, the same for the newest 1,000 memories (side by side on their pages) and
for 1,000 spread over the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from tests.support.servers import create_database, database_url, drop_database

from benchmarks.corpus import Corpus
from benchmarks.stack import API_KEY, stores
from hindsight import core
from hindsight.config import Settings
from hindsight.services.bulk_import import BulkImporter, ImportItem
from hindsight.services.observing import Observation

RESULTS = Path(__file__).resolve().parent / "results"
DAY = timedelta(days=1)


def corpus_items(n: int, spread: int, seed: int = 7) -> Iterator[ImportItem]:
    rng = random.Random(seed)
    for i, m in enumerate(Corpus(seed=seed).memories(n)):
        ns = "bench" if spread == 1 else f"ns{i % spread}"
        yield ImportItem(
            ns,
            Observation(
                key=str(m["key"]),
                value=str(m["value"]),
                memory_type=str(m["memory_type"]),
                tags=tuple(m["tags"]),  # type: ignore[arg-type]
                importance=float(m["importance"]),  # type: ignore[arg-type]
                confidence=round(rng.uniform(0.5, 0.95), 2),
            ),
        )


def settings_for(n: int, root: Path) -> Settings:
    # the capacity rule would archive a 1M namespace down to the default cap of 100k
    return Settings(api_key=API_KEY, data_dir=root, namespace_capacity=max(10 * n, 100_000))


async def load(url: str, n: int, spread: int, settings: Settings) -> dict[str, Any]:
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        importer = BulkImporter(settings, hs.pool, hs.embedder, hs.observer)
        started = time.perf_counter()
        await importer.run(
            corpus_items(n, spread),
            total=n,
            import_id=f"lifecycle-cost-{uuid.uuid4()}",
            rebuild_indexes=True,
        )
        seconds = time.perf_counter() - started
        async with hs.pool.connection() as conn:
            # the load's aftermath (autovacuum's first pass, dirty pages) is not the pass's
            await conn.execute("VACUUM (ANALYZE) long_term_memory")
            await conn.execute("CHECKPOINT")
        return {"load_seconds": round(seconds, 1), "import_rate": round(n / seconds)}
    finally:
        await hs.aclose()


_COPY_COLUMNS = (
    "namespace, memory_type, mem_value, keywords, keyword_terms, confidence, importance, "
    "observation_count, source, verified, permanent, status, tags, metadata, changed_by, "
    "created_at, updated_at, last_observed, expires_at"
)


async def top_up(url: str, n: int, settings: Settings) -> dict[str, Any]:
    """Copies of the imported memories, in SQL, until there are `n`: new ids (uuidv7) and
    keys (`<key> #<copy>`), the embedding's dimensions rotated by a different offset per
    copy (so no two vectors are equal: HNSW stores equal vectors as one element), the rest
    as imported (keyword vectors repeat). The search indexes are built after, as the
    import builds them."""
    from hindsight.services.search_indexes import build_missing
    from hindsight.stores import search_indexes as index_store

    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    started = time.perf_counter()
    try:
        async with hs.pool.connection() as conn:
            await conn.set_autocommit(True)
            cur = await conn.execute("SELECT count(*) AS n FROM long_term_memory")
            row = await cur.fetchone()
            imported = int(row["n"]) if row else 0
            if imported < n:  # copies to write: without the search indexes, built after
                for name in await index_store.present(conn):
                    await index_store.drop(conn, name)
            have, copy = imported, 0
            while have < n:
                copy += 1
                shift = (37 * copy) % hs.embedder.dimensions
                cur = await conn.execute(
                    f"INSERT INTO long_term_memory (id, mem_key, embedding, {_COPY_COLUMNS}) "
                    f"SELECT uuidv7(), mem_key || ' #' || %(copy)s::text, "
                    f"((embedding::vector::real[])[%(shift)s + 1:] "
                    f"|| (embedding::vector::real[])[1:%(shift)s])::halfvec, {_COPY_COLUMNS} "
                    "FROM long_term_memory WHERE mem_key NOT LIKE '%% #%%' "
                    "ORDER BY id LIMIT %(need)s",
                    {"copy": copy, "shift": shift, "need": n - have},
                )
                have += cur.rowcount
                print(f"  copy {copy}: {have:,} memories", flush=True)
            copied_seconds = time.perf_counter() - started
            await build_missing(conn, hs.embedder.dimensions, settings.index_build_memory_mb)
            await conn.execute("VACUUM (ANALYZE) long_term_memory")
            await conn.execute("CHECKPOINT")
    finally:
        await hs.aclose()
    return {
        "imported": imported,
        "copied": have - imported,
        "copy_seconds": round(copied_seconds, 1),
        "copy_and_index_seconds": round(time.perf_counter() - started, 1),
    }


def loaded(
    root: Path,
    server_url: str,
    n: int,
    spread: int,
    settings: Settings,
    *,
    imported: int,
    partial: bool,
) -> tuple[str, dict[str, Any]]:
    """The corpus: `imported` memories through the import path, the rest (if any) copies
    of them (`top_up`). With `partial`, a kept corpus whose import was stopped keeps the
    memories it has and is topped up."""
    name = f"lifecycle_{n}_{spread}"
    record = root / f"{name}.json"
    if not record.exists():  # never loaded here, or a load that did not finish
        numbers: dict[str, Any] = {}
        if partial:
            url = database_url(server_url, name)
            numbers["note"] = "a stopped import's memories, topped up with copies"
        else:
            drop_database(server_url, name)
            url = create_database(server_url, name)
            print(f"[{n:,}/{spread}] loading {imported:,} into {root} ...", flush=True)
            numbers = asyncio.run(load(url, imported, spread, settings))
        if imported < n or partial:
            print(f"[{n:,}/{spread}] topping up to {n:,} ...", flush=True)
            numbers["top_up"] = asyncio.run(top_up(url, n, settings))
        record.write_text(json.dumps(numbers))
    return database_url(server_url, name), json.loads(record.read_text())


def restore(url: str) -> None:
    """Undo an earlier run's real pass on a kept corpus (not timed)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM long_term_memory WHERE status <> 'active'"
        ).fetchone()
        if row and row[0]:
            print(f"restoring {row[0]:,} memories to active ...", flush=True)
            conn.execute("UPDATE long_term_memory SET status = 'active' WHERE status <> 'active'")
            conn.execute("DELETE FROM memory_history WHERE actor = 'lifecycle'")
            conn.execute("VACUUM (ANALYZE) long_term_memory")
            conn.execute("CHECKPOINT")
        conn.execute("DELETE FROM namespace_lifecycle")
        conn.execute("DELETE FROM hindsight_meta WHERE name = 'lifecycle_last_run'")


def idle_bounds(url: str) -> tuple[datetime, datetime]:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT min(last_observed), max(last_observed) FROM long_term_memory"
        ).fetchone()
    assert row is not None
    return row[0], row[1]


def clock_for_share(url: str, share: float, cold_after: timedelta) -> datetime:
    """The clock at which about `share` of the memories have been idle for `cold_after`."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT percentile_disc(%s) WITHIN GROUP (ORDER BY last_observed) "
            "FROM long_term_memory",
            (share,),
        ).fetchone()
    assert row is not None
    return row[0] + cold_after + timedelta(microseconds=1)


def raw_due(url: str, now: datetime, cold_after: timedelta) -> tuple[int, float]:
    """count(*) of what the cooling rule would move, as one statement, and its seconds."""
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        row = conn.execute(
            "SELECT count(*) FROM long_term_memory m "
            "LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id "
            "WHERE m.status = 'active' AND NOT m.permanent "
            "AND greatest(m.last_observed, coalesce(a.last_accessed, m.last_observed)) < %s",
            (now - cold_after,),
        ).fetchone()
        seconds = time.perf_counter() - started
    assert row is not None
    return int(row[0]), seconds


_RAW_PICKS = {
    # the newest: side by side on their pages, as a real pass's batch takes them
    False: "ORDER BY id DESC",
    # spread over the table, at most one or two a page, as recalls warm them
    True: "ORDER BY md5(id::text)",
}


def raw_update(
    url: str, rows: int = 1000, *, without_hnsw: bool = False, scattered: bool = False
) -> tuple[int, float]:
    """Rows/s of one plain UPDATE setting `rows` active memories cold (the history trigger
    firing, every index maintained, as for a move), rolled back: the statement alone,
    without the scheduler's selection, batching, rounds and re-check; and the share of
    them that were HOT updates (no index entry written). `without_hnsw`: with both HNSW
    indexes dropped in the same (rolled back) transaction, to see their share.
    `scattered`: memories spread over the table instead of the newest."""
    # a connection of its own: the transaction's counters hold this statement's alone
    with psycopg.connect(url) as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM long_term_memory WHERE status = 'active' "
                f"{_RAW_PICKS[scattered]} LIMIT %s",
                (rows,),
            ).fetchall()
        ]
        if without_hnsw:
            conn.execute("DROP INDEX ix_long_term_memory_embedding")
            conn.execute("DROP INDEX IF EXISTS ix_long_term_memory_keywords")  # before 0040
        started = time.perf_counter()
        conn.execute(
            "UPDATE long_term_memory m SET status = 'cold', changed_by = 'bench', "
            "updated_at = now() WHERE m.id = ANY(%s) "
            "AND set_config('hindsight.reason', 'raw update', true) IS NOT NULL",
            (ids,),
        )
        seconds = time.perf_counter() - started
        row = conn.execute(
            "SELECT pg_stat_get_xact_tuples_hot_updated('long_term_memory'::regclass)"
        ).fetchone()
        conn.rollback()
    with psycopg.connect(url, autocommit=True) as conn:
        # the rolled-back versions hold the room a later measurement would use
        conn.execute("VACUUM long_term_memory")
    return round(len(ids) / seconds), round(int(row[0]) / len(ids), 3) if row else 0.0


def raw_update_rate(url: str, rows: int = 1000, *, without_hnsw: bool = False) -> float:
    return raw_update(url, rows, without_hnsw=without_hnsw)[0]


def raw_updates(url: str, *, without_hnsw: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scattered, name in ((False, "raw_update"), (True, "raw_update_scattered")):
        rate, hot = raw_update(url, scattered=scattered)
        out |= {f"{name}_rows_per_s": rate, f"{name}_hot_share": hot}
    if without_hnsw:
        out["raw_update_without_hnsw_rows_per_s"] = raw_update_rate(url, without_hnsw=True)
    print(f"raw UPDATE: {out}", flush=True)
    return out


def table_updates(url: str) -> tuple[int, int]:
    """long_term_memory's (updates, HOT updates) in the statistics so far."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
            "WHERE relname = 'long_term_memory'"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def hot_share_since(url: str, before: tuple[int, int], updates: int) -> float | None:
    """The HOT share of the `updates` updates made since `before` (the statistics reach
    the shared counters a moment after the transactions, so this waits for them)."""
    deadline = time.monotonic() + 30
    while (after := table_updates(url))[0] - before[0] < updates:
        if time.monotonic() > deadline:
            return None
        time.sleep(0.2)
    done = after[0] - before[0]
    return round((after[1] - before[1]) / done, 3) if done else None


async def timed_pass(url: str, settings: Settings, now: datetime, dry_run: bool) -> dict[str, Any]:
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        started = time.perf_counter()
        report = await hs.lifecycle.run(now=now, dry_run=dry_run)
        seconds = time.perf_counter() - started
    finally:
        await hs.aclose()
    assert report.ran, "another lifecycle pass held the lock"
    moves = report.counts.total()
    return {
        "seconds": round(seconds, 2),
        "moves": moves,
        "counts": dict(report.counts),
        "moves_per_s": round(moves / seconds) if seconds else None,
    }


KINDS = ("nothing_due", "nothing_due_dry_run", "dry_run", "real_pass")


def measure(
    url: str, n: int, settings: Settings, share: float, kinds: tuple[str, ...] = KINDS
) -> dict[str, Any]:
    cold_after = timedelta(days=settings.cold_after_days)
    first, last = idle_bounds(url)
    quiet = last + DAY  # the day after the load: nothing is due
    later = last + 60 * DAY  # everything is due to cool
    # the real pass: about `share` due, the day after the quiet pass at the earliest
    at = max(clock_for_share(url, share, cold_after), quiet + DAY)
    plan = {
        "nothing_due": (quiet, False),
        "nothing_due_dry_run": (quiet, True),
        "dry_run": (later, True),
        "real_pass": (at, False),
    }
    out: dict[str, Any] = {}
    for kind in kinds:
        now, dry_run = plan[kind]
        print(f"{kind} ...", flush=True)
        due, due_seconds = raw_due(url, now, cold_after)
        before = table_updates(url)
        out[kind] = asyncio.run(timed_pass(url, settings, now, dry_run=dry_run))
        out[kind].update(
            raw_due=due,
            raw_seconds=round(due_seconds, 2),
            seconds_per_100k=round(out[kind]["seconds"] * 100_000 / n, 2),
        )
        if not dry_run and out[kind]["moves"]:
            out[kind]["hot_share"] = hot_share_since(url, before, out[kind]["moves"])
        print(out[kind], flush=True)
    if "real_pass" in kinds:
        out |= raw_updates(url)
    out["load_span_seconds"] = round((last - first).total_seconds(), 1)
    return out


def _share(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def write_results(key: str, result: dict[str, Any]) -> str:
    """Merge `result` into lifecycle_cost.json (its passes into those measured before) and
    rewrite lifecycle_cost.md from it."""
    data_path = RESULTS / "lifecycle_cost.json"
    data = json.loads(data_path.read_text()) if data_path.exists() else {}
    if key in data:
        passes = {**data[key].get("passes", {}), **result.get("passes", {})}
        result = {**data[key], **result, "passes": passes}
    data[key] = result
    data_path.write_text(json.dumps(data, indent=1, default=str))
    lines = [
        "# Lifecycle scheduler cost",
        "",
        "`python -m benchmarks.lifecycle_cost`: 2 cores shared with other work, PostgreSQL 18 +",
        "pgvector (embedded, tuned), built-in embedder (384-d); memories loaded with the bulk",
        "import path, both HNSW indexes and the GIN index present (unless a note below says",
        "otherwise). Batch size `lifecycle_batch_size` = 1000, each batch its own",
        "transaction (after 0020, cooling takes a transaction per round of at most one row",
        "a page); default policy (cold after 30 days), capacity set above N. Seconds are",
        "wall-clock for one `LifecycleService.run` (all namespaces) with an injected clock;",
        "raw SQL is one `count(*)` of what the cooling rule would move. HOT: the share of",
        "the pass's updates that were HOT (no index entry written; pg_stat_user_tables).",
        "A corpus named `after 0020` is measured on the schema of migration 0020 (tier moves",
        "as HOT updates), the others on the schema before it.",
        "",
        "| corpus | pass | seconds | moves | moves/s | HOT | s per 100k memories "
        "| s per 100k moved | raw count(*) due | raw s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    names = {
        "nothing_due_dry_run": "dry run, nothing due",
        "nothing_due": "real pass, nothing due",
        "dry_run": "dry run, all due to cool",
        "real_pass": "real pass, a share cooled",
    }
    for corpus, r in sorted(data.items(), key=lambda kv: (kv[1]["spread"], kv[1]["n"])):
        for kind, label in names.items():
            p = r["passes"].get(kind)
            if p is None:
                lines.append(f"| {corpus} | {label} | not measured | | | | | | | |")
                continue
            per_moved = round(p["seconds"] * 100_000 / p["moves"]) if p["moves"] else "—"
            lines.append(
                f"| {corpus} | {label} | {p['seconds']} | {p['moves']:,} | "
                f"{p['moves_per_s'] or '—'} | {_share(p.get('hot_share'))} | "
                f"{p['seconds_per_100k']} | {per_moved} | {p['raw_due']:,} | {p['raw_seconds']} |"
            )
    lines += [
        "",
        "One plain `UPDATE` of 1,000 active memories to cold (history trigger and every",
        "index maintained, rolled back), rows/s and HOT share: the newest 1,000 (side by",
        "side on their pages, as a pass's batch takes them, but in one statement: no rounds),",
        "1,000 spread over the table (as recalls warm them), and the newest with both HNSW",
        "indexes dropped in the same rolled-back transaction:",
        "",
        "| corpus | newest rows/s | HOT | spread rows/s | HOT | newest, no HNSW, rows/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for corpus, r in sorted(data.items(), key=lambda kv: (kv[1]["spread"], kv[1]["n"])):
        p = r["passes"]
        lines.append(
            f"| {corpus} | {p.get('raw_update_rows_per_s', '—')} | "
            f"{_share(p.get('raw_update_hot_share'))} | "
            f"{p.get('raw_update_scattered_rows_per_s', '—')} | "
            f"{_share(p.get('raw_update_scattered_hot_share'))} | "
            f"{p.get('raw_update_without_hnsw_rows_per_s', '—')} |"
        )
    for corpus, r in sorted(data.items(), key=lambda kv: (kv[1]["spread"], kv[1]["n"])):
        if r.get("note"):
            lines += ["", f"{corpus}: {r['note']}"]
    lines += ["", "Loads (not part of the passes):", ""]
    for corpus, r in sorted(data.items(), key=lambda kv: (kv[1]["spread"], kv[1]["n"])):
        load = r.get("load", {})
        parts = []
        if "load_seconds" in load:
            parts.append(
                f"{load['load_seconds']} s ({load['import_rate']} memories/s, bulk import "
                "+ index rebuild)"
            )
        if "top_up" in load:
            t = load["top_up"]
            parts.append(
                f"{t['imported']:,} imported, {t['copied']:,} SQL copies of them "
                f"(new ids and keys, embedding dimensions rotated per copy, keyword vectors "
                f"repeated) in {t['copy_seconds']} s, then the search indexes built: "
                f"{t['copy_and_index_seconds']} s in all"
            )
        lines.append(f"- {corpus}: " + ("; ".join(parts) or "see the note above"))
    text = "\n".join(lines) + "\n"
    (RESULTS / "lifecycle_cost.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--spread", type=int, default=1, help="namespaces to spread over")
    parser.add_argument("--share", type=float, default=0.5, help="share the real pass cools")
    parser.add_argument("--keep", type=Path, help="keep the stores and the corpus here")
    parser.add_argument(
        "--imported",
        type=int,
        help="import only this many through the import path, the rest SQL copies of them",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="with --keep: top up the memories a stopped import left instead of reloading",
    )
    parser.add_argument("--load-only", action="store_true")
    parser.add_argument(
        "--raw-update-only",
        action="store_true",
        help="on a kept corpus already measured: only the raw UPDATE rate, merged in",
    )
    parser.add_argument(
        "--database-url",
        help="measure this database (loaded before, its server running) instead of loading",
    )
    parser.add_argument(
        "--passes", default=",".join(KINDS), help=f"which passes, of {', '.join(KINDS)}"
    )
    parser.add_argument("--note", help="a note on this corpus's measurement, in the results")
    parser.add_argument(
        "--label", help="results under the corpus name and this (e.g. the schema measured)"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    kinds = tuple(k for k in args.passes.split(",") if k)
    key = f"{args.n:,}" + (f" in {args.spread:,} namespaces" if args.spread > 1 else "")
    key += f" {args.label}" if args.label else ""
    result: dict[str, Any] = {"n": args.n, "spread": args.spread, "share": args.share}
    if args.note:
        result["note"] = args.note
    if args.database_url:
        settings = settings_for(args.n, Path("."))
        if args.raw_update_only:
            result["passes"] = raw_updates(args.database_url, without_hnsw=True)
        else:
            result["passes"] = measure(args.database_url, args.n, settings, args.share, kinds)
        print(write_results(key, result))
        return
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    with stores(args.keep) as s:
        settings = settings_for(args.n, s.root)
        url, result["load"] = loaded(
            s.root,
            s.server_url,
            args.n,
            args.spread,
            settings,
            imported=args.imported or args.n,
            partial=args.partial,
        )
        if args.load_only:
            print(result["load"])
            return
        if args.raw_update_only:
            result["passes"] = raw_updates(url, without_hnsw=True)
        else:
            if {"dry_run", "real_pass"} & set(kinds):  # these need every memory active
                restore(url)
            result["passes"] = measure(url, args.n, settings, args.share, kinds)
        if args.keep is None:
            drop_database(s.server_url, f"lifecycle_{args.n}_{args.spread}")
    print(write_results(key, result))


if __name__ == "__main__":
    main()
