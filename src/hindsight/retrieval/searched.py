"""What recall's two arms search for: the query as one text, or a conversation's weighted
turns (`text.conversation`). Pure: no I/O.

For a conversation each arm searches all the turns at once, each by its weight:
- the vector arm with the weighted mean of the turns' embeddings (one embedding request
  for all of them). Embedding each turn kept the latest lines from being cut off or
  drowned by a long dialogue: MiniLM alone on MADial-Bench's English dialogues, R@5
  0.620 -> 0.630 and R@10 0.728 -> 0.792;
- the keyword arm with each term counted by the weights of the turns that hold it, and
  scored as a share of the memory's BM25 mass rather than the query's (`stores.search`).
Both are one statement each, as for a question. Fusing one search per turn instead (the
best turn's score) lost: R@5 0.687 -> 0.565 with MiniLM, and 0.490 -> 0.448 English
built-in (measured with the weights below, benchmarks/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hindsight.text.conversation import Turn, WeightedTurn, is_user, parse, weighted


@dataclass(frozen=True)
class Searched:
    # (text, weight), oldest first; one part with weight 1 for a plain query
    parts: tuple[tuple[str, float], ...]
    # the conversation's turns, when the arms search one
    turns: tuple[WeightedTurn, ...] = ()
    # the turns were read from the query text (not given as `context`)
    from_query: bool = False

    @classmethod
    def plain(cls, text: str) -> Searched:
        return cls(((text, 1.0),))

    @property
    def conversation(self) -> bool:
        return bool(self.turns)

    @property
    def text(self) -> str:
        return "\n".join(text for text, _ in self.parts)

    @property
    def time_text(self) -> str:
        """Where a time the search is about is read: a conversation's latest user turn (a
        date said three turns ago is no window to rank by), else the query."""
        for turn in reversed(self.turns):
            if is_user(turn.role):
                return turn.content
        return self.text if not self.turns else ""

    def plus(self, text: str) -> Searched:
        """The search with one more text of full weight (a second hop's anchor)."""
        if not self.turns:
            return Searched.plain(f"{self.text} {text}")
        return Searched(
            (*self.parts, (text, 1.0)), (*self.turns, WeightedTurn("memory", text, 1.0))
        )

    def explained(self) -> dict[str, Any] | None:
        """The turns searched and their weights, for the response and the recall log."""
        if not self.turns:
            return None
        return {
            "turns": [
                {"role": t.role, "weight": t.weight, "content": t.content} for t in self.turns
            ],
            "from_query": self.from_query,
        }


def searched(query: str | None, context: Sequence[Turn], conversation: bool) -> Searched:
    """The search for a recall's query and context. With `conversation` on, turns (the
    context, then the query: read as a transcript when it is one, else as the latest user
    turn) are searched as a conversation when there are two or more that say something;
    otherwise everything is one text, context first."""
    turns = list(context)
    from_query = False
    if query:
        parsed = parse(query) if conversation else None
        from_query = parsed is not None
        turns += parsed or [Turn("user", query)]
    if conversation and len(turns) >= 2:
        kept = weighted(turns)
        if len(kept) >= 2:
            return Searched(tuple((t.content, t.weight) for t in kept), tuple(kept), from_query)
        if kept:
            return Searched.plain(kept[0].content)
    return Searched.plain("\n".join(t.content for t in turns))


def combined(vectors: Sequence[npt.NDArray[np.float32]], weights: Sequence[float]) -> Any:
    """The weighted mean direction of unit vectors (unit length itself)."""
    total = np.zeros_like(vectors[0], dtype=np.float32)
    for vector, weight in zip(vectors, weights, strict=True):
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            total += np.float32(weight) * vector / norm
    norm = float(np.linalg.norm(total))
    return total / norm if norm > 0 else vectors[-1]
