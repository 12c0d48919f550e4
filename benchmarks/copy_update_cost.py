"""What the trigger-kept copy of each memory's facets costs a reinforcement, at head against
an older revision (migration 0038: memory_facets; before it, 0037's memory_confidence).

    python -m benchmarks.copy_update_cost --keep DIR --database NAME [--downgrade 0037]
        [--rounds 12] [--batch 500]

`--downgrade` is 0037 or 0036, whose copy's trigger the old side names. Takes a database a
benchmark kept (e.g. `benchmarks.filtered --keep DIR`, whose database
is `m_filtered2_import_1_100000`), copies it twice (CREATE DATABASE ... TEMPLATE), and
downgrades one copy to `--downgrade`. Then, in rounds, the same batch of live memories is
updated as a reinforcement updates them (last_observed, confidence, observation_count) in
each copy, with the copy's update trigger on and off, the four in a shuffled order, each
rolled back. Reported: the backend's CPU (/proc/<pid>/schedstat) and wall time per row,
medians of the rounds; the copy's cost is the difference between on and off.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from tests.support.servers import database_url, drop_database

from benchmarks.stack import stores

ROOT = Path(__file__).resolve().parent.parent
TRIGGERS = {
    "head": "long_term_memory_facets_updated",
    "old": "long_term_memory_confidence_updated",
}
REINFORCE = (
    "UPDATE long_term_memory SET last_observed = now(), "
    "confidence = least(confidence + 0.05, 1.0), observation_count = observation_count + 1 "
    "WHERE namespace = %s AND id = ANY(%s)"
)


def _cpu_ms(pid: int) -> float:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--namespace", default="bench")
    parser.add_argument("--downgrade", default="0037")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    with stores(args.keep) as s:
        urls = {}
        for side in TRIGGERS:
            name = f"copy_cost_{side}"
            drop_database(s.server_url, name)
            with psycopg.connect(s.server_url, autocommit=True) as c:
                c.execute(f"CREATE DATABASE {name} TEMPLATE {args.database}")
            urls[side] = database_url(s.server_url, name)
        env = {**os.environ, "HINDSIGHT_DATABASE_URL": urls["old"]}
        done = subprocess.run(
            [sys.executable, "-m", "hindsight.cli.main", "db", "downgrade", args.downgrade],
            env={**env, "HINDSIGHT_DATA_DIR": str(args.keep)},
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if done.returncode:
            for side in TRIGGERS:
                drop_database(s.server_url, f"copy_cost_{side}")
            raise SystemExit(done.stderr)
        conns = {side: psycopg.connect(url, autocommit=True) for side, url in urls.items()}
        try:
            for c in conns.values():
                c.execute("VACUUM ANALYZE")
            ids = [
                r[0]
                for r in conns["head"].execute(
                    "SELECT id FROM long_term_memory WHERE namespace = %s AND live ORDER BY id",
                    (args.namespace,),
                )
            ]
            rng = random.Random(5)
            times: dict[tuple[str, bool], list[tuple[float, float]]] = {
                (side, on): [] for side in TRIGGERS for on in (True, False)
            }
            for _ in range(args.rounds):
                batch = rng.sample(ids, args.batch)
                order = list(times)
                rng.shuffle(order)
                for side, on in order:
                    c = conns[side]
                    row = c.execute("SELECT pg_backend_pid()").fetchone()
                    assert row is not None
                    with c.transaction(force_rollback=True):
                        if not on:
                            c.execute(
                                f"ALTER TABLE long_term_memory DISABLE TRIGGER {TRIGGERS[side]}"
                            )
                        cpu, wall = _cpu_ms(row[0]), time.perf_counter()
                        c.execute(REINFORCE, (args.namespace, batch))
                        times[(side, on)].append(
                            (
                                (_cpu_ms(row[0]) - cpu) / args.batch,
                                (time.perf_counter() - wall) * 1e3 / args.batch,
                            )
                        )
        finally:
            for c in conns.values():
                c.close()
            for side in TRIGGERS:
                drop_database(s.server_url, f"copy_cost_{side}")
    print(
        f"{args.rounds} rounds of {args.batch} memories of {args.database} updated as a "
        f"reinforcement; head against {args.downgrade}; medians, backend CPU (wall) ms a row\n"
    )
    print("| revision | copy trigger on | off | the copy's cost |")
    print("| --- | ---: | ---: | ---: |")
    for side in TRIGGERS:
        on = [statistics.median(x) for x in zip(*times[(side, True)], strict=True)]
        off = [statistics.median(x) for x in zip(*times[(side, False)], strict=True)]
        label = "head" if side == "head" else args.downgrade
        print(
            f"| {label} ({TRIGGERS[side]}) | {on[0]:.3f} ({on[1]:.3f}) | "
            f"{off[0]:.3f} ({off[1]:.3f}) | {on[0] - off[0]:.3f} ({on[1] - off[1]:.3f}) |"
        )


if __name__ == "__main__":
    main()
