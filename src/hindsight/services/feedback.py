"""Access feedback: of what a recall returned, which memories the agent actually used.

Recall counts every memory it returns; feedback tells use from mere retrieval, stored per
memory (memory_access.used_count, unused_count) and per recall (recall_feedback), for the
people who curate the memory and for audits. Ranking does not read these counts (its access
term counts recalls): the real-data sets carry no feedback to measure a use term on, and a
simulated one (docs/concepts.md, Lifecycle) is not evidence enough to change the
score. The descriptions of REST, SDK and MCP say so; tests/test_policy.py pins it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.errors import InvalidInput, NotFound
from hindsight.services.access_recorder import AccessRecorder
from hindsight.stores import feedback as store


class FeedbackService:
    def __init__(self, pool: AsyncConnectionPool[Connection], recorder: AccessRecorder) -> None:
        self._pool = pool
        self._recorder = recorder

    async def record(
        self,
        namespace: str,
        recall_id: uuid.UUID,
        used: Sequence[uuid.UUID],
        unused: Sequence[uuid.UUID],
        *,
        actor: str,
    ) -> dict[str, Any]:
        both = set(used) & set(unused)
        if both:
            raise InvalidInput(
                f"used: {sorted(map(str, both))[0]} is also in unused; a memory is one or the other"
            )
        await self._recorder.flush()  # the recall's log entry may still be pending
        async with self._pool.connection() as conn, conn.transaction():
            returned = await store.returned_ids(conn, namespace, recall_id)
            if returned is None:
                raise NotFound(f"no recall {recall_id} in namespace {namespace!r}")
            allowed = set(returned)
            for name, ids in (("used", used), ("unused", unused)):
                stray = [str(i) for i in ids if i not in allowed]
                if stray:
                    raise InvalidInput(
                        f"{name}: {stray[0]} was not returned by recall {recall_id}; "
                        "give only ids from its results"
                    )
            verdicts = {i: True for i in used} | {i: False for i in unused}
            result = await store.record(conn, namespace, recall_id, verdicts, actor=actor)
            counts = await store.counts(conn, namespace, sorted(verdicts))
        return {
            "recall_id": recall_id,
            "recorded": result["recorded"],
            "memories": [
                {
                    "id": i,
                    "used": verdicts[i],
                    "used_count": int(counts[i]["used_count"]) if i in counts else 0,
                    "unused_count": int(counts[i]["unused_count"]) if i in counts else 0,
                }
                for i in sorted(verdicts)
            ],
        }
