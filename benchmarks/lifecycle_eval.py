"""The lifecycle's ranking factors measured: R@k and MRR with recency and importance on and off.

    python -m benchmarks.lifecycle_eval

The retrieval evaluation's corpus (benchmarks/eval_data.py) gets ages (last observation
spread over the past 200 days) and two more kinds of question:

- `temporal`: a topic with an old memory under one key (observed ~300 days ago) and a
  current one under another (observed days ago); "what is my X these days?" wants the
  current one.
- `what_matters`: an important memory (importance 0.9) and a trivial one (0.1) about the
  same thing; "what should I know about X?" wants the important one.

Each variant is a namespace policy (`ranking.recency_weight`, `ranking.importance_weight`),
set through the service and applied by its own ranking; nothing is recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

import psycopg

from benchmarks.eval_data import EvalSet, Question, build
from benchmarks.retrieval_eval import KS, RESULTS, database, metrics
from hindsight import core
from hindsight.config import Settings
from hindsight.db import migrate
from hindsight.embeddings import create_embedder
from hindsight.runtime.embedded_postgres import embedded_postgres
from hindsight.services.observing import Observation
from hindsight.services.recall import RecallRequest
from hindsight.wire.policy import Policy

TOPICS = {
    "gym": ["Iron Temple", "FitHub", "Core Studio", "Pulse Gym"],
    "dentist": ["Dr. Moreau", "Dr. Lindqvist", "Dr. Okafor", "Dr. Brandt"],
    "barber": ["Sharp Cuts", "The Chair", "Blade Room", "Fade Lab"],
    "landlord": ["Mrs. Keller", "Mr. Duarte", "Ms. Haddad", "Mr. Novak"],
    "bank": ["Northbank", "Credo", "Unity Savings", "Fjord Bank"],
    "internet provider": ["FiberNet", "SkyLink", "Wavecom", "Telio"],
    "team lead": ["Priya", "Tomasz", "Ingrid", "Kwame"],
    "running route": ["the river loop", "the park circuit", "the harbour path", "the hill trail"],
    "coffee shop": ["Bean There", "Daily Grind", "Kaffe Nord", "The Roastery"],
    "car": ["a grey Golf", "a blue Civic", "a red Polo", "a white Yaris"],
    "piano teacher": ["Ms. Adler", "Mr. Sato", "Ms. Rossi", "Mr. Weber"],
    "yoga class": ["Monday mornings", "Tuesday evenings", "Thursday lunch", "Saturday mornings"],
    "phone plan": ["Basic 5GB", "Unlimited Plus", "Family 20GB", "Travel 10GB"],
    "book club": ["the Tuesday circle", "the library group", "the wine readers", "Page Turners"],
    "project": ["the billing rewrite", "the mobile app", "the data platform", "the search revamp"],
    "doctor": ["Dr. Hale", "Dr. Nguyen", "Dr. Petrov", "Dr. Costa"],
}
MATTERS = [
    (
        "peanuts",
        "Alex is severely allergic to peanuts and carries an EpiPen",
        "Alex once saw a poster about peanuts at a fair",
    ),
    (
        "penicillin",
        "Alex must never be given penicillin: it causes anaphylaxis",
        "Alex read a magazine article on the history of penicillin",
    ),
    (
        "the passport",
        "Alex's passport expires next month and must be renewed before travel",
        "Alex's passport photo was taken in a booth at the station",
    ),
    (
        "the mortgage",
        "Alex's mortgage payment of 1,400 is due on the 1st of every month",
        "Alex heard a radio show about mortgages last spring",
    ),
    (
        "insulin",
        "Alex's daughter needs insulin twice a day; the pens are in the fridge",
        "Alex once watched a documentary that mentioned insulin",
    ),
    (
        "the car brakes",
        "Alex's car brakes are failing and must be repaired before driving",
        "Alex noticed the car brakes squeak a little in the rain",
    ),
    (
        "the server password",
        "The production server password rotates every Friday; Alex must update the vault",
        "Alex thinks the server password screen has an ugly font",
    ),
    (
        "the flight",
        "Alex's flight to Oslo leaves at 6:10 from terminal 2 on Monday",
        "Alex likes looking at flight paths on a map app",
    ),
    (
        "the contract",
        "Alex must sign the new employment contract by Friday or lose the offer",
        "Alex's contract folder is blue",
    ),
    (
        "the dog",
        "Alex's dog must not eat chocolate; it nearly died last year",
        "Alex's dog likes the squeaky duck toy",
    ),
]
VARIANTS = {
    "baseline (weights 0)": {},
    "recency 0.3": {"recency_weight": 0.3},
    "recency 0.6": {"recency_weight": 0.6},
    "importance 0.3": {"importance_weight": 0.3},
    "importance 0.6": {"importance_weight": 0.6},
    "recency 0.3 + importance 0.3": {"recency_weight": 0.3, "importance_weight": 0.3},
}


def extend(data: EvalSet, rng: random.Random) -> tuple[dict[str, float], dict[str, float]]:
    """Add the temporal and what-matters memories and questions; each key's age in days
    and importance (keys not named: spread ages, importance 0.5)."""
    ages: dict[str, float] = {}
    importance: dict[str, float] = {}
    for topic, values in TOPICS.items():
        old, new = rng.sample(values, 2)
        slug = topic.replace(" ", "_")
        data.observations.append((f"user.{slug}.previous", f"Alex's {topic} was {old}", "fact"))
        data.observations.append((f"user.{slug}", f"Alex's {topic} is {new}", "fact"))
        ages[f"user.{slug}.previous"] = 280 + rng.random() * 60
        ages[f"user.{slug}"] = rng.random() * 10
        data.questions.append(
            Question(f"What is my {topic} these days?", "temporal", [f"user.{slug}"])
        )
    for i, (thing, vital, trivia) in enumerate(MATTERS):
        data.observations.append((f"alex.vital.{i}", vital, "fact"))
        data.observations.append((f"alex.trivia.{i}", trivia, "fact"))
        importance[f"alex.vital.{i}"] = 0.9
        importance[f"alex.trivia.{i}"] = 0.1
        data.questions.append(
            Question(f"What should I know about {thing}?", "what_matters", [f"alex.vital.{i}"])
        )
    return ages, importance


async def evaluate(
    settings: Settings, url: str, data: EvalSet, ages: dict[str, float], imp: dict[str, float]
) -> dict[str, dict[str, list[dict[str, float]]]]:
    embedder = await create_embedder(settings)
    migrate.upgrade(
        migrate.alembic_config(
            url, embedding_name=embedder.name, embedding_dimensions=embedder.dimensions
        )
    )
    await embedder.aclose()
    hs = await core.start(settings, database_url=url, redis_url=None, background=False)
    ns = "alex"
    try:
        batch: list[Observation] = []
        seen: set[str] = set()
        for key, value, memory_type in data.observations:
            if key in seen or len(batch) == 500:
                await hs.observer.observe(ns, batch, actor="eval", dedup=False)
                batch, seen = [], set()
            batch.append(
                Observation(
                    key=key, value=value, memory_type=memory_type, importance=imp.get(key, 0.5)
                )
            )
            seen.add(key)
        if batch:
            await hs.observer.observe(ns, batch, actor="eval", dedup=False)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "UPDATE long_term_memory SET last_observed = now() - "
                "make_interval(secs => (abs(hashtext(mem_key)) % 200) * 86400.0)"
            )
            for key, days in ages.items():
                conn.execute(
                    "UPDATE long_term_memory SET last_observed = now() - "
                    "make_interval(secs => %s * 86400.0) WHERE mem_key = %s",
                    (days, key),
                )
        scores: dict[str, dict[str, list[dict[str, float]]]] = {}
        for name, ranking in VARIANTS.items():
            await hs.policies.put(ns, Policy.model_validate({"ranking": ranking}), actor="eval")
            by_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
            for q in data.questions:
                hits = (await hs.recall.rank(ns, RecallRequest(q.text, k=max(KS)))).results
                m = metrics([h.row["key"] for h in hits], q.gold)
                by_kind[q.kind].append(m)
                by_kind["all"].append(m)
            scores[name] = by_kind
        await hs.policies.put(ns, Policy(), actor="eval")
        scores.update(await simulate_feedback(hs, url, ns, data))
        return scores
    finally:
        await hs.aclose()


async def simulate_feedback(
    hs: core.Hindsight, url: str, ns: str, data: EvalSet
) -> dict[str, dict[str, list[dict[str, float]]]]:
    """An agent asks each lexical question once, gets 10 memories and reports the gold ones
    used and the rest unused; then the paraphrase questions about the same memories are
    ranked with the access term counting retrievals (today), counting uses, or absent.
    Re-ranks each question's 20 candidates offline; the service's ranking is unchanged."""
    paraphrased = {tuple(q.gold) for q in data.questions if q.kind == "paraphrase"}
    for q in data.questions:
        if q.kind != "lexical" or tuple(q.gold) not in paraphrased:
            continue
        result = await hs.recall.recall(ns, RecallRequest(q.text, k=10), actor="eval")
        used = [r.row["id"] for r in result.results if r.row["key"] in q.gold]
        unused = [r.row["id"] for r in result.results if r.row["key"] not in q.gold]
        await hs.feedback.record(ns, result.recall_id, used, unused, actor="eval")
    await hs.recorder.flush()
    alpha = hs.settings.access_alpha
    terms = {
        "feedback: no access term": lambda a, u: 1.0,
        "feedback: access term on recalls (today)": lambda a, u: 1 + alpha * math.log1p(a),
        "feedback: access term on uses (α 0.1)": lambda a, u: 1 + alpha * math.log1p(u),
        "feedback: access term on uses (α 0.5)": lambda a, u: 1 + 0.5 * math.log1p(u),
    }
    out: dict[str, dict[str, list[dict[str, float]]]] = {n: defaultdict(list) for n in terms}
    with psycopg.connect(url) as conn:
        for q in data.questions:
            if q.kind != "paraphrase":
                continue
            hits = (await hs.recall.rank(ns, RecallRequest(q.text, k=max(KS)))).results
            ids = [h.row["id"] for h in hits]
            counts = {
                r[0]: (r[1], r[2])
                for r in conn.execute(
                    "SELECT memory_id, access_count, used_count FROM memory_access "
                    "WHERE memory_id = ANY(%s)",
                    (ids,),
                )
            }
            for name, term in terms.items():
                rescored = []
                for h in hits:
                    a, u = counts.get(h.row["id"], (0, 0))
                    base = h.score / (1 + alpha * math.log1p(h.row["access_count"]))
                    rescored.append((base * term(a, u), h.row["key"]))
                rescored.sort(key=lambda x: -x[0])
                m = metrics([key for _, key in rescored], q.gold)
                out[name]["paraphrase after feedback"].append(m)
    return out


def table(scores: dict[str, dict[str, list[dict[str, float]]]], kinds: list[str]) -> str:
    lines = [
        "| ranking | questions | R@5 | R@10 | R@20 | MRR |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for variant, by_kind in scores.items():
        for kind in kinds:
            rows = by_kind.get(kind, [])
            if rows:
                avg = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}
                lines.append(
                    f"| {variant} | {kind} ({len(rows)}) | {avg['r@5']:.3f} | "
                    f"{avg['r@10']:.3f} | {avg['r@20']:.3f} | {avg['mrr']:.3f} |"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--kinds",
        default="all,temporal,what_matters,paraphrase,lexical,paraphrase after feedback",
    )
    parser.add_argument("--out", default=str(RESULTS / "lifecycle.md"))
    args = parser.parse_args()
    data = build()
    ages, importance = extend(data, random.Random(14))
    with (
        tempfile.TemporaryDirectory(prefix="hs-lc-eval-") as tmp,
        embedded_postgres(Path(tmp) / "pg", owner=True) as server,
        database(server) as url,
    ):
        settings = Settings(data_dir=Path(tmp), api_key="x" * 16, dedup_threshold=0.0)
        scores = asyncio.run(evaluate(settings, url, data, ages, importance))
    out = (
        "# Lifecycle ranking factors\n\n"
        f"Built-in embedder; {len(data.final_keys)} memories, {len(data.questions)} questions "
        "(benchmarks/lifecycle_eval.py).\n\n" + table(scores, args.kinds.split(",")) + "\n"
    )
    print(out)
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text(out)


if __name__ == "__main__":
    main()
