"""Importance of the direct writes a client did not rate (`POST /memories`, `:batch`, MCP
`memory_store`): the configured LLM's rating when there is one, the built-in estimate
(`text.importance`) otherwise.

The rating is on the write path, so it is bounded: one chat request per write call (items
in chunks of `CHUNK`, asked at once), under `HINDSIGHT_WRITE_IMPORTANCE_TIMEOUT_SECONDS`.
Past the deadline, or when the model fails or skips an item, the built-in estimate stands
and the outcome says so (`importance_by` = builtin_fallback): a write never fails or waits
long because the LLM is slow or down.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence

from pydantic import BaseModel, Field

from hindsight.errors import ProviderError, Unavailable
from hindsight.llm import LLM
from hindsight.llm.prompts import IMPORTANCE_SYSTEM, importance_user
from hindsight.observability import metrics
from hindsight.services.observing import Observation

log = logging.getLogger(__name__)

CHUNK = 50  # items per prompt: a 1,000-item batch is 20 requests, asked concurrently


class _Rating(BaseModel):
    i: int
    importance: float = Field(ge=0.0, le=1.0)


class _Ratings(BaseModel):
    ratings: list[_Rating] = Field(default_factory=list)


async def rate(llm: LLM | None, items: Sequence[Observation], timeout: float) -> list[Observation]:
    """`items`, those with an estimated importance rated by `llm` (or marked as falling back
    to the built-in estimate when it does not answer within `timeout` seconds)."""
    todo = [p for p, o in enumerate(items) if o.importance_estimated]
    if llm is None or not todo:
        return list(items)
    chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
    rated: dict[int, float] = {}
    try:
        async with asyncio.timeout(timeout):
            # cancelling the gather at the deadline cancels every request still out
            answers = await asyncio.gather(
                *(
                    llm.complete_json(IMPORTANCE_SYSTEM, _prompt(items, c), _Ratings)
                    for c in chunks
                ),
                return_exceptions=True,
            )
    except TimeoutError:
        log.warning("importance rating took over %gs: the built-in estimate stands", timeout)
        answers = []
    for chunk, answer in zip(chunks, answers, strict=False):
        if isinstance(answer, ProviderError | Unavailable):
            log.warning("importance rating failed (%s): the built-in estimate stands", answer)
            continue
        if isinstance(answer, Exception):
            # a write never fails for its rating: the estimate stands, the log has the bug
            log.error("importance rating failed: the built-in estimate stands", exc_info=answer)
            continue
        if isinstance(answer, BaseException):
            raise answer
        wanted = set(chunk)
        rated.update((r.i, r.importance) for r in answer.ratings if r.i in wanted)
    out = list(items)
    for p in todo:
        if p in rated:
            out[p] = dataclasses.replace(items[p], importance=rated[p], importance_by="llm")
        else:
            out[p] = dataclasses.replace(items[p], importance_by="builtin_fallback")
    metrics.IMPORTANCE_RATINGS.labels("llm").inc(len(rated))
    metrics.IMPORTANCE_RATINGS.labels("builtin_fallback").inc(len(todo) - len(rated))
    return out


def _prompt(items: Sequence[Observation], chunk: list[int]) -> str:
    return importance_user(
        [
            {
                "i": p,
                "key": items[p].key,
                "memory_type": items[p].memory_type,
                "value": items[p].value,
            }
            for p in chunk
        ]
    )
