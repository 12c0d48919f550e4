"""How a reranker's scores enter recall's ranking.

Recall ranks max(k, HINDSIGHT_RERANK_CANDIDATES) candidates as usual, the reranker scores
all of them, and its score becomes part of relevance, so the rule stays
    score = relevance × confidence × access_boost × specificity^γ × lifecycle terms
with
    relevance = (1 − w) · fused + w · rerank        (w = HINDSIGHT_RERANK_WEIGHT)
where `fused` is the two arms' relevance (`components.relevance_before_rerank`). Blending
into relevance rather than into the final score keeps confidence, accesses and the
lifecycle terms applying to the reranked relevance as they do without a reranker: a
quarantined or cold memory does not climb back just because it reads well.
"""

from __future__ import annotations

import logging
import math

from hindsight.errors import ProviderError, Unavailable
from hindsight.observability import metrics
from hindsight.rerank.base import Reranker
from hindsight.retrieval.ranking import Ranked
from hindsight.text import memory_text

log = logging.getLogger(__name__)

# Cross-encoders read about 512 tokens; a longer text only costs transfer and tokenising.
TEXT_MAX_CHARS = 2048


def unit_scores(scores: list[float]) -> list[float]:
    """The reranker's scores on 0..1. Scores already on 0..1 are kept as they are: a
    relevance probability keeps its absolute meaning, so a batch of poor matches stays poor
    (min-max over the batch would make the best of them 1 and stretch near-ties apart). A
    batch with any score outside 0..1 is taken for logits (a server answering raw scores)
    and put through a sigmoid, which keeps the reranker's order."""
    if all(0.0 <= s <= 1.0 for s in scores):
        return list(scores)
    return [1.0 / (1.0 + math.exp(-max(min(s, 60.0), -60.0))) for s in scores]


def combine(ranked: list[Ranked], rerank: list[float], weight: float) -> list[Ranked]:
    """The candidates with the reranker's share in their relevance, best first."""
    out = []
    for item, r in zip(ranked, rerank, strict=True):
        before = float(item.components["relevance"])
        after = (1.0 - weight) * before + weight * r
        # score is relevance times the other terms; rank() keeps only relevance > 0
        score = item.score * after / before if before > 0 else item.score
        out.append(
            Ranked(
                row=item.row,
                score=score,
                components={
                    **item.components,
                    "relevance": round(after, 6),
                    "relevance_before_rerank": round(before, 6),
                    "rerank": round(r, 6),
                    "rerank_weight": weight,
                },
            )
        )
    out.sort(key=lambda r: (-r.score, str(r.row["id"])))
    return out


async def reranked(
    reranker: Reranker, query: str, ranked: list[Ranked], k: int, weight: float
) -> tuple[list[Ranked], str | None]:
    """The best `k` after reranking; or, when the reranker fails, the best `k` of the
    ranking as it was and why. A recall without reranking beats no recall, and the
    response says it was not reranked."""
    if not ranked:
        return [], None
    texts = [memory_text(r.row["key"], r.row["value"])[:TEXT_MAX_CHARS] for r in ranked]
    try:
        scores = await reranker.rerank(query, texts)
        if len(scores) != len(texts):
            raise ProviderError(f"the reranker returned {len(scores)} scores for {len(texts)}")
    except (Unavailable, ProviderError) as exc:
        log.warning("recall without reranking: %s", exc.message)
        metrics.RECALL_RERANK_SKIPPED.inc()
        return ranked[:k], f"the results could not be reranked: {exc.message}"
    return combine(ranked, unit_scores(scores), weight)[:k], None
