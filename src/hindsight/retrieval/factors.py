"""The lifecycle's factors in recall's score. Pure: no I/O.

Each is a separate multiplicative term, so the score stays
    relevance × confidence × access_boost × tier_weight × recency_factor × importance_factor
          × trust_factor × time_factor
and every term is shown in `components`:

- tier_weight: the policy's weight of the memory's status (active 1, cold 0.5).
- recency = exp(−age/τ), age = time since the last access or observation;
  recency_factor = 1 − w + w·recency (w = recency_weight, 0 by default: no effect).
- importance_factor = 1 − w + w·importance (w = importance_weight, 0 by default).
- trust = the policy's trust of the memory's source; trust_factor = 1 − w + w·trust
  (w = trust_weight, 0 by default: today's ranking unchanged until a policy asks).
- time = when the memory occurred (occurred_at, else created_at); only when the query named
  a time (a window read by `hindsight.text.timeexpr`): time_factor = 1 inside the window,
  1 − w outside (w = time_weight). A ranking factor, not a filter: a memory far more
  relevant than those inside the window still wins.
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
    trust_weight: float = 0.0
    trust_levels: Mapping[str, float] = field(default_factory=dict)
    trust_default: float = 0.7
    # [start, end) read from the query, if it named a time
    time_window: tuple[datetime, datetime] | None = None
    time_weight: float = 0.0

    def trust(self, source: str | None) -> float:
        if source is None:
            return self.trust_default
        return self.trust_levels.get(source, self.trust_default)


def last_activity(row: Mapping[str, Any]) -> datetime:
    """The later of the last observation and the last access."""
    observed: datetime = row["last_observed"]
    accessed: datetime | None = row.get("last_accessed")
    return observed if accessed is None or accessed < observed else accessed


def occurred(row: Mapping[str, Any]) -> datetime:
    """When the memory happened: its occurred_at, else when it was recorded."""
    moment: datetime | None = row.get("occurred_at")
    return moment if moment is not None else row["created_at"]


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
    trust = f.trust(row.get("source"))
    trust_factor = 1.0 - f.trust_weight + f.trust_weight * trust
    timed: dict[str, Any] = {}
    time_factor = 1.0
    if f.time_window is not None:
        moment = occurred(row)
        inside = f.time_window[0] <= moment < f.time_window[1]
        time_factor = 1.0 if inside else 1.0 - f.time_weight
        timed = {"time": moment.isoformat(), "time_factor": round(time_factor, 6)}
    return tier * rec_factor * imp_factor * trust_factor * time_factor, {
        "status": row["status"],
        "tier_weight": tier,
        "recency": round(rec, 6),
        "recency_factor": round(rec_factor, 6),
        "importance": importance,
        "importance_factor": round(imp_factor, 6),
        "trust": trust,
        "trust_factor": round(trust_factor, 6),
        **timed,
    }
