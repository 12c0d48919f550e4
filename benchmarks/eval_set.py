"""What an evaluation set is: memories per namespace, and questions with their evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date


@dataclass
class Question:
    namespace: str
    text: str
    kind: str
    gold: list[str]  # keys of the memories that answer it
    asked_at: str | None = None  # when it is asked in the set's timeline (ISO 8601)
    # a question about what someone did in a month: who, and a day of that month
    month_of: tuple[str, date] | None = None


@dataclass
class Dataset:
    name: str = ""
    # (namespace, key, value, memory_type) in observation order; a later value of a key
    # supersedes the earlier one
    observations: list[tuple[str, str, str, str]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    # (namespace, key) -> when the memory's thing happened (ISO 8601), for sets with dates
    occurred: dict[tuple[str, str], str] = field(default_factory=dict)

    def final(self) -> dict[str, dict[str, str]]:
        """Each namespace's memories as they stand after every observation: key -> value."""
        out: dict[str, dict[str, str]] = {}
        for namespace, key, value, _ in self.observations:
            out.setdefault(namespace, {})[key] = value
        return out

    def kinds(self) -> list[str]:
        return sorted({q.kind for q in self.questions})


def curated() -> Dataset:
    """benchmarks/eval_data.py's set (one user's extracted memories) in this shape."""
    from benchmarks.eval_data import build

    old = build()
    return Dataset(
        "curated",
        [("alex", key, value, kind) for key, value, kind in old.observations],
        [Question("alex", q.text, q.kind, q.gold) for q in old.questions],
    )
