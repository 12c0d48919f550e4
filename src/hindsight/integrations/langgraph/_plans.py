"""What each LangGraph store operation asks of Hindsight, written once for both drivers.

A plan is a generator: it yields the SDK's `Call`s and is sent their results (or thrown their
`APIError`), and returns the operation's result. `HindsightStore.batch` drives plans with the
sync client and `abatch` with the async one, so the two can never disagree.

LangGraph's `ttl` (minutes) is the memory's hard expiry (`ttl_seconds`). The ttl itself is
also kept in the memory's metadata (`TTL_METADATA`): `expires_at` says when an item lapses,
but a read that refreshes it (`refresh_ttl`) must know for how long to extend it.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from typing import Any, TypeVar

from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from hindsight import limits
from hindsight.client import APIError, _calls as c
from hindsight.client._call import Call
from hindsight.client._options import RecallOptions, Turn
from hindsight.integrations.langgraph import _paths as p
from hindsight.wire.memories import MEMORY_TTL_MAX_SECONDS, MemoryOut, MemoryPage, ObserveResult
from hindsight.wire.recall import RecallHit, RecallOut

T = TypeVar("T")
Plan = Generator[Call, Any, T]

SOURCE = "langgraph"
PAGE_MAX = limits.LIST_LIMIT_MAX
TTL_METADATA = "langgraph_ttl_minutes"


def ttl_seconds(ttl: float) -> int:
    """LangGraph's ttl in minutes as Hindsight's whole `ttl_seconds`, rounded up so that an
    item never lapses before the time it was given (0.02 minutes: 2 s)."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl):
        raise ValueError(f"ttl must be a number of minutes (or None: no expiry), not {ttl!r}")
    if ttl <= 0:
        raise ValueError(f"ttl must be a positive number of minutes, not {ttl!r}")
    # round first: 0.1 * 60 is 6.000000000000001, which must not become 7 s
    seconds = max(1, math.ceil(round(ttl * 60, 6)))
    if seconds > MEMORY_TTL_MAX_SECONDS:
        raise ValueError(
            f"ttl {ttl!r} minutes is longer than Hindsight keeps an expiry "
            f"({MEMORY_TTL_MAX_SECONDS // 60} minutes): use None for no expiry"
        )
    return seconds


def _stored_ttl(memory: MemoryOut | RecallHit) -> float | None:
    """The ttl the item was put with; None when it had none (or the metadata was edited
    into something that is no ttl, which then only stops refreshes)."""
    ttl = memory.metadata.get(TTL_METADATA)
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        return None
    try:
        ttl_seconds(ttl)
    except ValueError:
        return None
    return float(ttl)


def _parsed(
    memory: MemoryOut | RecallHit,
) -> tuple[tuple[str, ...], str, dict[str, Any]] | None:
    where = p.parse_key(memory.key)
    value = p.decode_value(memory.value)
    if where is None or value is None:
        return None
    return where[0], where[1], value


def _item(memory: MemoryOut) -> Item | None:
    parsed = _parsed(memory)
    if parsed is None:
        return None
    namespace, key, value = parsed
    # last_observed: when a put last wrote the item (created, reinforced or superseded)
    return Item(
        value=value,
        key=key,
        namespace=namespace,
        created_at=memory.created_at,
        updated_at=memory.last_observed,
    )


def _search_item(memory: MemoryOut | RecallHit, score: float | None) -> SearchItem | None:
    parsed = _parsed(memory)
    if parsed is None:
        return None
    namespace, key, value = parsed
    return SearchItem(
        namespace=namespace,
        key=key,
        value=value,
        created_at=memory.created_at,
        updated_at=memory.last_observed,
        score=score,
    )


def _under(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    # the tag already selects the prefix; this guards against a hashed tag's collision
    return namespace[: len(prefix)] == prefix


def _find(ns: str, namespace: tuple[str, ...], key: str) -> Plan[MemoryOut | None]:
    page: MemoryPage = yield c.list_page(ns, 1, None, {"key": p.memory_key(namespace, key)})
    return page.memories[0] if page.memories else None


def _refresh(ns: str, memories: Sequence[MemoryOut | RecallHit]) -> Plan[None]:
    """Push the expiry of each memory read that was put with a ttl to now + that ttl.

    The read saw the item live, so extending it is what the read asked for, even if the
    expiry passes between the read and this PATCH (which then sets a new one all the same,
    unless maintenance deleted the memory meanwhile: the 404 below)."""
    for memory in memories:
        ttl = _stored_ttl(memory)
        if ttl is None:
            continue
        try:
            yield c.update(ns, str(memory.id), {"ttl_seconds": ttl_seconds(ttl)})
        except APIError as exc:
            if exc.status != 404:  # deleted meanwhile: nothing left to keep alive
                raise


def get(ns: str, op: GetOp) -> Plan[Item | None]:
    memory = yield from _find(ns, op.namespace, op.key)
    item = _item(memory) if memory is not None else None
    if item is not None and memory is not None and op.refresh_ttl:
        yield from _refresh(ns, [memory])
    return item


def _memory(op: PutOp) -> dict[str, Any]:
    assert op.value is not None
    memory: dict[str, Any] = {
        "key": p.memory_key(op.namespace, op.key),
        "value": p.encode_value(op.value),
        "memory_type": "fact",
        "source": SOURCE,
        "tags": p.prefix_tags(op.namespace),
        # always sent, null too: observing merges metadata, so a put without a ttl must
        # overwrite the ttl an earlier put left there, or reads would go on refreshing it
        "metadata": {TTL_METADATA: op.ttl},
    }
    if op.ttl is not None:
        memory["ttl_seconds"] = ttl_seconds(op.ttl)
    return memory


def put_many(ns: str, ops: Sequence[PutOp]) -> Plan[None]:
    memories = [_memory(op) for op in ops]  # all checked before anything is sent
    for start in range(0, len(memories), limits.BATCH_MAX):
        chunk = memories[start : start + limits.BATCH_MAX]
        # dedup off: an item is its own key even when another holds the same value
        results: list[ObserveResult] = yield c.observe_many(ns, chunk, dedup=False)
        yield from _clear_kept_expiry(ns, chunk, results)


def _clear_kept_expiry(
    ns: str, chunk: Sequence[dict[str, Any]], results: Sequence[ObserveResult]
) -> Plan[None]:
    """Observing a memory again without an expiry keeps the expiry it had, but LangGraph's
    put without a ttl replaces the item with one that never expires: clear what an earlier
    put may have set. (Clearing an expiry that is not there changes nothing, so it leaves
    no history entry.)

    Only the last put of each key in the chunk counts (observe applies them in order), and
    only one that found its memory already there: a created memory has no old expiry."""
    last = {memory["key"]: position for position, memory in enumerate(chunk)}
    for position in sorted(last.values()):
        if "ttl_seconds" in chunk[position] or results[position].outcome == "created":
            continue
        try:
            yield c.update(ns, str(results[position].id), {"expires_at": None})
        except APIError as exc:
            if exc.status != 404:  # deleted meanwhile: no expiry left to clear
                raise


def delete(ns: str, op: PutOp) -> Plan[None]:
    memory = yield from _find(ns, op.namespace, op.key)
    if memory is None:
        return
    try:
        yield c.delete(ns, str(memory.id))
    except APIError as exc:
        if exc.status != 404:  # deleted meanwhile: the outcome asked for
            raise


def search(ns: str, op: SearchOp, context: Sequence[Turn] = ()) -> Plan[list[SearchItem]]:
    """The op's items; with `context` (the conversation so far), ranked by recall over it
    and the op's query, if any."""
    found = yield from _found(ns, op, context)
    if op.refresh_ttl:
        yield from _refresh(ns, [memory for _, memory in found])
    return [item for item, _ in found]


# a search's item and the memory it was read from (which a refresh needs)
Found = tuple[SearchItem, MemoryOut | RecallHit]


def _found(ns: str, op: SearchOp, context: Sequence[Turn] = ()) -> Plan[list[Found]]:
    """The items a search returns, each with the memory it was read from."""
    prefix = tuple(op.namespace_prefix)
    tag = p.prefix_tag(prefix)
    wanted = op.offset + op.limit
    if op.limit < 1:
        return []
    if op.query or context:
        # recall ranks at most K_MAX; with a filter, fetch them all and filter here
        k = limits.K_MAX if op.filter else min(limits.K_MAX, wanted)
        options: RecallOptions = {"k": k, "tags": [tag]}
        if context:
            options["context"] = list(context)
        recalled: RecallOut = yield c.recall(ns, op.query or None, options)
        hits: list[Found] = [
            (item, hit)
            for hit in recalled.results
            if (item := _search_item(hit, hit.score)) is not None
            and _under(item.namespace, prefix)
            and p.matches_filter(item.value, op.filter)
        ]
        return hits[op.offset : wanted]
    items: list[Found] = []
    skip = op.offset
    cursor = None
    size = PAGE_MAX if op.filter else max(1, min(PAGE_MAX, wanted))
    while True:
        page: MemoryPage = yield c.list_page(ns, size, cursor, {"tag": [tag]})
        for memory in page.memories:
            item = _search_item(memory, None)
            if item is None or not _under(item.namespace, prefix):
                continue
            if not p.matches_filter(item.value, op.filter):
                continue
            if skip:
                skip -= 1
                continue
            items.append((item, memory))
            if len(items) >= op.limit:
                return items
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


def list_namespaces(ns: str, op: ListNamespacesOp) -> Plan[list[tuple[str, ...]]]:
    conditions = op.match_conditions or ()
    prefixes = [p.fixed_prefix(tuple(m.path)) for m in conditions if m.match_type == "prefix"]
    prefix = max(prefixes, key=len, default=())
    seen: set[tuple[str, ...]] = set()
    cursor = None
    while True:
        page: MemoryPage = yield c.list_page(ns, PAGE_MAX, cursor, {"tag": [p.prefix_tag(prefix)]})
        for memory in page.memories:
            parsed = p.parse_key(memory.key)
            if parsed is not None:
                seen.add(parsed[0])
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    namespaces = [
        n for n in seen if all(p.matches_path(n, tuple(m.path), m.match_type) for m in conditions)
    ]
    if op.max_depth is not None:
        namespaces = list({n[: op.max_depth] for n in namespaces})
    namespaces.sort()
    return namespaces[op.offset : op.offset + op.limit]


def batch(ns: str, ops: Sequence[Op]) -> Plan[list[Result]]:
    """Every op in order; consecutive puts go as one batch request."""
    results: list[Result] = []
    position = 0
    while position < len(ops):
        op = ops[position]
        if isinstance(op, PutOp) and op.value is not None:
            run = position
            while run < len(ops) and isinstance(ops[run], PutOp) and ops[run].value is not None:  # type: ignore[union-attr]
                run += 1
            yield from put_many(ns, ops[position:run])  # type: ignore[arg-type]
            results.extend([None] * (run - position))
            position = run
            continue
        if isinstance(op, PutOp):
            yield from delete(ns, op)
            results.append(None)
        elif isinstance(op, GetOp):
            results.append((yield from get(ns, op)))
        elif isinstance(op, SearchOp):
            results.append((yield from search(ns, op)))
        elif isinstance(op, ListNamespacesOp):
            results.append((yield from list_namespaces(ns, op)))
        else:
            raise TypeError(f"unknown store operation {op!r}")
        position += 1
    return results
