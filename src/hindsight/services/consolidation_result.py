"""A consolidation job's result, added up over the windows it reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from hindsight.services.distill import Distilled
from hindsight.services.observing import Outcome


def outcome_json(o: Outcome) -> dict[str, Any]:
    out = {k: v for k, v in asdict(o).items() if v is not None}
    out["id"] = str(o.id)
    return out


@dataclass
class Progress:
    """What a job's windows have done so far, for its result."""

    from_step: int | None = None
    windows: int = 0
    steps_read: int = 0
    observed: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    summaries_written: int = 0
    existing_shown: int = 0

    def add(
        self,
        steps: list[dict[str, Any]],
        outcomes: list[Outcome],
        distilled: Distilled,
        skipped: list[dict[str, Any]],
        summaries_written: int,
    ) -> None:
        if self.from_step is None:
            self.from_step = steps[0]["step_index"]
        self.windows += 1
        self.steps_read += len(steps)
        # new lists, not in-place: a deadlock retry starts again from the last commit
        self.observed = [*self.observed, *(outcome_json(o) for o in outcomes)]
        self.dropped = [*self.dropped, *distilled.dropped]
        self.skipped = [*self.skipped, *skipped]
        self.summaries_written += summaries_written
        self.existing_shown += distilled.existing_shown

    def result(self, method: str, note: str, window_max_chars: int) -> dict[str, Any]:
        return {
            "method": method,
            "note": note,
            "observed": self.observed,
            "dropped": self.dropped,
            "skipped": self.skipped,
            "summaries_written": self.summaries_written,
            "existing_memories_shown": self.existing_shown,
            "steps_read": self.steps_read,
            "windows": self.windows,
            "window_max_chars": window_max_chars,
        }
