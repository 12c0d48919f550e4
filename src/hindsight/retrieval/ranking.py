"""How recall turns candidates into a ranked, explained list. Pure: no I/O.

    score = relevance × confidence × min(1 + α · ln(1 + access_count), access_boost_max)
            × specificity^γ × lifecycle terms

where relevance fuses the two arms. `linear` fusion (the default) keeps their absolute
meaning, so a weak match stays weak however the other candidates look:
    relevance = (1 − w) · max(similarity, 0) + w · min(keyword, 1)
`rrf` (reciprocal rank fusion) uses only each candidate's rank in each arm, scaled so that
first in both arms is 1.

Specificity (0..1) is the mean IDF of the memory's own terms as a share of the highest IDF
the namespace has: a memory made of words most memories share ("haha, so true!", "take
care, talk soon!") says little whatever the query, one with words few memories hold says
something. Both arms favour short memories (cosine and BM25 normalise by length), so when
a query names little beyond a person or a month ("what did Mia do in May?") small talk
that mentions the name outranked the turn that said what happened; specificity undoes
that without favouring long memories (a mean, not a sum: "user.name: Ann" stays
specific). γ = 0 turns it off.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hindsight.retrieval.factors import LifecycleFactors, lifecycle_factor, lifecycle_terms

Fusion = Literal["linear", "rrf"]


@dataclass(frozen=True)
class RankingConfig:
    keyword_weight: float = 0.4
    access_alpha: float = 0.1
    # the most the access term may multiply relevance by (see `access_boost`)
    access_boost_max: float = 1.05
    fusion: Fusion = "linear"
    rrf_k: int = 60
    specificity_weight: float = 1.0


@dataclass(frozen=True)
class Ranked:
    row: dict[str, Any]
    score: float
    components: dict[str, Any]


def access_boost(access_count: int, alpha: float, ceiling: float = math.inf) -> float:
    """1 + α·ln(1 + access_count), at most `ceiling`. A memory can then pass only those
    less than `ceiling` times as relevant: accesses break near-ties, they do not outvote
    relevance (recall raises the count of whatever it returns, right or not, so over a
    sequence of questions an uncapped boost keeps returning what was returned before)."""
    return min(1.0 + alpha * math.log1p(max(access_count, 0)), max(ceiling, 1.0))


def specificity_factor(specificity: float | None, weight: float) -> float:
    """specificity^γ; 1 for a memory without terms (nothing to judge it by)."""
    if specificity is None or weight == 0:
        return 1.0
    return float(min(max(specificity, 0.0), 1.0) ** weight)


def merge_arms(
    by_vector: list[dict[str, Any]], by_keyword: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per candidate, marked with the arm(s) that found it."""
    merged: dict[Any, dict[str, Any]] = {}
    for row in by_vector:
        merged[row["id"]] = {**row, "from_vector": True, "from_keyword": False}
    for row in by_keyword:
        if row["id"] in merged:
            merged[row["id"]]["from_keyword"] = True
        else:
            merged[row["id"]] = {**row, "from_vector": False, "from_keyword": True}
    return list(merged.values())


def _ranks(rows: list[dict[str, Any]], field: str, eligible: str) -> dict[int, int]:
    """1-based rank of each eligible row by `field`, best first; keyed by the row object
    (id(row)): hashing a UUID runs Python code, and rank() looks rows up ~140 times."""
    pool = [r for r in rows if r[eligible] and r[field] > 0]
    # ties by id: UUIDs order as their text does
    pool.sort(key=lambda r: (-r[field], r["id"]))
    return {id(r): i for i, r in enumerate(pool, start=1)}


def relevance(
    similarity: float,
    keyword: float,
    vector_rank: int | None,
    keyword_rank: int | None,
    config: RankingConfig,
) -> float:
    w = config.keyword_weight
    if config.fusion == "rrf":
        best = 1.0 / (config.rrf_k + 1)
        total = 0.0
        if vector_rank is not None:
            total += (1 - w) / (config.rrf_k + vector_rank)
        if keyword_rank is not None:
            total += w / (config.rrf_k + keyword_rank)
        return total / best
    return (1 - w) * max(similarity, 0.0) + w * min(max(keyword, 0.0), 1.0)


def rank(
    rows: list[dict[str, Any]],
    config: RankingConfig,
    k: int,
    min_relevance: float = 0.0,
    factors: LifecycleFactors | None = None,
    explain: Mapping[str, Any] | None = None,
) -> list[Ranked]:
    """The best `k` candidates more relevant than `min_relevance`, with their score and
    every component of it (the lifecycle terms, see `factors`, when given; `explain`:
    what the caller adds about how the candidates were scored)."""
    vector_ranks = _ranks(rows, "similarity", "from_vector")
    keyword_ranks = _ranks(rows, "keyword", "from_keyword")
    scored = []
    for row in rows:
        rid = row["id"]
        rel = relevance(
            row["similarity"],
            row["keyword"],
            vector_ranks.get(id(row)),
            keyword_ranks.get(id(row)),
            config,
        )
        if rel <= min_relevance:
            continue
        boost = access_boost(row["access_count"], config.access_alpha, config.access_boost_max)
        specific = specificity_factor(row.get("specificity"), config.specificity_weight)
        score = rel * row["confidence"] * boost * specific
        if factors is not None:
            score *= lifecycle_factor(row, factors)
        # ties go to the lower id (UUIDs order as their text does, without making it)
        scored.append((-score, -row["similarity"], rid, rel, boost, specific, row))
    # components only for the k that are returned
    best = heapq.nsmallest(k, scored)
    ranked = []
    for neg_score, _, _, rel, boost, specific, row in best:
        terms = lifecycle_terms(row, factors)[1] if factors is not None else {}
        ranked.append(
            Ranked(
                row=row,
                score=-neg_score,
                components={
                    "similarity": round(row["similarity"], 6),
                    "keyword": round(min(max(row["keyword"], 0.0), 1.0), 6),
                    "relevance": round(rel, 6),
                    "confidence": row["confidence"],
                    "access_count": row["access_count"],
                    "access_boost": round(boost, 6),
                    "access_boost_max": config.access_boost_max,
                    "specificity": _rounded(row.get("specificity")),
                    "specificity_factor": round(specific, 6),
                    "vector_rank": vector_ranks.get(id(row)),
                    "keyword_rank": keyword_ranks.get(id(row)),
                    "fusion": config.fusion,
                    "keyword_weight": config.keyword_weight,
                    **(explain or {}),
                    **terms,
                },
            )
        )
    return ranked


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# A memory reached through the best hit of the first search scores this much of its
# second-search score, and never more than that of the hit it was reached through: it
# answers the question less directly than a first-hop match.
HOP_DISCOUNT = 0.9


def merge_hops(first: list[Ranked], second: list[Ranked], anchor: Ranked, k: int) -> list[Ranked]:
    """First-hop results, plus memories the second search (query + best hit) found that the
    first did not, each explained with `hop: 2` and the memory it was reached `via`."""
    seen = {r.row["id"] for r in first}
    merged = list(first)
    for r in second:
        if r.row["id"] in seen:
            continue
        merged.append(
            Ranked(
                row=r.row,
                score=min(r.score, anchor.score) * HOP_DISCOUNT,
                components={
                    **r.components,
                    "hop": 2,
                    "via": str(anchor.row["id"]),
                    "hop_discount": HOP_DISCOUNT,
                },
            )
        )
    merged.sort(key=lambda r: (-r.score, str(r.row["id"])))
    return merged[:k]
