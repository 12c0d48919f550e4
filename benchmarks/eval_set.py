"""What an evaluation set is: memories per namespace, and questions with their evidence."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Question:
    namespace: str
    text: str
    kind: str
    gold: list[str]  # keys of the memories that answer it


@dataclass
class Dataset:
    name: str = ""
    # (namespace, key, value, memory_type) in observation order; a later value of a key
    # supersedes the earlier one
    observations: list[tuple[str, str, str, str]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

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
