"""Retroactive consolidation: merge near-duplicates that slipped in under different keys.

The rule is the write-time one (services.observe): a memory at least the dedup
threshold similar to another of the same type, and saying it in mostly the same words
(hindsight.text.twins), is the same claim; the more important one keeps it. Each run
checks a bounded number of memories, resuming where the last run stopped, so a large
namespace is covered over several passes at a steady cost.
"""

from __future__ import annotations

import uuid

from hindsight.db.pool import Connection
from hindsight.services.moves import Move
from hindsight.stores import lifecycle as lifecycle_store, merge as store
from hindsight.text.twins import same_words


async def merge_near_duplicates(
    conn: Connection,
    namespace: str,
    threshold: float,
    per_run: int,
    *,
    actor: str,
    dry_run: bool = False,
) -> list[Move]:
    """The merges done (a dry run: those the next run would do, nothing changed)."""
    if threshold <= 0:
        return []
    state = await lifecycle_store.state(conn, namespace)
    after = (state["merge_cursor"] if state else None) or uuid.UUID(int=0)
    moves: list[Move] = []
    async with conn.transaction():
        pairs, resume = await store.scan(conn, namespace, after, per_run, threshold)
        gone: set[uuid.UUID] = set()
        for pair in pairs:
            if pair["a"] in gone or pair["b"] in gone:
                continue
            if not same_words(pair["a_value"], pair["b_value"]):
                continue  # similar to the embedder, but not the same claim
            if dry_run:
                gone.add(pair["b"])
                moves.append(
                    Move(
                        namespace,
                        pair["b"],
                        pair["b_key"],
                        "merged",
                        "merge",
                        f"near-duplicate of {pair['a']} (similarity "
                        f"{float(pair['similarity']):.3f}); the less important is merged",
                    )
                )
                continue
            row = await store.merge_pair(
                conn, namespace, pair["a"], pair["b"], float(pair["similarity"]), actor
            )
            if row is None:
                continue
            gone.add(row["loser"])
            moves.append(
                Move(
                    namespace,
                    row["loser"],
                    row["loser_key"],
                    "merged",
                    "merge",
                    f"merged into {row['winner']} (key {row['winner_key']!r})",
                )
            )
        if not dry_run:
            await lifecycle_store.save_state(conn, namespace, merge_cursor=resume)
    return moves
