"""The ranking formula, without a database."""

from __future__ import annotations

import math
import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from hindsight.retrieval.factors import LifecycleFactors, lifecycle_factor, lifecycle_terms
from hindsight.retrieval.ranking import RankingConfig, access_boost, rank, relevance


def row(
    similarity: float,
    keyword: float = 0.0,
    confidence: float = 0.5,
    access_count: int = 0,
    *,
    vector: bool = True,
    kw: bool | None = None,
) -> dict:  # type: ignore[type-arg]
    return {
        "id": uuid.uuid4(),
        "similarity": similarity,
        "keyword": keyword,
        "confidence": confidence,
        "access_count": access_count,
        "from_vector": vector,
        "from_keyword": keyword > 0 if kw is None else kw,
    }


def test_score_is_relevance_times_confidence_times_access_boost() -> None:
    config = RankingConfig(keyword_weight=0.3, access_alpha=0.1, access_boost_max=2.0)
    (r,) = rank([row(0.8, 0.5, 0.7, 4)], config, 1)
    expected_rel = 0.7 * 0.8 + 0.3 * 0.5
    assert r.components["relevance"] == pytest.approx(expected_rel)
    assert r.components["access_boost"] == pytest.approx(1 + 0.1 * math.log(5))
    assert r.score == pytest.approx(expected_rel * 0.7 * (1 + 0.1 * math.log(5)))


def test_confidence_and_access_break_ties_in_similarity() -> None:
    config = RankingConfig()
    a, b, c = row(0.6, confidence=0.5), row(0.6, confidence=0.9), row(0.6, 0, 0.5, 50)
    ranked = rank([a, b, c], config, 3)
    assert [r.row["id"] for r in ranked] == [b["id"], c["id"], a["id"]]


def test_negative_similarity_and_out_of_range_keyword_are_clamped() -> None:
    (r,) = rank([row(-0.4, 1.7)], RankingConfig(keyword_weight=0.5), 1)
    assert r.components["relevance"] == pytest.approx(0.5)


def test_ranks_per_arm_only_count_candidates_of_that_arm() -> None:
    a = row(0.9, 0.0)
    b = row(0.2, 0.8, vector=False)
    ranked = {r.row["id"]: r.components for r in rank([a, b], RankingConfig(), 2)}
    assert ranked[a["id"]]["vector_rank"] == 1 and ranked[a["id"]]["keyword_rank"] is None
    assert ranked[b["id"]]["vector_rank"] is None and ranked[b["id"]]["keyword_rank"] == 1


def test_rrf_is_one_for_first_in_both_arms() -> None:
    config = RankingConfig(fusion="rrf", keyword_weight=0.3)
    assert relevance(0.1, 0.1, 1, 1, config) == pytest.approx(1.0)
    assert relevance(0.9, 0.0, 1, None, config) == pytest.approx(0.7)
    assert relevance(0.9, 0.0, 2, None, config) < relevance(0.9, 0.0, 1, None, config)


def test_access_boost_grows_slowly() -> None:
    assert access_boost(0, 0.1) == 1.0
    assert RankingConfig().access_boost_max == 1.05
    assert access_boost(1000, 0.1) == pytest.approx(1 + 0.1 * math.log(1001))
    assert access_boost(-5, 0.1) == 1.0


def test_k_limits_and_order_is_deterministic() -> None:
    rows = [row(0.5) for _ in range(5)]
    first = [r.row["id"] for r in rank(rows, RankingConfig(), 3)]
    assert len(first) == 3
    assert first == [r.row["id"] for r in rank(list(reversed(rows)), RankingConfig(), 3)]


def test_access_boost_breaks_near_ties_but_cannot_outvote_a_clear_relevance_gap() -> None:
    capped = RankingConfig(access_alpha=0.1, access_boost_max=1.05)
    relevant, popular = row(0.70), row(0.60, access_count=500)
    # uncapped, 500 earlier recalls lift a clearly less relevant memory to the top
    uncapped = RankingConfig(access_alpha=0.1, access_boost_max=math.inf)
    assert rank([relevant, popular], uncapped, 1)[0].row is popular
    top = rank([relevant, popular], capped, 2)
    assert top[0].row is relevant
    assert top[1].components["access_boost"] == pytest.approx(1.05)
    # within 5% of relevance, the memory recalled before still comes first
    near, used = row(0.62), row(0.60, access_count=5)
    assert rank([near, used], capped, 1)[0].row is used
    assert access_boost(5, 0.1, 1.05) == pytest.approx(1.05)
    assert access_boost(5, 0.1, 0.5) == 1.0  # a ceiling below 1 never penalises


def test_every_candidates_lifecycle_factor_is_the_product_its_components_show() -> None:
    """Candidates are scored by a shortcut (lifecycle_factor); the ones returned show their
    terms (lifecycle_terms). Under every policy the two must agree to the last bit, or a
    score could not be recomputed from its explanation."""
    rng = random.Random(7)
    now = datetime(2026, 12, 4, tzinfo=UTC)
    for _ in range(500):
        window = None
        if rng.random() < 0.5:
            start = now - timedelta(days=rng.uniform(0, 60))
            window = (start, start + timedelta(days=rng.uniform(1, 30)))
        f = LifecycleFactors(
            now=now,
            tier_weights={"active": 1.0, "cold": rng.choice([0.5, 0.2, 1.0])},
            recency_weight=rng.choice([0.0, rng.random()]),
            recency_tau_days=rng.uniform(1, 90),
            importance_weight=rng.choice([0.0, rng.random()]),
            trust_weight=rng.choice([0.0, rng.random()]),
            trust_levels={"tool": rng.random()},
            trust_default=rng.random(),
            time_window=window,
            time_weight=rng.random(),
        )
        seen = now - timedelta(days=rng.uniform(0, 90))
        candidate = {
            "status": rng.choice(["active", "cold"]),
            "importance": rng.random(),
            "source": rng.choice([None, "tool", "user"]),
            "last_observed": seen,
            "last_accessed": rng.choice([None, seen + timedelta(days=1)]),
            "created_at": seen,
            "occurred_at": rng.choice([None, now - timedelta(days=rng.uniform(0, 90))]),
        }
        assert lifecycle_factor(candidate, f) == lifecycle_terms(candidate, f)[0]
