"""What every reranker offers."""

from __future__ import annotations

from typing import Protocol


class Reranker(Protocol):
    """Scores how well each text answers the query, one score per text, in input order.

    Scores are on 0..1 (a relevance probability: TEI without raw scores, Cohere and Jina
    answer so, the local cross-encoder is read through a sigmoid); recall still guards
    against an endpoint that answers logits (see `hindsight.rerank.combine`).
    """

    @property
    def name(self) -> str: ...

    async def rerank(self, query: str, texts: list[str]) -> list[float]: ...

    async def aclose(self) -> None: ...
