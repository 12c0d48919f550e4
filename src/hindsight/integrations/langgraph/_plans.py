"""What each LangGraph store operation asks of Hindsight, written once for both drivers.

A plan is a generator: it yields the SDK's `Call`s and is sent their results (or thrown their
`APIError`), and returns the operation's result. `HindsightStore.batch` drives plans with the
sync client and `abatch` with the async one, so the two can never disagree.
"""

from __future__ import annotations

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
from hindsight.api import schemas
from hindsight.client import _calls as c
from hindsight.integrations.langgraph import _paths as p

T = TypeVar("T")
Plan = Generator[c.Call, Any, T]

SOURCE = "langgraph"
PAGE_MAX = limits.LIST_LIMIT_MAX


def _parsed(
    memory: schemas.MemoryOut | schemas.RecallHit,
) -> tuple[tuple[str, ...], str, dict[str, Any]] | None:
    where = p.parse_key(memory.key)
    value = p.decode_value(memory.value)
    if where is None or value is None:
        return None
    return where[0], where[1], value


def _item(memory: schemas.MemoryOut) -> Item | None:
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


def _search_item(
    memory: schemas.MemoryOut | schemas.RecallHit, score: float | None
) -> SearchItem | None:
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


def _find(ns: str, namespace: tuple[str, ...], key: str) -> Plan[schemas.MemoryOut | None]:
    page: schemas.MemoryPage = yield c.list_page(ns, 1, None, {"key": p.memory_key(namespace, key)})
    return page.memories[0] if page.memories else None


def get(ns: str, op: GetOp) -> Plan[Item | None]:
    memory = yield from _find(ns, op.namespace, op.key)
    return _item(memory) if memory is not None else None


def put_many(ns: str, ops: Sequence[PutOp]) -> Plan[None]:
    memories = []
    for op in ops:
        if op.ttl is not None:
            raise NotImplementedError(
                "HindsightStore does not expire items (ttl): put without ttl, "
                "or forget stale items with Hindsight's forget policy"
            )
        assert op.value is not None
        memories.append(
            {
                "key": p.memory_key(op.namespace, op.key),
                "value": p.encode_value(op.value),
                "memory_type": "fact",
                "source": SOURCE,
                "tags": p.prefix_tags(op.namespace),
            }
        )
    for start in range(0, len(memories), limits.BATCH_MAX):
        # dedup off: an item is its own key even when another holds the same value
        yield c.observe_many(ns, memories[start : start + limits.BATCH_MAX], dedup=False)


def delete(ns: str, op: PutOp) -> Plan[None]:
    memory = yield from _find(ns, op.namespace, op.key)
    if memory is None:
        return
    try:
        yield c.delete(ns, str(memory.id))
    except c.APIError as exc:
        if exc.status != 404:  # deleted meanwhile: the outcome asked for
            raise


def search(ns: str, op: SearchOp) -> Plan[list[SearchItem]]:
    prefix = tuple(op.namespace_prefix)
    tag = p.prefix_tag(prefix)
    wanted = op.offset + op.limit
    if op.limit < 1:
        return []
    if op.query:
        # recall ranks at most K_MAX; with a filter, fetch them all and filter here
        k = limits.K_MAX if op.filter else min(limits.K_MAX, wanted)
        found: schemas.RecallOut = yield c.recall(ns, op.query, {"k": k, "tags": [tag]})
        hits = [
            item
            for hit in found.results
            if (item := _search_item(hit, hit.score)) is not None
            and _under(item.namespace, prefix)
            and p.matches_filter(item.value, op.filter)
        ]
        return hits[op.offset : wanted]
    items: list[SearchItem] = []
    skip = op.offset
    cursor = None
    size = PAGE_MAX if op.filter else max(1, min(PAGE_MAX, wanted))
    while True:
        page: schemas.MemoryPage = yield c.list_page(ns, size, cursor, {"tag": [tag]})
        for memory in page.memories:
            item = _search_item(memory, None)
            if item is None or not _under(item.namespace, prefix):
                continue
            if not p.matches_filter(item.value, op.filter):
                continue
            if skip:
                skip -= 1
                continue
            items.append(item)
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
        page: schemas.MemoryPage = yield c.list_page(
            ns, PAGE_MAX, cursor, {"tag": [p.prefix_tag(prefix)]}
        )
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
