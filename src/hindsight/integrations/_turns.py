"""A framework's messages as recall's `context`: turns {role, content}, oldest first.

Takes what the frameworks hold without importing them: chat-API dicts ({"role": "user",
"content": "..."}, content possibly a list of parts with "text"), LangChain messages
(`.type` "human" / "ai" / "system" / "tool", `.content`), and (role, content) pairs.
Items that are no message (tool calls, reasoning items) and messages without text are left
out; so is all but the newest `limits.CONTEXT_TURNS_MAX`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hindsight import limits
from hindsight.client._options import Turn

_ROLE = re.compile(limits.ROLE_PATTERN)
# LangChain's message types, as chat roles
_ROLES = {"human": "user", "ai": "assistant"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if p]
        return " ".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    return ""


def _role_and_content(message: Any) -> tuple[Any, Any]:
    if isinstance(message, dict):
        return message.get("role"), message.get("content")
    if isinstance(message, tuple | list) and len(message) == 2:
        return message[0], message[1]
    return getattr(message, "role", None) or getattr(message, "type", None), getattr(
        message, "content", None
    )


def turns(messages: Iterable[Any]) -> list[Turn]:
    """The messages that carry text, as turns, oldest first."""
    out: list[Turn] = []
    for message in messages:
        role, content = _role_and_content(message)
        if not isinstance(role, str):
            continue
        role = _ROLES.get(role, role)
        text = _text(content)[: limits.QUERY_MAX_CHARS]
        if text and _ROLE.fullmatch(role):
            out.append({"role": role, "content": text})
    return out[-limits.CONTEXT_TURNS_MAX :]
