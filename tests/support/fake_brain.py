"""A deterministic stand-in for an LLM's judgement, behind the fake OpenAI server.

Distillation: every "my <thing> is <value>" in the conversation becomes the memory
`user.<thing>` = <value>; the action follows the existing memories shown in the prompt
(same value: reinforce, other value: update, unknown key: new). "hello"/"thanks" lines
become a greeting memory and "trivia:" lines a low-importance one, so the service's own
filters can be seen dropping them. Summaries: "summary of step N".
"""

from __future__ import annotations

import json
import re
from typing import Any

_FACT = re.compile(r"my ([a-z][a-z ]*?) is ([^.!?\n]+)", re.IGNORECASE)


def _user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def distill(body: dict[str, Any]) -> str:
    text = _user_text(body)
    existing_json, conversation = text.split("\n\nConversation:\n", 1)
    existing = {m["key"]: m["value"] for m in json.loads(existing_json.split("\n", 1)[1])}
    memories = []
    for line in conversation.splitlines():
        content = line.split("] ", 1)[-1]
        for thing, value in _FACT.findall(content):
            key = "user." + thing.strip().replace(" ", "_").lower()
            value = value.strip()
            action = "new"
            if key in existing:
                action = "reinforce" if existing[key] == value else "update"
            memories.append(
                {
                    "action": action,
                    "key": key,
                    "value": value,
                    "memory_type": "preference" if "favorite" in key else "fact",
                    "importance": 0.8,
                    "tags": ["chat"],
                }
            )
        if re.match(r"^(hello|hi|thanks)\b", content, re.IGNORECASE):
            memories.append(
                {
                    "action": "new",
                    "key": "conversation.greeting",
                    "value": content.strip(),
                    "memory_type": "fact",
                    "importance": 0.9,
                }
            )
        if content.lower().startswith("trivia:"):
            memories.append(
                {
                    "action": "new",
                    "key": "trivia",
                    "value": content[7:].strip(),
                    "memory_type": "fact",
                    "importance": 0.1,
                }
            )
    return json.dumps({"memories": memories})


def summarize(body: dict[str, Any]) -> str:
    indexes = [int(i) for i in re.findall(r"^step (\d+) ", _user_text(body), re.MULTILINE)]
    return json.dumps(
        {"summaries": [{"step_index": i, "summary": f"summary of step {i}"} for i in indexes]}
    )


def answer(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if "long-term memory" in system:
        return distill(body)
    if "short summaries" in system:
        return summarize(body)
    return "{}"
