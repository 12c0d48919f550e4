"""The lifecycle's factors in recall's score. Pure: no I/O.

Each is a separate multiplicative term, so the score stays
    relevance × confidence × access_boost × tier_weight × recency_factor × importance_factor
and every term is shown in `components`:

- tier_weight: the policy's weight of the memory's status (active 1, cold 0.5).
- recency = exp(−age/τ), age = time since the last access or observation;
  recency_factor = 1 − w + w·recency (w = recency_weight, 0 by default: no effect).
- importance_factor = 1 − w + w·importance (w = importance_weight, 0 by default).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class LifecycleFactors:
    now: datetime
    tier_weights: Mapping[str, float] = field(default_factory=lambda: {"active": 1.0, "cold": 0.5})
    recency_weight: float = 0.0
    recency_tau_days: float = 30.0
    importance_weight: float = 0.0


def last_activity(row: Mapping[str, Any]) -> datetime:
    """The later of the last observation and the last access."""
    observed: datetime = row["last_observed"]
    accessed: datetime | None = row.get("last_accessed")
    return observed if accessed is None or accessed < observed else accessed


def recency(row: Mapping[str, Any], now: datetime, tau_days: float) -> float:
    age = max((now - last_activity(row)).total_seconds(), 0.0)
    return math.exp(-age / (tau_days * DAY_SECONDS))


def lifecycle_terms(row: Mapping[str, Any], f: LifecycleFactors) -> tuple[float, dict[str, Any]]:
    """The product of the lifecycle terms for one candidate, and each term for `components`."""
    tier = f.tier_weights.get(row["status"], 1.0)
    rec = recency(row, f.now, f.recency_tau_days)
    rec_factor = 1.0 - f.recency_weight + f.recency_weight * rec
    importance = float(row["importance"])
    imp_factor = 1.0 - f.importance_weight + f.importance_weight * importance
    return tier * rec_factor * imp_factor, {
        "status": row["status"],
        "tier_weight": tier,
        "recency": round(rec, 6),
        "recency_factor": round(rec_factor, 6),
        "importance": importance,
        "importance_factor": round(imp_factor, 6),
    }
