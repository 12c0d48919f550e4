"""The OpenAI Agents SDK's conversation memory on Hindsight working memory
(`pip install 'hindsight[openai-agents]'`).

>>> session = HindsightSession("chat-42", url="http://127.0.0.1:8080", api_key="hs_...")
>>> result = await Runner.run(agent, "What did I ask you yesterday?", session=session)

Each conversation item is one step of session `session_id` in `namespace`: the item as JSON
in `content`, its role (or type, for tool calls) as the step's role. The history therefore
lives in the service, not the process: a new `HindsightSession` with the same id, in any
process, continues the conversation, until the steps expire (`ttl_seconds` after the last
write; the server's default is 24 hours). The steps are an ordinary session, so ending it
consolidates what was said into long-term memory.

`recall` searches long-term memory with the conversation itself: the session's latest
items are the recall's `context`, so what the user said last counts most.

>>> found = await session.recall(k=5)  # or session.recall("and her birthday?", k=5)
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Unpack

from hindsight import limits
from hindsight.client import APIError
from hindsight.client._options import RecallOptions, StepFields
from hindsight.integrations._loop_client import LoopClient
from hindsight.integrations._turns import turns
from hindsight.wire.recall import RecallOut
from hindsight.wire.sessions import StepOut

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

__all__ = ["HindsightSession"]

# Marks steps this adapter wrote, whose content is an item as JSON.
ITEM_FORMAT = "openai-agents-item"
MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
_ROLE = re.compile(limits.ROLE_PATTERN)


class HindsightSession:
    """A `agents.memory.Session` kept in Hindsight working memory."""

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        *,
        url: str = "http://127.0.0.1:8080",
        api_key: str | None = None,
        namespace: str = "openai-agents",
        ttl_seconds: int | None = None,
        session_settings: SessionSettings | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
    ) -> None:
        self.session_id = session_id
        self.namespace = namespace
        self.ttl_seconds = ttl_seconds
        self.session_settings = session_settings
        self._client = LoopClient(url, api_key, timeout=timeout, max_retries=max_retries)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The newest `limit` items (every item when None), oldest first."""
        if limit is not None and limit <= 0:
            return []
        hs = self._client.get()
        steps: list[StepOut] = []
        before: int | None = None
        while True:
            wanted = limits.STEPS_RECENT_MAX
            if limit is not None:
                wanted = min(wanted, limit - len(steps))
            page = await hs.steps(self.namespace, self.session_id, recent=wanted, before=before)
            steps[:0] = page
            if len(page) < wanted or page[0].step_index == 0:
                break
            if limit is not None and len(steps) >= limit:
                break
            before = page[0].step_index
        return [_item(step) for step in steps]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        hs = self._client.get()
        for item in items:
            # one append at a time keeps the order; each carries an idempotency key, so a
            # retried append never adds an item twice
            fields: StepFields = {"role": _role(item), "metadata": {"format": ITEM_FORMAT}}
            if self.ttl_seconds:
                fields["ttl_seconds"] = self.ttl_seconds
            await hs.append_step(
                self.namespace, self.session_id, json.dumps(item, ensure_ascii=False), **fields
            )

    async def recall(
        self,
        query: str | None = None,
        *,
        recent: int = 10,
        namespace: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> RecallOut:
        """Long-term memories for the conversation so far: the session's newest `recent`
        messages are the recall's `context` (`query`, if given, is the latest turn), in
        `namespace` (default: the session's own, where ending the session keeps what was
        said). Tool calls and other non-message items are left out."""
        if "context" not in options and recent > 0:
            context = turns(await self.get_items(limit=recent))
            if context:
                options["context"] = context
        if not options.get("context") and query is None:
            raise ValueError("recall: the session has no messages yet; give a query")
        return await self._client.get().recall(namespace or self.namespace, query, **options)

    async def pop_item(self) -> TResponseInputItem | None:
        try:
            step = await self._client.get().pop_step(self.namespace, self.session_id)
        except APIError as exc:
            if exc.status == 404:
                return None
            raise
        return _item(step)

    async def clear_session(self) -> None:
        try:
            await self._client.get().delete_session(self.namespace, self.session_id)
        except APIError as exc:
            if exc.status != 404:
                raise

    async def aclose(self) -> None:
        await self._client.aclose()


def _role(item: Any) -> str:
    for candidate in (item.get("role"), item.get("type")):
        if isinstance(candidate, str) and _ROLE.fullmatch(candidate):
            return candidate
    return "item"


def _item(step: StepOut) -> TResponseInputItem:
    if step.metadata.get("format") == ITEM_FORMAT:
        item: TResponseInputItem = json.loads(step.content)
        return item
    # a step written by other means (REST, MCP) joins the conversation as a message
    role = step.role if step.role in MESSAGE_ROLES else "user"
    return {"role": role, "content": step.content}  # type: ignore[return-value,misc]
