"""`HindsightStore`: LangGraph's long-term memory store, kept in a Hindsight namespace."""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    InvalidNamespaceError,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from hindsight.client import APIError, Hindsight
from hindsight.client._call import Call
from hindsight.client._options import Turn
from hindsight.integrations._loop_client import LoopClient
from hindsight.integrations._turns import turns
from hindsight.integrations.langgraph import _plans
from hindsight.integrations.langgraph._plans import Plan

T = TypeVar("T")


class HindsightStore(BaseStore):
    """A `BaseStore` whose items are Hindsight memories in one namespace (`namespace`,
    default `langgraph`).

    >>> store = HindsightStore("http://127.0.0.1:8080", api_key="hs_...")
    >>> graph = builder.compile(store=store)

    `put` observes the item (the same value again reinforces it, a new value supersedes it
    and keeps the old one in the memory's history), `search(query=...)` ranks with recall
    (at most 100 results), `filter=` matches stored fields as LangGraph's own stores do.
    `index=` is ignored: the whole value is embedded and keyword-indexed.

    `search_conversation(prefix, messages)` ranks with recall over the conversation so far
    (LangChain messages, chat-API dicts or (role, content) pairs, oldest first): what the
    user said last counts most, the assistant's lines half.

    `put(..., ttl=minutes)` sets the memory's hard expiry (rounded up to whole seconds);
    after it the item is never returned and Hindsight's maintenance deletes it. A put
    without a ttl (and without `ttl_config["default_ttl"]`) makes an item that never
    expires. `get` and `search` push the expiry of the items they return to now + their
    ttl unless `refresh_ttl=False` (default: `ttl_config["refresh_on_read"]`, else True).
    `sweep_interval_minutes` is not used: the service's own maintenance sweeps.
    """

    supports_ttl = True

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        api_key: str | None = None,
        *,
        namespace: str = "langgraph",
        timeout: float = 30.0,
        max_retries: int = 3,
        ttl_config: TTLConfig | None = None,
    ) -> None:
        default_ttl = (ttl_config or {}).get("default_ttl")
        if default_ttl is not None:
            _plans.ttl_seconds(default_ttl)  # refuse a bad default now, not at the first put
        self.ttl_config = ttl_config
        self.namespace = namespace
        self._sync = Hindsight(url, api_key, timeout=timeout, max_retries=max_retries)
        self._async = LoopClient(url, api_key, timeout=timeout, max_retries=max_retries)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._drive(_plans.batch(self.namespace, _checked(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self._adrive(_plans.batch(self.namespace, _checked(ops)))

    def search_conversation(
        self,
        namespace_prefix: tuple[str, ...],
        messages: Iterable[Any],
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under `namespace_prefix` for the conversation so far (`messages`, oldest
        first; `query`, if given, is the latest turn), as `search` returns them.

        >>> store.search_conversation(("memories", user_id), state["messages"][-6:])
        """
        op, context = self._conversation_op(
            namespace_prefix, messages, query, filter, limit, offset, refresh_ttl
        )
        return self._drive(_plans.search(self.namespace, op, context))

    async def asearch_conversation(
        self,
        namespace_prefix: tuple[str, ...],
        messages: Iterable[Any],
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """`search_conversation` for async code."""
        op, context = self._conversation_op(
            namespace_prefix, messages, query, filter, limit, offset, refresh_ttl
        )
        return await self._adrive(_plans.search(self.namespace, op, context))

    def _conversation_op(
        self,
        namespace_prefix: tuple[str, ...],
        messages: Iterable[Any],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
    ) -> tuple[SearchOp, list[Turn]]:
        context = turns(messages)
        if not context and not query:
            raise ValueError("search_conversation: no message with text, and no query")
        if refresh_ttl is None:
            refresh_ttl = (self.ttl_config or {}).get("refresh_on_read", True)
        op = SearchOp(tuple(namespace_prefix), filter, limit, offset, query, refresh_ttl)
        (checked,) = _checked([op])
        assert isinstance(checked, SearchOp)
        return checked, context

    def _drive(self, plan: Plan[T]) -> T:
        try:
            call = next(plan)
            while True:
                try:
                    answer = self._sync._run(call)
                except APIError as exc:
                    call = plan.throw(exc)
                else:
                    call = plan.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result

    async def _adrive(self, plan: Plan[T]) -> T:
        client = self._async.get()
        try:
            call: Call = next(plan)
            while True:
                try:
                    answer = await client._run(call)
                except APIError as exc:
                    call = plan.throw(exc)
                else:
                    call = plan.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        self._sync.close()
        await self._async.aclose()

    def __enter__(self) -> HindsightStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _checked(ops: Iterable[Op]) -> list[Op]:
    """Ops handed to `batch` directly skip BaseStore's checks; the key mapping relies on
    labels being non-empty and free of periods, so check them here too."""
    ops = list(ops)
    for op in ops:
        if isinstance(op, PutOp) and not op.namespace:
            raise InvalidNamespaceError("an item's namespace cannot be empty")
        labels: tuple[Any, ...] = tuple(
            getattr(op, "namespace", None) or getattr(op, "namespace_prefix", None) or ()
        )
        for label in labels:
            if not isinstance(label, str) or not label or "." in label:
                raise InvalidNamespaceError(
                    f"namespace {labels!r}: labels must be non-empty strings without periods"
                )
    return ops
